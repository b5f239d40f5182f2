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

#include "capture/clock_mapping.hpp"
#include "exchange/exchange_report.hpp"
#include "exchange/exchange_settings.hpp"
#include "exchange/record_intake.hpp"
#include "skewscope/result.hpp"

namespace skewscope {
class SharedCore;
}

namespace skewscope::exchange {

// Nanoseconds per millisecond: the Kafka threads keep monotonic nanoseconds, librdkafka wants ms.
inline constexpr std::int64_t kMs = 1'000'000;
// How long the producer thread gathers halves before it files them into records, one per key.
inline constexpr std::int64_t kRecordIntervalNs = 20 * kMs;

class KafkaExchange {
 public:
  // Creates the producer and the consumer (no connection is needed yet: librdkafka reconnects
  // on its own). An error when librdkafka refuses the configuration.
  static Result<std::unique_ptr<KafkaExchange>> create(const ExchangeSettings& settings, SharedCore& core);
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
  // The shipping mapping reads the clocks: every producer pass, and from the clock-step watch
  // (runtime/clock_step_watch.hpp) at once after a step. Any thread.
  void sample_clocks();

 private:
  KafkaExchange(const ExchangeSettings& settings, SharedCore& core);
  void run_producer();
  void run_consumer();
  void refresh_addresses();
  void produce_outgoing();
  // One record of `batch` under `key`; false (counted as dropped) when librdkafka refused it.
  // Fills the batch's domain_tenants from settings_.tenants, then encodes, signs and sends it.
  bool produce_record(const std::string& key, WireBatch& batch);
  void consume(std::int64_t budget_ms);
  void update_status();
  void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts);
  void on_delivery(const rd_kafka_message_t* msg);
  void count_drop(DropReason reason, std::uint64_t halves, const std::string& key);
  // Trust (docs/security.md): the keys in use, re-read from their files every few seconds so that
  // a rotation needs no restart; the value produced for a record (signed unless insecure).
  std::shared_ptr<const ExchangeKeys> current_keys() const;
  void reload_keys();
  std::string seal(const std::string& kafka_key, std::string record);
  static std::int64_t realtime_now_ns();  // CLOCK_REALTIME: when a record is signed, and freshness

  static void rebalance_cb(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                           void* opaque);
  static void delivery_cb(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void log_cb(const rd_kafka_t* rk, int level, const char* fac, const char* buf);

  ExchangeSettings settings_;
  SharedCore& core_;
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_t* consumer_ = nullptr;
  std::thread thread_;           // addresses, produce, delivery reports, status
  std::thread consumer_thread_;  // consume, rebalance callbacks, ingest into the core
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> clock_bound_ns_{0};
  std::atomic<std::uint32_t> clock_status_{0};

  // Read every producer pass (a few ms): a shipped half's wall-clock time comes from this mapping,
  // whose steps are placed to within a pass (core_exchange.hpp says why). Under its own lock: the
  // clock-step watch reads the clocks into it too (sample_clocks).
  mutable std::mutex shipping_clock_lock_;
  MonotonicToRealtime shipping_clock_;

  // Producer thread only.
  std::unordered_map<std::string, std::uint64_t> dropped_since_batch_;  // by key, told in the next batch
  std::uint64_t epoch_ = 0;     // random at start: a reader tells this run's sequence from an earlier one's
  std::uint64_t sequence_ = 0;  // of the records signed by this run
  std::int64_t last_keys_ns_ = 0;
  // Consumer thread only (rebalance callbacks run inside its poll).
  std::map<std::int32_t, std::int64_t> next_offset_;  // per owned partition, gap detection
  std::unique_ptr<RecordIntake> intake_;              // made by start(), once the domains are known
  std::int64_t last_refresh_ns_ = 0, last_status_ns_ = 0;
  std::int64_t last_produce_ns_ = 0;  // the last pass that took the core's outgoing halves

  // Written by the producer thread (reload), read by both threads and fill().
  mutable std::mutex keys_lock_;
  std::shared_ptr<const ExchangeKeys> keys_;  // null: insecure

  // Shared with fill() (the HTTP thread).
  mutable std::mutex stats_lock_;
  ExchangeReport stats_;
};

}  // namespace skewscope::exchange
