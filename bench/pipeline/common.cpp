#include "common.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace pipeline {

std::atomic<bool> g_stop{false};

std::optional<int64_t> parse_duration_ns(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double sign = 1.0;
  if (text.front() == '+' || text.front() == '-') {
    if (text.front() == '-') sign = -1.0;
    text.remove_prefix(1);
  }
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0) return std::nullopt;
  std::string number(text.substr(0, digits));
  std::string_view unit = text.substr(digits);
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(number.c_str(), &end);
  if (errno != 0 || end != number.c_str() + number.size() || !std::isfinite(value)) return std::nullopt;
  double scale;
  if (unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "m")
    scale = 60e9;
  else if (unit.empty() && value == 0.0)
    scale = 0;
  else
    return std::nullopt;
  double ns = sign * value * scale;
  if (std::fabs(ns) > 9e18) return std::nullopt;
  return static_cast<int64_t>(std::llround(ns));
}

std::string format_duration_ns(int64_t ns) {
  char buf[48];
  double a = std::fabs(static_cast<double>(ns));
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  else if (a >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lldns", static_cast<long long>(ns));
  return buf;
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, int64_t& ns_out, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [&ns_out, name](const std::string& v) {
            auto ns = parse_duration_ns(v);
            if (!ns) throw CLI::ValidationError(name, "'" + v + "' is not a duration like 5ms, 250us, -2ms, 30s");
            ns_out = *ns;
          },
          help)
      ->type_name("DURATION");
}

void AppClock::add_options(CLI::App& app) {
  add_duration(app, "--clock-offset", offset_ns,
               "app-level clock reads this far ahead of true time (e.g. 5ms, -250us); stamps only");
  app.add_option("--clock-drift-ppm", drift_ppm,
                 "app-level clock gains this many ppm of elapsed time since the stage started")
      ->check(CLI::Range(-100000.0, 100000.0));
}

namespace {
void on_signal(int) { g_stop.store(true); }
}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::cerr << app.get_name() << ": " << what << "\n";
    std::exit(2);
  }
}

void fatal(const std::string& what) {
  std::cerr << "pipeline: " << what << "\n";
  std::exit(1);
}

void write_text_file(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) fatal("cannot write " + tmp);
    f << text;
    if (!f.flush()) fatal("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

void touch(const std::string& path) {
  if (path.empty()) return;
  std::ofstream f(path, std::ios::trunc);
  if (!f) fatal("cannot create " + path);
}

}  // namespace pipeline
