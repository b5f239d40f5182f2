// --web.config.file: TLS and basic auth for the HTTP endpoint, in the file format of the
// Prometheus exporters (exporter-toolkit), so the same file and the same scrape config work:
//
//   tls_server_config:
//     cert_file: server.crt        # PEM; relative paths are relative to this file
//     key_file: server.key
//   basic_auth_users:
//     prometheus: $2y$10$...        # bcrypt hash, e.g. htpasswd -nBC 10 "" | tr -d ':\n'
//
// Only these keys are supported; any other key is an error (not silently ignored), as the
// exporters reject unknown keys too.
#pragma once

#include <map>
#include <string>

#include "skewscope/result.hpp"

namespace skewscope {

struct WebConfig {
  std::string cert_pem;  // empty: plain HTTP
  std::string key_pem;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash; empty: no auth
  bool tls() const { return !cert_pem.empty(); }
};

Result<WebConfig> load_web_config(const std::string& path);
// base_dir resolves relative cert_file/key_file paths.
Result<WebConfig> parse_web_config(const std::string& yaml_text, const std::string& base_dir);

// bcrypt check (libcrypt). Slow by design (tens of ms at cost 10): callers must budget it.
bool password_matches(const std::string& password, const std::string& bcrypt_hash);

}  // namespace skewscope
