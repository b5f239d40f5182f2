// The exchange's only I/O: two threads, one that ships the agent core's outgoing halves to Kafka,
// one that feeds the records of the partitions this agent owns back into the core.
//
// Capture never waits on it: the core hands halves over through a bounded queue, the producer's
// queue is bounded in bytes (queue.buffering.max.kbytes), and whatever does not fit, or is not
// acknowledged, is dropped and counted, per key, so that the owner knows the window is incomplete.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "exchange/exchange_report.hpp"
#include "exchange/exchange_settings.hpp"
#include "skewscope/result.hpp"

namespace skewscope {
class AgentCore;
}

namespace skewscope::exchange {

class KafkaExchange {
 public:
  // Creates the producer and the consumer (no connection is needed yet: librdkafka reconnects
  // on its own). An error when librdkafka refuses the configuration.
  static Result<std::unique_ptr<KafkaExchange>> create(const ExchangeSettings& settings, AgentCore& core,
                                                       std::mutex& core_lock);
  ~KafkaExchange();

  // Reads this agent's addresses once (so nothing is shipped by mistake before the first
  // refresh), then starts the thread.
  void start();
  void stop();  // leaves the group cleanly (its partitions move at once), flushes briefly
  void fill(ExchangeReport& report) const;
  // The host's clock quality, sent with every batch (0 = unknown).
  void set_clock_quality(std::int64_t error_bound_ns, std::uint32_t status) {
    clock_bound_ns_ = error_bound_ns;
    clock_status_ = status;
  }

 private:
  KafkaExchange(const ExchangeSettings& settings, AgentCore& core, std::mutex& core_lock);
  void run_producer();
  void run_consumer();
  void refresh_addresses();
  void produce_outgoing();
  void consume(std::int64_t budget_ms);
  void update_status();
  void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts);
  void on_delivery(const rd_kafka_message_t* msg);
  void count_drop(DropReason reason, std::uint64_t halves, const std::string& key);

  static void rebalance_cb(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                           void* opaque);
  static void delivery_cb(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void log_cb(const rd_kafka_t* rk, int level, const char* fac, const char* buf);

  ExchangeSettings settings_;
  AgentCore& core_;
  std::mutex& core_lock_;
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_t* consumer_ = nullptr;
  std::thread thread_;           // addresses, produce, delivery reports, status
  std::thread consumer_thread_;  // consume, rebalance callbacks, ingest into the core
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> clock_bound_ns_{0};
  std::atomic<std::uint32_t> clock_status_{0};

  // Producer thread only.
  std::deque<std::pair<std::int64_t, std::int64_t>> clock_samples_;  // (monotonic, realtime), ~2 s
  void sample_clocks();
  std::optional<std::int64_t> realtime_at(std::int64_t mono_ns) const;
  std::unordered_map<std::string, std::uint64_t> dropped_since_batch_;  // by key, told in the next batch
  // Consumer thread only (rebalance callbacks run inside its poll).
  std::map<std::int32_t, std::int64_t> next_offset_;  // per owned partition, gap detection
  std::int64_t last_refresh_ns_ = 0, last_status_ns_ = 0;

  // Shared with fill() (the HTTP thread).
  mutable std::mutex stats_lock_;
  ExchangeReport stats_;
};

}  // namespace skewscope::exchange
