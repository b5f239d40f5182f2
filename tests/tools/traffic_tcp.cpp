// Plain TCP traffic for the tests and the demo:
//   tcp-sink      accept one connection and read with a cycle of read sizes (e.g. 4,8,3)
//   tcp-source    connect and write with a cycle of write sizes (e.g. 5,7,3)
//   echo-server   accept one connection, echo every byte back (traffic in both directions)
//   ping          fixed-size requests, each waiting for its echo: round trips, min RTT
// Reads and writes of other sizes than the peer's exercise the agent's byte-range pairing.
#include "tcp_endpoint.hpp"
#include "traffic.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace skewscope::traffic {
namespace {

using tools::connect_to;
using tools::read_exact;
using tools::write_all;

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    unsigned long n = 0;
    try {
      n = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || n == 0 || n > kMaxMessage)
      throw std::runtime_error("sizes must be a comma-separated list of 1.." + std::to_string(kMaxMessage) + ", got '" +
                               text + "'");
    sizes.push_back(n);
  }
  if (sizes.empty()) throw std::runtime_error("no sizes given");
  return sizes;
}

void tcp_sink(const Options& o) {
  auto sizes = parse_sizes(o.sizes);
  auto start = Clock::now();
  int fd = accept_one(o.endpoint, o.bounds.duration);
  std::vector<char> buf(kMaxMessage);
  std::size_t total = 0, reads = 0;
  for (std::size_t i = 0; wait_readable(fd, o.bounds.duration, start); ++i) {
    ssize_t r = read(fd, buf.data(), sizes[i % sizes.size()]);
    if (r <= 0) break;
    total += static_cast<std::size_t>(r);
    ++reads;
  }
  close(fd);
  std::cout << "tcp-sink: " << reads << " reads, " << total << " bytes" << std::endl;
}

void tcp_source(Options o) {
  auto sizes = parse_sizes(o.sizes);
  int fd = connect_to(o.endpoint, 10, &g_stop);
  std::vector<char> buf(kMaxMessage, 'x');
  long i = 0;
  std::size_t total = 0;
  o.bounds.restart();
  for (; o.bounds.next(i); ++i) {
    std::size_t n = sizes[static_cast<std::size_t>(i) % sizes.size()];
    if (!write_all(fd, buf.data(), n)) break;
    total += n;
  }
  close(fd);
  std::cout << "tcp-source: " << i << " writes, " << total << " bytes" << std::endl;
}

void echo_server(const Options& o) {
  auto start = Clock::now();
  int fd = accept_one(o.endpoint, o.bounds.duration);
  std::size_t total = 0;
  std::vector<char> buf(1 << 16);
  while (wait_readable(fd, o.bounds.duration, start)) {
    ssize_t r = read(fd, buf.data(), buf.size());
    if (r <= 0 || !write_all(fd, buf.data(), static_cast<std::size_t>(r))) break;
    total += static_cast<std::size_t>(r);
  }
  close(fd);
  std::cout << "echo-server: " << total << " bytes echoed" << std::endl;
}

void ping(Options o) {
  int fd = connect_to(o.endpoint, 10, &g_stop);
  std::vector<char> out(o.size, 'p'), in(o.size);
  long i = 0;
  double min_rtt = 1e9;
  o.bounds.restart();
  for (; o.bounds.next(i); ++i) {
    auto t0 = Clock::now();
    if (!write_all(fd, out.data(), o.size) || !read_exact(fd, in.data(), o.size)) break;
    min_rtt = std::min(min_rtt, seconds_since(t0));
  }
  close(fd);
  std::cout << "ping: " << i << " round trips, min rtt " << min_rtt * 1e6 << " us" << std::endl;
}

}  // namespace

void add_tcp_modes(CLI::App& app, Options& o, std::vector<Mode>& modes) {
  auto* sink = app.add_subcommand("tcp-sink", "accept one connection, read with a cycle of sizes");
  sink->add_option("--listen", o.endpoint, "ADDR:PORT")->required();
  sink->add_option("--read-sizes", o.sizes, "comma-separated read sizes, cycled (default 1024)");
  add_receive_duration(sink, o);
  modes.push_back({sink, Needs::kDurationOrDefault, [&o] { tcp_sink(o); }});

  auto* source = app.add_subcommand("tcp-source", "connect, write with a cycle of sizes");
  source->add_option("--connect", o.endpoint, "ADDR:PORT")->required();
  source->add_option("--write-sizes", o.sizes, "comma-separated write sizes, cycled (default 1024)");
  add_bounds(source, o, true);
  modes.push_back({source, Needs::kCountOrDuration, [&o] { tcp_source(o); }});

  auto* echo = app.add_subcommand("echo-server", "accept one connection, echo every byte back");
  echo->add_option("--listen", o.endpoint, "ADDR:PORT")->required();
  add_receive_duration(echo, o);
  modes.push_back({echo, Needs::kDurationOrDefault, [&o] { echo_server(o); }});

  auto* pinger = app.add_subcommand("ping", "requests of --size bytes, each waiting for its echo");
  pinger->add_option("--connect", o.endpoint, "ADDR:PORT")->required();
  add_size(pinger, o);
  add_bounds(pinger, o, true);
  modes.push_back({pinger, Needs::kCountOrDuration, [&o] { ping(o); }});
}

}  // namespace skewscope::traffic
