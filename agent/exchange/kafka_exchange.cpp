#include "exchange/kafka_exchange.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <set>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "core/agent_core.hpp"
#include "exchange/flow_keys.hpp"
#include "exchange/local_addresses.hpp"

namespace skewscope::exchange {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// Defaults chosen for the exchange; any of them may be overridden by --exchange-config.
const std::vector<std::pair<const char*, const char*>> kProducerDefaults = {
    {"queue.buffering.max.kbytes", "8192"},       // the byte bound of the produce queue
    {"queue.buffering.max.messages", "1000000"},  // so that bytes, not records, are the bound
    {"linger.ms", "20"},                          // adds at most 20 ms to the pairing delay
    {"message.timeout.ms", "10000"},              // undelivered after 10 s: dropped and counted
    {"reconnect.backoff.max.ms", "1000"},
};
const std::vector<std::pair<const char*, const char*>> kConsumerDefaults = {
    {"enable.auto.commit", "true"},        // with the next line: a new owner re-reads
    {"auto.commit.interval.ms", "1000"},   // at most ~1 s of its partitions
    {"auto.offset.reset", "latest"},       // never replay an old backlog into today's windows
    {"session.timeout.ms", "6000"},        // a dead agent's partitions move within seconds
    {"heartbeat.interval.ms", "1000"},     // well inside the session timeout
    {"fetch.wait.max.ms", "100"},          // most of the pairing delay (see README)
    {"reconnect.backoff.max.ms", "1000"},  // an unreachable broker is retried each second
};

Status set(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char err[512] = {};
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) == RD_KAFKA_CONF_OK) return Status::ok();
  return Status::fail(key + ": " + err);
}

// The first property librdkafka refuses is the error.
Result<rd_kafka_conf_t*> make_conf(const ExchangeSettings& s,
                                   const std::vector<std::pair<const char*, const char*>>& defaults, const char* role) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  Status status = set(conf, "bootstrap.servers", s.brokers);
  if (status) status = set(conf, "client.id", "skewscope-" + s.host_name + "-" + role);
  for (const auto& [k, v] : defaults)
    if (status) status = set(conf, k, v);
  for (const auto& [k, v] : s.properties)
    if (status) status = set(conf, k, v);
  if (!status) {
    rd_kafka_conf_destroy(conf);
    return Result<rd_kafka_conf_t*>::fail(status.error);
  }
  return Result<rd_kafka_conf_t*>::ok(conf);
}

std::vector<std::int32_t> partitions_of(const rd_kafka_topic_partition_list_t* parts) {
  std::vector<std::int32_t> out;
  for (int i = 0; i < parts->cnt; ++i) out.push_back(parts->elems[i].partition);
  return out;
}

}  // namespace

KafkaExchange::KafkaExchange(const ExchangeSettings& settings, AgentCore& core, std::mutex& core_lock)
    : settings_(settings), core_(core), core_lock_(core_lock) {
  stats_.brokers = settings.brokers;
  stats_.topic = settings.topic;
  stats_.group = settings.group;
}

Result<std::unique_ptr<KafkaExchange>> KafkaExchange::create(const ExchangeSettings& settings, AgentCore& core,
                                                             std::mutex& core_lock) {
  using Created = Result<std::unique_ptr<KafkaExchange>>;
  std::unique_ptr<KafkaExchange> x(new KafkaExchange(settings, core, core_lock));
  auto made_pconf = make_conf(settings, kProducerDefaults, "producer");
  if (!made_pconf) return Created::fail(made_pconf.error);
  rd_kafka_conf_t* pconf = *made_pconf;
  if (Status s = set(pconf, "partitioner", kPartitioner); !s)
    return rd_kafka_conf_destroy(pconf), Created::fail(s.error);
  rd_kafka_conf_set_opaque(pconf, x.get());
  rd_kafka_conf_set_dr_msg_cb(pconf, delivery_cb);
  rd_kafka_conf_set_log_cb(pconf, log_cb);
  char err[512] = {};
  x->producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, err, sizeof err);
  if (!x->producer_) return Created::fail(std::string("kafka producer: ") + err);
  auto made_cconf = make_conf(settings, kConsumerDefaults, "consumer");
  if (!made_cconf) return Created::fail(made_cconf.error);
  rd_kafka_conf_t* cconf = *made_cconf;
  Status s = set(cconf, "group.id", settings.group);
  if (s) s = set(cconf, "partition.assignment.strategy", kAssignor);
  if (!s) return rd_kafka_conf_destroy(cconf), Created::fail(s.error);
  rd_kafka_conf_set_opaque(cconf, x.get());
  rd_kafka_conf_set_rebalance_cb(cconf, rebalance_cb);
  rd_kafka_conf_set_log_cb(cconf, log_cb);
  x->consumer_ = rd_kafka_new(RD_KAFKA_CONSUMER, cconf, err, sizeof err);
  if (!x->consumer_) return Created::fail(std::string("kafka consumer: ") + err);
  rd_kafka_poll_set_consumer(x->consumer_);
  return Created::ok(std::move(x));
}

