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
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct TopicSpec {
  std::string name;
  int partitions = 0;
  int replication = 0;
};

std::optional<int> parse_int(const std::string& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// NAME:PARTITIONS:RF, split at the last two colons (names may not hold ':' in Kafka anyway).
std::optional<TopicSpec> parse_topic(const std::string& text, int brokers, std::string& why) {
  auto last = text.rfind(':');
  auto middle = last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  if (middle == std::string::npos || middle == 0) {
    why = "topic must be NAME:PARTITIONS:RF, got '" + text + "'";
    return std::nullopt;
  }
  TopicSpec spec{text.substr(0, middle), 0, 0};
  auto partitions = parse_int(text.substr(middle + 1, last - middle - 1));
  auto replication = parse_int(text.substr(last + 1));
  if (!partitions || *partitions < 1 || *partitions > 10000) {
    why = "partitions must be 1..10000 in '" + text + "'";
    return std::nullopt;
  }
  if (!replication || *replication < 1 || *replication > brokers) {
    why = "replication factor must be 1.." + std::to_string(brokers) + " in '" + text + "'";
    return std::nullopt;
  }
  spec.partitions = *partitions;
  spec.replication = *replication;
  return spec;
}

class MockKafka {
 public:
  MockKafka(int brokers) : brokers_(brokers) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "client.id", "test_kafka", err, sizeof err);
    // Warnings and errors only: the notice that this handle has no bootstrap.servers is noise.
    rd_kafka_conf_set(conf, "log_level", "4", err, sizeof err);
    // The handle only hosts the mock cluster: it never connects anywhere itself.
    handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!handle_) throw std::runtime_error(std::string("rd_kafka_new: ") + err);
    cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
    if (!cluster_) throw std::runtime_error("rd_kafka_mock_cluster_new failed");
  }
  ~MockKafka() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(handle_);
  }
  MockKafka(const MockKafka&) = delete;
  MockKafka& operator=(const MockKafka&) = delete;

  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  int brokers() const { return brokers_; }

  std::string create(const TopicSpec& spec) {
    if (topics_.count(spec.name)) return "topic " + spec.name + " exists";
    auto err = rd_kafka_mock_topic_create(cluster_, spec.name.c_str(), spec.partitions, spec.replication);
    if (err) return rd_kafka_err2str(err);
    topics_[spec.name] = spec.partitions;
    return {};
  }

  // One command line; returns the answer line.
  std::string execute(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string word; in >> word;) words.push_back(word);
    if (words.empty()) return "error: empty command";
    const std::string& verb = words[0];
    auto usage = [&](const char* form) { return std::string("error: usage: ") + form; };

    if (verb == "down" || verb == "up") {
      if (words.size() != 2) return usage("down|up BROKER (1..N or all)");
      auto id = words[1] == "all" ? std::optional<int>(-1) : broker_id(words[1]);
      if (!id) return bad_broker(words[1]);
      auto err =
          verb == "down" ? rd_kafka_mock_broker_set_down(cluster_, *id) : rd_kafka_mock_broker_set_up(cluster_, *id);
      return answer(err, verb + " " + words[1]);
    }
    if (verb == "leader") {
      if (words.size() != 4) return usage("leader TOPIC PARTITION BROKER (-1: none)");
      auto topic = topics_.find(words[1]);
      // The mock would create an unknown topic silently; a typo must be an error instead.
      if (topic == topics_.end()) return "error: unknown topic '" + words[1] + "'";
      auto partition = parse_int(words[2]);
      if (!partition || *partition < 0 || *partition >= topic->second)
        return "error: partition must be 0.." + std::to_string(topic->second - 1) + ", got '" + words[2] + "'";
      auto id = words[3] == "-1" ? std::optional<int>(-1) : broker_id(words[3]);
      if (!id) return bad_broker(words[3]);
      auto err = rd_kafka_mock_partition_set_leader(cluster_, words[1].c_str(), *partition, *id);
      return answer(err, "leader " + words[1] + " " + words[2] + " " + words[3]);
    }
    if (verb == "coord") {
      if (words.size() != 3) return usage("coord GROUP BROKER");
      auto id = broker_id(words[2]);
      if (!id) return bad_broker(words[2]);
      auto err = rd_kafka_mock_coordinator_set(cluster_, "group", words[1].c_str(), *id);
      return answer(err, "coord " + words[1] + " " + words[2]);
    }
    if (verb == "topic") {
      if (words.size() != 2) return usage("topic NAME:PARTITIONS:RF");
      std::string why;
      auto spec = parse_topic(words[1], brokers_, why);
      if (!spec) return "error: " + why;
      auto failure = create(*spec);
      return failure.empty() ? "ok topic " + words[1] : "error: " + failure;
    }
    if (verb == "brokers" && words.size() == 1) return "ok brokers " + std::to_string(brokers_);
    if (verb == "bootstrap" && words.size() == 1) return "ok bootstrap " + bootstrap();
    return "error: unknown command '" + verb + "' (down, up, leader, coord, topic, brokers, bootstrap)";
  }

 private:
  std::optional<int> broker_id(const std::string& text) const {
    auto id = parse_int(text);
    if (!id || *id < 1 || *id > brokers_) return std::nullopt;
    return id;
  }
  std::string bad_broker(const std::string& text) const {
    return "error: broker must be 1.." + std::to_string(brokers_) + ", got '" + text + "'";
  }
  static std::string answer(rd_kafka_resp_err_t err, const std::string& what) {
    return err ? "error: " + what + ": " + rd_kafka_err2str(err) : "ok " + what;
  }

  int brokers_;
  rd_kafka_t* handle_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::map<std::string, int> topics_;  // name -> partitions, for validating `leader`
};

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
    std::string why;
    auto spec = parse_topic(text, brokers, why);
    if (!spec) {
      std::fprintf(stderr, "test_kafka: %s\n", why.c_str());
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
      auto failure = kafka.create(spec);
      if (!failure.empty()) {
        std::fprintf(stderr, "test_kafka: topic %s: %s\n", spec.name.c_str(), failure.c_str());
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
