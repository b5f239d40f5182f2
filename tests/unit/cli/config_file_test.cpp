// --config FILE: CLI11's TOML reader applied to a command's options, command line first.
#include "cli/config_file.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

// The kinds of options `skewscope agent` has: a string with a default, a repeatable string,
// a flag, a name with dots, a number with a range check.
struct Fixture {
  CLI::App app{"t"};
  CLI::App* agent = app.add_subcommand("agent", "");
  std::string listen = "0.0.0.0:9477";
  std::vector<std::string> domains;
  bool only_domains = false;
  std::string web_config;
  std::size_t max_pending = 7;
  std::string file;

  Fixture() {
    agent->add_option("--listen", listen);
    agent->add_option("--domain", domains);
    agent->add_flag("--only-domains", only_domains);
    agent->add_option("--web.config.file", web_config);
    agent->add_option("--max-pending", max_pending)->check(CLI::Range(1, 100));
    skewscope::add_config_file_option(*agent);
    char name[] = "/tmp/skewscope-config-test.XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    file = name;
  }
  ~Fixture() { std::remove(file.c_str()); }

  void write(const std::string& text) { std::ofstream(file) << text; }
  void parse(std::vector<std::string> args) {
    args.insert(args.begin(), {"t", "agent", "--config", file});
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
  }
};

}  // namespace

TEST_CASE("every kind of option is set from the file under its flag's name") {
  Fixture f;
  f.write(
      "# comment\n"
      "listen = \"127.0.0.1:9\"\n"
      "domain = [\"a=netns:/run/netns/a\", \"b=cgroup:/sys/fs/cgroup/b\"]\n"
      "only-domains = true\n"
      "web.config.file = \"/etc/skewscope/web.yml\"\n"
      "max-pending = 42\n");
  f.parse({});
  CHECK(f.listen == "127.0.0.1:9");
  CHECK(f.domains == std::vector<std::string>{"a=netns:/run/netns/a", "b=cgroup:/sys/fs/cgroup/b"});
  CHECK(f.only_domains);
  CHECK(f.web_config == "/etc/skewscope/web.yml");
  CHECK(f.max_pending == 42);
}

TEST_CASE("a repeatable flag may also be repeated as lines; a single-valued one may not") {
  Fixture f;
  f.write("domain = \"a=netns:/x\"\ndomain = \"b=netns:/y\"\n");
  f.parse({});
  CHECK(f.domains == std::vector<std::string>{"a=netns:/x", "b=netns:/y"});
  Fixture g;
  g.write("listen = \"1.2.3.4:1\"\nlisten = \"1.2.3.4:2\"\n");
  CHECK_THROWS_WITH_AS(g.parse({}), doctest::Contains("listen: takes one value"), CLI::ConfigError);
}

TEST_CASE("a single-valued flag given a list is refused") {
  Fixture f;
  f.write("listen = [\"1.2.3.4:1\", \"1.2.3.4:2\"]\n");
  CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("listen: takes one value"), CLI::ConfigError);
}

TEST_CASE("the command line wins over the file, a flag by a flag") {
  Fixture f;
  f.write("listen = \"127.0.0.1:9\"\ndomain = \"a=netns:/x\"\nmax-pending = 42\n");
  f.parse({"--listen", "10.0.0.1:1", "--domain", "c=netns:/z"});
  CHECK(f.listen == "10.0.0.1:1");
  CHECK(f.domains == std::vector<std::string>{"c=netns:/z"});
  CHECK(f.max_pending == 42);
}

TEST_CASE("a flag set false in the file stays false") {
  Fixture f;
  f.write("only-domains = false\n");
  f.parse({});
  CHECK_FALSE(f.only_domains);
}

TEST_CASE("bad files are usage errors naming the file and the key") {
  Fixture f;
  SUBCASE("unknown key") {
    f.write("listenn = \"x\"\n");
    CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("listenn: no such option"), CLI::ConfigError);
  }
  SUBCASE("a section") {
    f.write("[agent]\nlisten = \"x\"\n");
    CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("sections are not used"), CLI::ConfigError);
  }
  SUBCASE("a value its check refuses") {
    f.write("max-pending = 1000\n");
    CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("max-pending"), CLI::ParseError);
  }
  SUBCASE("not a number") {
    f.write("max-pending = \"many\"\n");
    CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("max-pending"), CLI::ParseError);
  }
  SUBCASE("a flag that is not a boolean") {
    f.write("only-domains = \"perhaps\"\n");
    CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("only-domains"), CLI::ParseError);
  }
  SUBCASE("a nested config") {
    f.write("config = \"/etc/other\"\n");
    CHECK_THROWS_AS(f.parse({}), CLI::ConfigError);
  }
  SUBCASE("an unreadable file") {
    std::remove(f.file.c_str());
    CHECK_THROWS_WITH_AS(f.parse({}), doctest::Contains("cannot be read"), CLI::FileError);
  }
  CHECK(f.listen == "0.0.0.0:9477");
}

TEST_CASE("without --config nothing is read") {
  CLI::App app{"t"};
  std::string listen = "d";
  app.add_option("--listen", listen);
  skewscope::add_config_file_option(app);
  const char* argv[] = {"t"};
  app.parse(1, argv);
  CHECK(listen == "d");
}