KafkaExchange::~KafkaExchange() {
  stop();
  if (consumer_) rd_kafka_destroy(consumer_);
  if (producer_) rd_kafka_destroy(producer_);
}

void KafkaExchange::log_cb(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  auto* self = static_cast<KafkaExchange*>(rd_kafka_opaque(rk));
  if (level > 4 || !self) return;  // warnings and worse
  std::string line = std::string(fac) + ": " + buf;
  std::lock_guard guard(self->stats_lock_);
  self->stats_.last_error = line;
}

void KafkaExchange::rebalance_cb(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                                 void* opaque) {
  static_cast<KafkaExchange*>(opaque)->on_rebalance(rk, err, parts);
}

void KafkaExchange::delivery_cb(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  static_cast<KafkaExchange*>(opaque)->on_delivery(msg);
}

void KafkaExchange::on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
  // Cooperative: only the moved partitions come and go; the others keep their state.
  const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
  const auto list = partitions_of(parts);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    {
      std::lock_guard guard(core_lock_);
      core_.assign_partitions(list, monotonic_now_ns());
    }
    for (auto p : list) next_offset_.erase(p);
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, parts)) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, parts);
    }
  } else {
    {
      std::lock_guard guard(core_lock_);
      core_.revoke_partitions(list);
    }
    for (auto p : list) next_offset_.erase(p);
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, parts)) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, nullptr);
    }
  }
}

void KafkaExchange::count_drop(DropReason reason, std::uint64_t halves, const std::string& key) {
  dropped_since_batch_[key] += halves;
  std::lock_guard guard(stats_lock_);
  stats_.dropped[static_cast<std::size_t>(reason)] += halves;
}

void KafkaExchange::on_delivery(const rd_kafka_message_t* msg) {
  const auto halves = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(msg->_private));
  if (msg->err) {
    count_drop(DropReason::delivery_failed, halves, std::string(static_cast<const char*>(msg->key), msg->key_len));
    return;
  }
  std::lock_guard guard(stats_lock_);
  stats_.halves_produced += halves;
  ++stats_.records_produced;
  stats_.bytes_produced += msg->len + msg->key_len;
}

void KafkaExchange::refresh_addresses() {
  std::set<Address> owned;
  for (const auto& path : settings_.netns_paths) {
    auto read = read_netns_addresses(path);
    if (!read) {
      // Keep the previous set: a domain that vanished for a moment must not turn local pairs
      // into shipped ones and back.
      std::lock_guard guard(stats_lock_);
      stats_.last_error = "local addresses: " + read.error;
      return;
    }
    owned.insert(read->begin(), read->end());
  }
  std::lock_guard guard(core_lock_);
  core_.set_owned_addresses(std::move(owned));
}

