// The consumer thread of KafkaExchange: follows the group's rebalances (the agent core gains
// and loses owned partitions), fetches the records of the partitions this agent owns, notes
// skipped offsets as lost records and feeds the decoded batches to the core. A file of its own
// because pairing what is consumed runs apart from, and never delays, the producer thread.
#include "runtime/kafka_exchange.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "core/shared_core.hpp"

namespace skewscope::exchange {
namespace {

std::vector<std::int32_t> partitions_of(const rd_kafka_topic_partition_list_t* parts) {
  std::vector<std::int32_t> out;
  for (int i = 0; i < parts->cnt; ++i) out.push_back(parts->elems[i].partition);
  return out;
}

}  // namespace

void KafkaExchange::rebalance_cb(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                                 void* opaque) {
  static_cast<KafkaExchange*>(opaque)->on_rebalance(rk, err, parts);
}

void KafkaExchange::on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
  // Cooperative: only the moved partitions come and go; the others keep their state.
  const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
  const auto list = partitions_of(parts);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    {
      auto core = core_.lock();
      core->assign_partitions(list, monotonic_now_ns());
    }
    for (auto p : list) next_offset_.erase(p);
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, parts)) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, parts);
    }
  } else {
    {
      auto core = core_.lock();
      core->revoke_partitions(list);
    }
    for (auto p : list) next_offset_.erase(p);
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, parts)) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, nullptr);
    }
  }
}

void KafkaExchange::consume(std::int64_t budget_ms) {
  struct Item {
    std::int32_t partition;
    WireBatch batch;
  };
  std::vector<Item> items;
  std::vector<std::pair<std::int32_t, std::uint64_t>> gaps;
  std::array<std::uint64_t, static_cast<std::size_t>(RecordReject::count_)> rejected{};
  const std::int64_t deadline = monotonic_now_ns() + budget_ms * kMs;
  const std::shared_ptr<const ExchangeKeys> keys = current_keys();
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t left = (deadline - monotonic_now_ns()) / kMs;
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer_, static_cast<int>(std::max<std::int64_t>(left, 0)));
    if (!msg) break;
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Records skipped on a partition (the broker dropped them before we read them) are lost
      // halves; the offsets say how many records, not how many halves.
      auto next = next_offset_.find(msg->partition);
      if (next != next_offset_.end() && msg->offset > next->second)
        gaps.emplace_back(msg->partition, msg->offset - next->second);
      next_offset_[msg->partition] = msg->offset + 1;
      // Verified (signature, freshness, signer's domains) before any of it is used.
      auto d = intake_->take({static_cast<const std::uint8_t*>(msg->payload), msg->len},
                             {static_cast<const char*>(msg->key), msg->key ? msg->key_len : 0}, msg->partition,
                             keys.get(), realtime_now_ns(), monotonic_now_ns());
      if (d) {
        items.push_back({msg->partition, std::move(*d.value)});
      } else {
        ++rejected[static_cast<std::size_t>(d.error)];
      }
    } else if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::lock_guard guard(stats_lock_);
      stats_.last_error = rd_kafka_message_errstr(msg);
    }
    rd_kafka_message_destroy(msg);
    if (monotonic_now_ns() >= deadline) break;
  }
  {
    std::lock_guard guard(stats_lock_);
    for (std::size_t i = 0; i < rejected.size(); ++i) stats_.rejected[i] += rejected[i];
    stats_.domains_bound = intake_->claims().bound();
    stats_.signers = intake_->claims().signers();
  }
  if (items.empty() && gaps.empty()) return;
  const std::int64_t now = monotonic_now_ns();
  auto core = core_.lock();
  for (const auto& [p, n] : gaps) core->note_partition_gap(p, n, now);
  for (const auto& item : items) core->ingest_remote(item.partition, item.batch, now);
}

void KafkaExchange::run_consumer() {
  while (!stopping_) consume(50);
}

}  // namespace skewscope::exchange
