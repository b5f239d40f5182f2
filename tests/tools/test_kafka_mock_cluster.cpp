// test_kafka's mock cluster, topic parser and fault commands (see test_kafka_mock_cluster.hpp).
#include "test_kafka_mock_cluster.hpp"

#include <charconv>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace test_kafka {
namespace {

std::optional<int> parse_int(const std::string& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

skewscope::Result<TopicSpec> parse_topic(const std::string& text, int brokers) {
  using R = skewscope::Result<TopicSpec>;
  auto last = text.rfind(':');
  auto middle = last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  if (middle == std::string::npos || middle == 0)
    return R::fail("topic must be NAME:PARTITIONS:RF, got '" + text + "'");
  TopicSpec spec{text.substr(0, middle), 0, 0};
  auto partitions = parse_int(text.substr(middle + 1, last - middle - 1));
  auto replication = parse_int(text.substr(last + 1));
  if (!partitions || *partitions < 1 || *partitions > 10000)
    return R::fail("partitions must be 1..10000 in '" + text + "'");
  if (!replication || *replication < 1 || *replication > brokers)
    return R::fail("replication factor must be 1.." + std::to_string(brokers) + " in '" + text + "'");
  spec.partitions = *partitions;
  spec.replication = *replication;
  return R::ok(spec);
}

MockKafka::MockKafka(int brokers) : brokers_(brokers) {
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

MockKafka::~MockKafka() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(handle_);
}

skewscope::Status MockKafka::create(const TopicSpec& spec) {
  if (topics_.count(spec.name)) return skewscope::Status::fail("topic " + spec.name + " exists");
  auto err = rd_kafka_mock_topic_create(cluster_, spec.name.c_str(), spec.partitions, spec.replication);
  if (err) return skewscope::Status::fail(rd_kafka_err2str(err));
  topics_[spec.name] = spec.partitions;
  return skewscope::Status::ok();
}

std::string MockKafka::execute(const std::string& line) {
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
    auto spec = parse_topic(words[1], brokers_);
    if (!spec) return "error: " + spec.error;
    auto created = create(*spec);
    return created ? "ok topic " + words[1] : "error: " + created.error;
  }
  if (verb == "brokers" && words.size() == 1) return "ok brokers " + std::to_string(brokers_);
  if (verb == "bootstrap" && words.size() == 1) return "ok bootstrap " + bootstrap();
  return "error: unknown command '" + verb + "' (down, up, leader, coord, topic, brokers, bootstrap)";
}

std::optional<int> MockKafka::broker_id(const std::string& text) const {
  auto id = parse_int(text);
  if (!id || *id < 1 || *id > brokers_) return std::nullopt;
  return id;
}

std::string MockKafka::bad_broker(const std::string& text) const {
  return "error: broker must be 1.." + std::to_string(brokers_) + ", got '" + text + "'";
}

std::string MockKafka::answer(rd_kafka_resp_err_t err, const std::string& what) {
  return err ? "error: " + what + ": " + rd_kafka_err2str(err) : "ok " + what;
}

}  // namespace test_kafka