void KafkaExchange::sample_clocks() {
  // The tightest of three read pairs: a preempted read would place the sample wrongly.
  std::int64_t best_gap = INT64_MAX, mono = 0, real = 0;
  for (int i = 0; i < 3; ++i) {
    timespec a{}, r{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const std::int64_t before = a.tv_sec * 1'000'000'000LL + a.tv_nsec, after = b.tv_sec * 1'000'000'000LL + b.tv_nsec;
    if (after - before < best_gap) {
      best_gap = after - before;
      mono = before + (after - before) / 2;
      real = r.tv_sec * 1'000'000'000LL + r.tv_nsec;
    }
  }
  if (!clock_samples_.empty() && mono <= clock_samples_.back().first) return;
  clock_samples_.emplace_back(mono, real);
  while (clock_samples_.size() > 2 && mono - clock_samples_.front().first > 2000 * kMs) clock_samples_.pop_front();
}

std::optional<std::int64_t> KafkaExchange::realtime_at(std::int64_t mono_ns) const {
  auto it = std::lower_bound(clock_samples_.begin(), clock_samples_.end(), mono_ns,
                             [](const auto& s, std::int64_t t) { return s.first < t; });
  if (it == clock_samples_.begin() || it == clock_samples_.end()) return std::nullopt;  // not bracketed
  const auto& [m0, r0] = *std::prev(it);
  const auto& [m1, r1] = *it;
  const double f = static_cast<double>(mono_ns - m0) / static_cast<double>(m1 - m0);
  return r0 + (mono_ns - m0) + static_cast<std::int64_t>(f * static_cast<double>((r1 - m1) - (r0 - m0)));
}

void KafkaExchange::produce_outgoing() {
  std::vector<OutgoingHalf> out;
  std::vector<OutgoingRdmaHalf> rdma_out;
  std::vector<OutgoingMessageHalf> messages;
  std::vector<std::string> names;
  {
    std::lock_guard guard(core_lock_);
    core_.take_outgoing(out);
    core_.take_outgoing_rdma(rdma_out);
    core_.take_outgoing_messages(messages);
    if (out.empty() && rdma_out.empty() && messages.empty()) return;
    for (std::size_t i = 0; i < core_.domains().size(); ++i)
      names.push_back(core_.domains().name(static_cast<DomainId>(i)));
  }
  sample_clocks();  // after the take: every half taken was captured before this sample
  // One record per key: a host pair's halves travel together, in capture order.
  std::unordered_map<std::string, WireBatch> batches;
  std::unordered_map<std::string, std::unordered_map<std::uint32_t, std::uint32_t>> domain_index;
  // Fixes a half's wall-clock time and files it in the record of `key`, its domain renumbered
  // within that record.
  auto file_in = [&](const std::string& key, auto& h, const auto& outgoing) -> WireBatch& {
    if (auto real = realtime_at(outgoing.capture_ns)) h.realtime_ns = *real + outgoing.clock_error_ns;
    WireBatch& b = batches[key];
    auto [it, added] = domain_index[key].try_emplace(h.domain, static_cast<std::uint32_t>(b.domains.size()));
    if (added) b.domains.push_back(names.at(h.domain));
    h.domain = it->second;
    return b;
  };
  for (OutgoingHalf& o : out) {
    WireBatch& b = file_in(host_pair_key(o.wire.flow), o.wire, o);
    b.halves.push_back(o.wire);
  }
  // RDMA halves: keyed by the two GIDs (on RoCEv2 the hosts' addresses), otherwise the same.
  for (OutgoingRdmaHalf& o : rdma_out) {
    FlowKey hosts;
    hosts.src_addr = o.wire.local_gid;
    hosts.dst_addr = o.wire.peer_gid;
    WireBatch& b = file_in(host_pair_key(hosts), o.wire, o);
    b.rdma_halves.push_back(o.wire);
  }
  // Kafka batch halves: one record per topic-partition, whichever host pair they crossed.
  for (OutgoingMessageHalf& o : messages) {
    WireBatch& b = file_in(message_key(o.wire.topic, o.wire.partition), o.wire, o);
    b.messages.push_back(std::move(o.wire));
  }
  for (auto& [key, batch] : batches) {
    batch.host = settings_.host_name;
    batch.clock_error_bound_ns = clock_bound_ns_;
    batch.clock_status = clock_status_;
    auto& dropped = dropped_since_batch_[key];
    batch.dropped_before = dropped;
    const std::uint64_t halves = batch.halves.size() + batch.rdma_halves.size() + batch.messages.size();
    std::string value = encode_record(batch);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer_, RD_KAFKA_V_TOPIC(settings_.topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(value.data(), value.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<std::uintptr_t>(halves))), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      dropped = 0;
    } else {
      count_drop(err == RD_KAFKA_RESP_ERR__QUEUE_FULL ? DropReason::queue_full : DropReason::delivery_failed, halves,
                 key);
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
      DecodedRecord d = decode_record({static_cast<const std::uint8_t*>(msg->payload), msg->len});
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
  }
  if (items.empty() && gaps.empty()) return;
  const std::int64_t now = monotonic_now_ns();
  std::lock_guard guard(core_lock_);
  for (const auto& [p, n] : gaps) core_.note_partition_gap(p, n, now);
  for (const auto& item : items) core_.ingest_remote(item.partition, item.batch, now);
}

void KafkaExchange::update_status() {
  // Connected: a broker answered a metadata request just now (bounded wait, on this thread only).
  const rd_kafka_metadata_t* md = nullptr;
  const bool connected = rd_kafka_metadata(producer_, 0, nullptr, &md, 500) == RD_KAFKA_RESP_ERR_NO_ERROR;
  if (md) rd_kafka_metadata_destroy(md);
  std::optional<std::int64_t> lag;
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (rd_kafka_assignment(consumer_, &assigned) == RD_KAFKA_RESP_ERR_NO_ERROR && assigned) {
    rd_kafka_position(consumer_, assigned);
    std::int64_t total = 0;
    bool known = assigned->cnt > 0;
    for (int i = 0; i < assigned->cnt; ++i) {
      const auto& tp = assigned->elems[i];
      std::int64_t low = 0, high = 0;
      if (rd_kafka_get_watermark_offsets(consumer_, tp.topic, tp.partition, &low, &high) !=
              RD_KAFKA_RESP_ERR_NO_ERROR ||
          high < 0) {
        known = false;
        continue;
      }
      const std::int64_t position = tp.offset >= 0 ? tp.offset : high;
      total += std::max<std::int64_t>(0, high - position);
    }
    if (known) lag = total;
    rd_kafka_topic_partition_list_destroy(assigned);
  }
  std::lock_guard guard(stats_lock_);
  stats_.connected = connected;
  stats_.consumer_lag = lag;
}

void KafkaExchange::start() {
  refresh_addresses();
  last_refresh_ns_ = monotonic_now_ns();
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, settings_.topic.c_str(), RD_KAFKA_PARTITION_UA);
  if (rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer_, topics); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::lock_guard guard(stats_lock_);
    stats_.last_error = std::string("subscribe: ") + rd_kafka_err2str(err);
  }
  rd_kafka_topic_partition_list_destroy(topics);
  // Two threads: pairing what is consumed must never delay shipping what is captured.
  thread_ = std::thread([this] { run_producer(); });
  consumer_thread_ = std::thread([this] { run_consumer(); });
}

