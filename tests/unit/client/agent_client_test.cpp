#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "client/agent_client.hpp"

using namespace skewscope;

namespace {

// A directory of its own under the system's temp dir, removed with the fixture.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "agent_client_test.XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    auto file = path / name;
    std::ofstream(file) << text;
    chmod(file.c_str(), mode);
    return file.string();
  }
};

const char* no_environment(const char*) { return nullptr; }

const char* pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

}  // namespace

TEST_CASE("agent URL without userinfo is kept as given") {
  auto url = split_agent_url("https://agent-1.example:9477");
  REQUIRE(url);
  CHECK(url->url == "https://agent-1.example:9477");
  CHECK_FALSE(url->user);
  CHECK_FALSE(url->password);
}

TEST_CASE("agent URL userinfo is taken out and percent-decoded") {
  auto url = split_agent_url("https://pro%6D:p%40ss%3Aw0rd%25@127.0.0.1:9477/x");
  REQUIRE(url);
  CHECK(url->url == "https://127.0.0.1:9477/x");
  CHECK(*url->user == "prom");
  CHECK(*url->password == "p@ss:w0rd%");
  // An unescaped '@' in the password: the last '@' ends the userinfo.
  auto lenient = split_agent_url("http://u:a@b@[::1]:9477");
  REQUIRE(lenient);
  CHECK(lenient->url == "http://[::1]:9477");
  CHECK(*lenient->password == "a@b");
  CHECK(*split_agent_url("http://u:@h:1")->password == "");
}

TEST_CASE("bad agent URLs are refused without echoing the password") {
  auto bad_escape = split_agent_url("https://prom:s3cret%zz@127.0.0.1:9477");
  REQUIRE_FALSE(bad_escape);
  CHECK(bad_escape.error.find("bad percent escape in the URL's password") != std::string::npos);
  CHECK(bad_escape.error.find("s3cret") == std::string::npos);
  CHECK_FALSE(split_agent_url("https://prom:s3cret%4@127.0.0.1:9477"));
  auto no_password = split_agent_url("https://prom@127.0.0.1:9477");
  REQUIRE_FALSE(no_password);
  CHECK(no_password.error.find("no password") != std::string::npos);
  CHECK_FALSE(split_agent_url("https://:pw@127.0.0.1:9477"));
  CHECK(split_agent_url("127.0.0.1:9477")->url == "http://127.0.0.1:9477");  // no scheme: http
  CHECK(split_agent_url("ftp://127.0.0.1:9477").error.find("neither http nor https") != std::string::npos);
}

TEST_CASE("credentials come from the URL or from the flags, once and complete") {
  TempDir dir;
  AgentConnectionOptions options;
  options.basic_auth_user = "prom";
  auto no_file = AgentClient::create("https://127.0.0.1:9477", options, no_environment);
  REQUIRE_FALSE(no_file);
  CHECK(no_file.error.find("--basic-auth-user needs --basic-auth-password-file") != std::string::npos);

  options.basic_auth_password_file = dir.write("password", "s3cret\n", 0600);
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment));
  auto twice = AgentClient::create("https://prom:s3cret@127.0.0.1:9477", options, no_environment);
  REQUIRE_FALSE(twice);
  CHECK(twice.error.find("credentials given twice") != std::string::npos);
  CHECK(twice.error.find("s3cret") == std::string::npos);

  options.basic_auth_user.clear();
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment).error.find("needs --basic-auth-user") !=
        std::string::npos);
}

TEST_CASE("a password file other users can read is refused, an empty one too") {
  TempDir dir;
  AgentConnectionOptions options;
  options.basic_auth_user = "prom";
  options.basic_auth_password_file = dir.write("loose", "s3cret\n", 0644);
  auto loose = AgentClient::create("https://127.0.0.1:9477", options, no_environment);
  REQUIRE_FALSE(loose);
  CHECK(loose.error.find("readable or writable by other users") != std::string::npos);
  options.basic_auth_password_file = dir.write("group", "s3cret\n", 0640);
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment));
  options.basic_auth_password_file = dir.write("empty", "\n", 0600);
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment).error.find("empty first line") !=
        std::string::npos);
  options.basic_auth_password_file = (dir.path / "missing").string();
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment).error.find("cannot read") !=
        std::string::npos);
}

TEST_CASE("trusted CAs: --ca-file, else SSL_CERT_FILE / SSL_CERT_DIR, each checked") {
  TempDir dir;
  AgentConnectionOptions options;
  options.ca_file = dir.write("not-pem", "hello\n", 0644);
  auto not_pem = AgentClient::create("https://127.0.0.1:9477", options, no_environment);
  REQUIRE_FALSE(not_pem);
  CHECK(not_pem.error.find("--ca-file") != std::string::npos);
  CHECK(not_pem.error.find("no PEM block") != std::string::npos);
  options.ca_file = dir.write("ca.pem", pem, 0644);
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment));

  options.ca_file.clear();
  const std::string missing = (dir.path / "missing.pem").string();
  const std::string dir_text = dir.path.string();
  std::map<std::string, std::string> environment{{"SSL_CERT_FILE", missing}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  };
  auto bad_env = AgentClient::create("https://127.0.0.1:9477", options, lookup);
  REQUIRE_FALSE(bad_env);
  CHECK(bad_env.error.find("SSL_CERT_FILE") != std::string::npos);
  environment = {{"SSL_CERT_DIR", missing}};
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, lookup).error.find("SSL_CERT_DIR") != std::string::npos);
  environment = {{"SSL_CERT_FILE", dir.write("env.pem", pem, 0644)}, {"SSL_CERT_DIR", dir_text}};
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, lookup));
}

TEST_CASE("--cert and --key go together and must be PEM") {
  TempDir dir;
  AgentConnectionOptions options;
  options.cert_file = dir.write("client.pem", pem, 0644);
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment).error == "--cert and --key go together");
  options.key_file = dir.write("client.key", "not a key\n", 0600);
  CHECK(AgentClient::create("https://127.0.0.1:9477", options, no_environment).error.find("--key") !=
        std::string::npos);
}
