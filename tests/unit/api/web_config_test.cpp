#include <crypt.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "api/basic_auth.hpp"
#include "api/web_config.hpp"

using namespace skewscope;

namespace {

std::string bcrypt_hash(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  REQUIRE(crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt) != nullptr);  // cost 4: fast tests
  crypt_data data{};
  return crypt_r(password.c_str(), salt, &data);
}

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/skewscope-webcfg.XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path + "/" + name) << text; }
};

}  // namespace

TEST_CASE("web config: the exporter-toolkit keys, relative paths from the file's folder") {
  TempDir dir;
  dir.write("c.pem", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
  dir.write("k.pem", "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n");
  const std::string hash = bcrypt_hash("secret");
  dir.write("web.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: " + dir.path +
                           "/k.pem\nbasic_auth_users:\n  prom: " + hash + "\n");
  auto config = load_web_config(dir.path + "/web.yml");
  REQUIRE_MESSAGE(config, config.error);
  CHECK(config->tls());
  CHECK(config->key_pem.find("PRIVATE KEY") != std::string::npos);
  CHECK(config->basic_auth_users.at("prom") == hash);
  CHECK(password_matches("secret", hash));
  CHECK_FALSE(password_matches("Secret", hash));
  CHECK_FALSE(password_matches("secret", "$2b$04$not-a-real-hash"));
}

TEST_CASE("web config: empty file is plain HTTP without auth; bad input is a clear error") {
  auto empty = parse_web_config("", ".");
  REQUIRE(empty);
  CHECK_FALSE(empty->tls());
  CHECK(empty->basic_auth_users.empty());
  CHECK(parse_web_config("http_server_config:\n  http2: false\n", ".")
            .error.find("http_server_config is not supported") != std::string::npos);
  CHECK(parse_web_config("tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n", ".")
            .error.find("tls_server_config.client_auth_type is not supported") != std::string::npos);
  CHECK(parse_web_config("tls_server_config:\n  cert_file: a\n", ".").error.find("needs cert_file and key_file") !=
        std::string::npos);
  CHECK(parse_web_config("tls_server_config:\n  cert_file: /nonexistent/a\n  key_file: b\n", ".")
            .error.find("cannot read /nonexistent/a") != std::string::npos);
  CHECK(parse_web_config("basic_auth_users:\n  prom: plaintext\n", ".").error.find("not a bcrypt hash") !=
        std::string::npos);
  CHECK(parse_web_config("basic_auth_users: [a, b]\n", ".").error.find("must map user names") != std::string::npos);
  CHECK(parse_web_config("a: [unclosed\n", ".").error.find("not YAML") != std::string::npos);
  CHECK(load_web_config("/nonexistent/web.yml").error == "--web.config.file: cannot read /nonexistent/web.yml");
}

TEST_CASE("basic auth: unknown users and bad passwords denied, a verified password remembered") {
  int slow_checks = 0;
  BasicAuth auth({{"prom", "HASH"}}, [&](const std::string& password, const std::string& hash) {
    ++slow_checks;
    return hash == "HASH" && password == "right";
  });
  CHECK(auth.enabled());
  CHECK(auth.check(nullptr, nullptr, 0) == BasicAuth::Verdict::denied);
  CHECK(auth.check("nobody", "right", 0) == BasicAuth::Verdict::denied);
  CHECK(slow_checks == 0);  // unknown users cost nothing
  CHECK(auth.check("prom", "wrong", 0) == BasicAuth::Verdict::denied);
  CHECK(auth.check("prom", "right", 0) == BasicAuth::Verdict::allowed);
  CHECK(slow_checks == 2);
  for (int i = 0; i < 100; ++i) CHECK(auth.check("prom", "right", 0) == BasicAuth::Verdict::allowed);
  CHECK(slow_checks == 2);  // remembered
  CHECK(auth.check("prom", "righ", 0) == BasicAuth::Verdict::denied);
}

TEST_CASE("basic auth: at most kChecksPerSecond slow checks a second, the rest is busy") {
  int slow_checks = 0;
  BasicAuth auth({{"prom", "HASH"}}, [&](const std::string&, const std::string&) {
    ++slow_checks;
    return false;
  });
  int busy = 0;
  for (int i = 0; i < 50; ++i) busy += auth.check("prom", "guess", 5'000'000'000) == BasicAuth::Verdict::busy;
  CHECK(slow_checks == BasicAuth::kChecksPerSecond);
  CHECK(busy == 50 - BasicAuth::kChecksPerSecond);
  CHECK(auth.check("prom", "guess", 6'000'000'000) == BasicAuth::Verdict::denied);  // a new second, a new budget
  CHECK(slow_checks == BasicAuth::kChecksPerSecond + 1);
  BasicAuth none({}, [](const std::string&, const std::string&) { return true; });
  CHECK_FALSE(none.enabled());
}
