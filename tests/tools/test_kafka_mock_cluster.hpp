// test_kafka's cluster: librdkafka's mock cluster behind one owner, the NAME:PARTITIONS:RF topic
// parser, and the fault commands (down, up, leader, coord, topic, ...) it executes. Kept apart
// from test_kafka.cpp, which only reads command lines and answers them, so that what a command
// does and how commands arrive can each be read on their own.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <map>
#include <optional>
#include <string>

#include "skewscope/result.hpp"

namespace test_kafka {

struct TopicSpec {
  std::string name;
  int partitions = 0;
  int replication = 0;
};

// NAME:PARTITIONS:RF, split at the last two colons (names may not hold ':' in Kafka anyway); the
// replication factor may not exceed `brokers`.
skewscope::Result<TopicSpec> parse_topic(const std::string& text, int brokers);

class MockKafka {
 public:
  // Throws std::runtime_error when librdkafka cannot make the handle or the cluster.
  explicit MockKafka(int brokers);
  ~MockKafka();
  MockKafka(const MockKafka&) = delete;
  MockKafka& operator=(const MockKafka&) = delete;

  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  int brokers() const { return brokers_; }

  skewscope::Status create(const TopicSpec& spec);

  // One command line; returns the answer line (`ok ...` or `error: ...`).
  std::string execute(const std::string& line);

 private:
  std::optional<int> broker_id(const std::string& text) const;
  std::string bad_broker(const std::string& text) const;
  static std::string answer(rd_kafka_resp_err_t err, const std::string& what);

  int brokers_;
  rd_kafka_t* handle_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::map<std::string, int> topics_;  // name -> partitions, for validating `leader`
};

}  // namespace test_kafka
