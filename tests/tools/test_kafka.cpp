// A Kafka for tests and the demo: librdkafka's mock cluster (real Kafka protocol over TCP on
// 127.0.0.1) in one process, with fault injection while it runs.
//
//   test_kafka [--brokers N] [--topic NAME:PARTITIONS:RF]... [--bootstrap-file PATH] [--fifo PATH]
//
// The first line of stdout is the bootstrap list (HOST:PORT,...). Then one command per line is read
// from stdin (or from the fifo), each answered by one line `ok ...` or `error: ...`:
//   down B | up B           broker B (1..N, or `all`) refuses / accepts connections; leadership stays
//   leader TOPIC P B        partition P of TOPIC is led by broker B (-1: no leader)
//   coord GROUP B           broker B coordinates consumer group GROUP
//   topic NAME:P:RF         create another topic
//   brokers | bootstrap     print the broker count / bootstrap list
// Exits on SIGTERM/SIGINT, or at end of stdin (a fifo is held open, so it never ends by itself).
//
// This file reads the command lines (stdin or the fifo, and the signals) and answers them; the
// cluster and what each command does are test_kafka_mock_cluster.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "test_kafka_mock_cluster.hpp"

namespace {

using test_kafka::MockKafka;
using test_kafka::TopicSpec;

// stdout may be a pipe whose reader is gone: a failed write ends the tool instead of SIGPIPE.
bool say(const std::string& line) {
  std::string out = line + "\n";
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return false;
  return std::fflush(stdout) == 0;
}

// Reads commands with read(2) into our own buffer: stdio buffering would hide lines already read
// from poll(2), so queued commands would wait for the next one to arrive.
int serve(MockKafka& kafka, int input, bool stop_at_eof, int signals) {
  constexpr std::size_t kMaxLine = 4096;
  std::string pending;
  bool discarding = false;  // inside an over-long line, until its newline
  for (;;) {
    pollfd fds[2] = {{signals, POLLIN, 0}, {input, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      std::perror("poll");
      return 1;
    }
    if (fds[0].revents & POLLIN) return 0;
    if (!(fds[1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buffer[4096];
    ssize_t got = read(input, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      std::perror("read commands");
      return 1;
    }
    if (got == 0) {
      if (stop_at_eof) {
        if (!pending.empty() && !discarding && !say(kafka.execute(pending))) return 1;
        return 0;
      }
      continue;
    }
    pending.append(buffer, static_cast<std::size_t>(got));
    for (auto newline = pending.find('\n'); newline != std::string::npos; newline = pending.find('\n')) {
      std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (discarding) {
        discarding = false;
        continue;
      }
      if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines: nothing
      if (!say(kafka.execute(line))) return 1;
    }
    if (pending.size() > kMaxLine && !discarding) {
      if (!say("error: command line longer than " + std::to_string(kMaxLine) + " bytes")) return 1;
      discarding = true;
    }
    if (discarding) pending.clear();
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kafka mock cluster for tests, with fault commands on stdin or a fifo"};
  int brokers = 3;
  std::vector<std::string> topic_args;
  std::string bootstrap_file, fifo;
  app.add_option("--brokers", brokers, "number of brokers (ids 1..N)")->check(CLI::Range(1, 32));
  app.add_option("--topic", topic_args, "NAME:PARTITIONS:RF (default skewscope.halves.v1:6:3)");
  app.add_option("--bootstrap-file", bootstrap_file, "also write the bootstrap list here");
  app.add_option("--fifo", fifo, "read commands from this fifo (created if missing) instead of stdin");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // 2: usage, as the project's other commands
  }
  if (topic_args.empty()) topic_args.push_back("skewscope.halves.v1:6:" + std::to_string(std::min(brokers, 3)));

  std::vector<TopicSpec> topics;
  for (const auto& text : topic_args) {
    auto spec = test_kafka::parse_topic(text, brokers);
    if (!spec) {
      std::fprintf(stderr, "test_kafka: %s\n", spec.error.c_str());
      return 2;
    }
    topics.push_back(*spec);
  }

  // Blocked before librdkafka starts its threads, so they inherit the mask and the signals
  // reach only the signalfd.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int signals = signalfd(-1, &mask, SFD_CLOEXEC);
  if (signals < 0) {
    std::perror("signalfd");
    return 1;
  }

  int input = STDIN_FILENO;
  if (!fifo.empty()) {
    if (mkfifo(fifo.c_str(), 0600) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "test_kafka: mkfifo %s: %s\n", fifo.c_str(), std::strerror(errno));
      return 1;
    }
    // Opened read-write so that writers coming and going never make it end-of-file.
    input = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    struct stat info {};
    if (input < 0 || fstat(input, &info) != 0 || !S_ISFIFO(info.st_mode)) {
      std::fprintf(stderr, "test_kafka: %s is not a usable fifo\n", fifo.c_str());
      return 1;
    }
  }

  try {
    MockKafka kafka(brokers);
    for (const auto& spec : topics) {
      auto created = kafka.create(spec);
      if (!created) {
        std::fprintf(stderr, "test_kafka: topic %s: %s\n", spec.name.c_str(), created.error.c_str());
        return 1;
      }
    }
    if (!bootstrap_file.empty()) {
      // Written whole under another name then renamed, so a reader never sees half a line.
      std::string temporary = bootstrap_file + ".tmp";
      std::ofstream file(temporary);
      file << kafka.bootstrap() << "\n";
      file.close();
      if (!file || std::rename(temporary.c_str(), bootstrap_file.c_str()) != 0) {
        std::fprintf(stderr, "test_kafka: cannot write %s: %s\n", bootstrap_file.c_str(), std::strerror(errno));
        return 1;
      }
    }
    if (!say(kafka.bootstrap())) return 1;
    return serve(kafka, input, fifo.empty(), signals);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_kafka: %s\n", e.what());
    return 1;
  }
}