void KafkaExchange::run_producer() {
  while (!stopping_) {
    const std::int64_t now = monotonic_now_ns();
    if (now - last_refresh_ns_ >= 2000 * kMs) {  // interfaces change rarely; a netlink dump is cheap
      refresh_addresses();
      last_refresh_ns_ = now;
    }
    sample_clocks();
    produce_outgoing();
    rd_kafka_poll(producer_, 5);  // delivery reports; also the pace of this loop
    if (now - last_status_ns_ >= 1000 * kMs) {
      update_status();
      last_status_ns_ = now;
    }
  }
}

void KafkaExchange::run_consumer() {
  while (!stopping_) consume(50);
}

void KafkaExchange::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  thread_.join();
  consumer_thread_.join();
  produce_outgoing();
  rd_kafka_flush(producer_, 1000);
  rd_kafka_consumer_close(consumer_);  // leaves the group: the partitions move without waiting for the session timeout
}

void KafkaExchange::fill(ExchangeReport& report) const {
  std::lock_guard guard(stats_lock_);
  report.connected = stats_.connected;
  report.brokers = stats_.brokers;
  report.topic = stats_.topic;
  report.group = stats_.group;
  report.consumer_lag = stats_.consumer_lag;
  report.halves_produced = stats_.halves_produced;
  report.records_produced = stats_.records_produced;
  report.bytes_produced = stats_.bytes_produced;
  for (std::size_t i = 0; i < report.dropped.size(); ++i) report.dropped[i] += stats_.dropped[i];
  for (std::size_t i = 0; i < report.rejected.size(); ++i) report.rejected[i] += stats_.rejected[i];
  report.last_error = stats_.last_error;
}

}  // namespace skewscope::exchange
