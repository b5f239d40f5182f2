#include "cli/config_file.hpp"

#include <CLI/CLI.hpp>
#include <fstream>
#include <memory>
#include <set>

namespace skewscope {
namespace {

std::string where(const std::string& path, const std::string& key) { return path + ": " + key + ": "; }

}  // namespace

void apply_config_file(CLI::App& command, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CLI::FileError(path + ": cannot be read");
  // CLI11's own TOML/INI reader. Its default splits keys at '.', which would turn
  // `web.config.file` into sections; no flag name holds a '/', so that separates nothing.
  CLI::ConfigTOML reader;
  reader.parentSeparator('/');
  std::vector<CLI::ConfigItem> items;
  try {
    items = reader.from_config(in);
  } catch (const CLI::ParseError& e) {
    throw CLI::ConfigError(path + ": " + e.what());
  }
  // What the command line gave wins; a key the file repeats adds values only to a repeatable flag.
  std::set<const CLI::Option*> from_command_line, from_file;
  for (const CLI::Option* option : command.get_options())
    if (option->count() > 0) from_command_line.insert(option);
  for (const CLI::ConfigItem& item : items) {
    // Section markers: the file is flat, the same names as the flags.
    if (item.name == "++" || item.name == "--" || !item.parents.empty())
      throw CLI::ConfigError(where(path, item.fullname()) +
                             "sections are not used; write the flags' names at top level");
    if (item.name == "config") throw CLI::ConfigError(where(path, "config") + "a config file cannot name another");
    CLI::Option* option = command.get_option_no_throw("--" + item.name);
    if (option == nullptr || !option->get_configurable())
      throw CLI::ConfigError(where(path, item.name) + "no such option of `" + command.get_name() + "` (see --help)");
    if (from_command_line.count(option) != 0) continue;
    // CLI11's reader merges a key's repeated lines into one item: count values, not lines.
    const bool single = option->get_items_expected_max() <= 1;
    if (single && (!from_file.insert(option).second || item.inputs.size() > 1))
      throw CLI::ConfigError(where(path, item.name) + "takes one value (given twice, or as a list)");
    try {
      if (option->get_expected_min() == 0) {
        // A flag: true/false (or 1/0, on/off, yes/no) as CLI11 reads flag values.
        option->add_result(option->get_flag_value(item.name, reader.to_flag(item)));
      } else {
        option->add_result(item.inputs);
      }
      option->run_callback();
    } catch (const CLI::ParseError& e) {
      throw CLI::ConversionError(where(path, item.name) + e.what());
    }
  }
}

void add_config_file_option(CLI::App& command) {
  auto path = std::make_shared<std::string>();
  command
      .add_option("--config", *path,
                  "read options from this TOML file; keys are the flags' names, the command line wins")
      ->configurable(false);
  command.final_callback([&command, path] {
    if (!path->empty()) apply_config_file(command, *path);
  });
}

}  // namespace skewscope
