#include "api/web_config.hpp"

#include <crypt.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace skewscope {
namespace {

using ConfigResult = Result<WebConfig>;

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<std::string>::fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return Result<std::string>::ok(text.str());
}

Status unknown_key(const YAML::Node& map, const std::set<std::string>& known, const std::string& where) {
  for (const auto& entry : map) {
    auto key = entry.first.as<std::string>();
    if (!known.count(key))
      return Status::fail(where + key + " is not supported (supported: cert_file, key_file, basic_auth_users)");
  }
  return Status::ok();
}

bool is_bcrypt(const std::string& hash) {
  return hash.size() == 60 && (hash.rfind("$2a$", 0) == 0 || hash.rfind("$2b$", 0) == 0 || hash.rfind("$2y$", 0) == 0);
}

}  // namespace

bool password_matches(const std::string& password, const std::string& bcrypt_hash) {
  crypt_data data{};
  const char* computed = crypt_r(password.c_str(), bcrypt_hash.c_str(), &data);
  if (computed == nullptr || computed[0] == '*' || bcrypt_hash.size() != std::char_traits<char>::length(computed))
    return false;
  unsigned char differ = 0;  // constant time over the hash length
  for (std::size_t i = 0; i < bcrypt_hash.size(); ++i)
    differ |= static_cast<unsigned char>(computed[i] ^ bcrypt_hash[i]);
  return differ == 0;
}

ConfigResult parse_web_config(const std::string& yaml_text, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return ConfigResult::fail(std::string("not YAML: ") + e.what());
  }
  if (root.IsNull()) return ConfigResult::ok({});
  if (!root.IsMap()) return ConfigResult::fail("the top level must be a map");
  try {
    if (Status e = unknown_key(root, {"tls_server_config", "basic_auth_users"}, ""); !e)
      return ConfigResult::fail(e.error);
    WebConfig config;
    if (auto tls = root["tls_server_config"]; tls && !tls.IsNull()) {
      if (!tls.IsMap()) return ConfigResult::fail("tls_server_config must be a map");
      if (Status e = unknown_key(tls, {"cert_file", "key_file"}, "tls_server_config."); !e)
        return ConfigResult::fail(e.error);
      if (!tls["cert_file"] || !tls["key_file"])
        return ConfigResult::fail("tls_server_config needs cert_file and key_file");
      auto resolve = [&](const std::string& p) { return p.empty() || p.front() == '/' ? p : base_dir + "/" + p; };
      auto cert = read_file(resolve(tls["cert_file"].as<std::string>()));
      if (!cert) return ConfigResult::fail("tls_server_config: " + cert.error);
      auto key = read_file(resolve(tls["key_file"].as<std::string>()));
      if (!key) return ConfigResult::fail("tls_server_config: " + key.error);
      config.cert_pem = std::move(*cert);
      config.key_pem = std::move(*key);
      if (config.cert_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos)
        return ConfigResult::fail("tls_server_config.cert_file is not a PEM certificate");
      if (config.key_pem.find("PRIVATE KEY-----") == std::string::npos)
        return ConfigResult::fail("tls_server_config.key_file is not a PEM private key");
    }
    if (auto users = root["basic_auth_users"]; users && !users.IsNull()) {
      if (!users.IsMap()) return ConfigResult::fail("basic_auth_users must map user names to bcrypt hashes");
      for (const auto& entry : users) {
        auto user = entry.first.as<std::string>();
        auto hash = entry.second.as<std::string>();
        if (user.empty() || user.find(':') != std::string::npos)
          return ConfigResult::fail("basic_auth_users: user name '" + user + "' is empty or has a ':'");
        if (!is_bcrypt(hash)) return ConfigResult::fail("basic_auth_users." + user + ": not a bcrypt hash ($2y$...)");
        config.basic_auth_users[user] = hash;
      }
    }
    return ConfigResult::ok(std::move(config));
  } catch (const YAML::Exception& e) {
    return ConfigResult::fail(std::string("unexpected value: ") + e.what());
  }
}

ConfigResult load_web_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return ConfigResult::fail("--web.config.file: " + text.error);
  auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  ConfigResult parsed = parse_web_config(*text, dir);
  if (!parsed) parsed.error = "--web.config.file " + path + ": " + parsed.error;
  return parsed;
}

}  // namespace skewscope
