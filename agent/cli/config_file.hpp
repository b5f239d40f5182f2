// `skewscope agent --config FILE`: the agent's flags read from a file, so that packages and
// Kubernetes ConfigMaps need no long command line. The file is TOML (or INI) as CLI11 reads it;
// each key is a flag's long name without the dashes (`listen = "0.0.0.0:9477"`,
// `domain = ["a=netns:/run/netns/a", "b=cgroup:/sys/fs/cgroup/b"]`, `only-domains = true`,
// `web.config.file = "/etc/skewscope/web.yml"`). A flag given on the command line wins over the
// file. An unknown key, a section, a bad value or an unreadable file is a usage error.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace skewscope {

// Adds --config FILE to `command` and reads the file once the command line is parsed (so the
// command line's own values are known and win). Errors are thrown as CLI::ParseError.
void add_config_file_option(CLI::App& command);

// Applies the file to the options of `command` that the command line left unset.
// Throws CLI::ParseError (a CLI::FileError or CLI::ConfigError) naming the file and the key.
void apply_config_file(CLI::App& command, const std::string& path);

}  // namespace skewscope
