// KafkaExchange's setup and lifecycle: the librdkafka configuration (our defaults, then the
// operator's --exchange-config), creating the producer and the consumer, starting and stopping
// their threads, and the stats the HTTP thread reads. What each thread does in its loop is in
// kafka_exchange_producer.cpp and kafka_exchange_consumer.cpp.
#include "runtime/kafka_exchange.hpp"

#include <openssl/rand.h>

#include <ctime>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "core/shared_core.hpp"

namespace skewscope::exchange {
namespace {

// Defaults chosen for the exchange; any of them may be overridden by --exchange-config.
const std::vector<std::pair<const char*, const char*>> kProducerDefaults = {
    {"queue.buffering.max.kbytes", "8192"},       // the byte bound of the produce queue
    {"queue.buffering.max.messages", "1000000"},  // so that bytes, not records, are the bound
    // The producer thread gathers each key's halves for 20 ms (kRecordIntervalNs) already: librdkafka's
    // linger only groups that pass's records into one request.
    {"linger.ms", "5"},
    {"message.timeout.ms", "10000"},  // undelivered after 10 s: dropped and counted
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

}  // namespace

KafkaExchange::KafkaExchange(const ExchangeSettings& settings, SharedCore& core) : settings_(settings), core_(core) {
  stats_.brokers = settings.brokers;
  stats_.topic = settings.topic;
  stats_.group = settings.group;
  stats_.insecure = !settings.keys;  // without keys nothing is signed or verified, whatever the reason
  if (settings.keys) keys_ = std::make_shared<const ExchangeKeys>(*settings.keys);
  // A run's records are told from an earlier run's by this number; a repeat would let a replay
  // of the earlier run's records pass, so it comes from the CSPRNG (time as the fallback).
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&epoch_), sizeof epoch_) != 1)
    epoch_ = static_cast<std::uint64_t>(monotonic_now_ns()) ^ static_cast<std::uint64_t>(realtime_now_ns());
}

std::int64_t KafkaExchange::realtime_now_ns() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

std::shared_ptr<const ExchangeKeys> KafkaExchange::current_keys() const {
  std::lock_guard guard(keys_lock_);
  return keys_;
}

// The key files again: a changed set takes effect at once (the first key signs the next record);
// a set that no longer loads (a file half-written, a mode gone wrong) leaves the keys in use.
void KafkaExchange::reload_keys() {
  if (settings_.insecure || settings_.key_files.empty()) return;  // no files: keys given in code (benchmark)
  auto loaded = load_exchange_keys(settings_.key_files);
  if (!loaded) {
    std::lock_guard guard(stats_lock_);
    ++stats_.key_reload_failures;
    stats_.last_error = "key files: " + loaded.error;
    return;
  }
  auto now = current_keys();
  std::vector<KeyId> before, after;
  if (now)
    for (const auto& k : now->keys) before.push_back(k.id);
  for (const auto& k : loaded->keys) after.push_back(k.id);
  if (before == after) return;
  std::cerr << "skewscope agent: exchange keys changed: signing with " << key_id_hex(after.front()) << " ("
            << loaded->keys.front().source << "), " << after.size() << " accepted" << std::endl;
  std::lock_guard guard(keys_lock_);
  keys_ = std::make_shared<const ExchangeKeys>(std::move(*loaded));
}

Result<std::unique_ptr<KafkaExchange>> KafkaExchange::create(const ExchangeSettings& settings, SharedCore& core) {
  using Created = Result<std::unique_ptr<KafkaExchange>>;
  std::unique_ptr<KafkaExchange> x(new KafkaExchange(settings, core));
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

void KafkaExchange::start() {
  {
    // This agent's own domains are bound to it: no other agent's record may speak for them.
    std::vector<std::string> own;
    auto core = core_.lock();
    for (std::size_t i = 0; i < core->domains().size(); ++i)
      own.push_back(core->domains().name(static_cast<DomainId>(i)));
    intake_ = std::make_unique<RecordIntake>(settings_.host_name, own, kDefaultReplayWindowNs,
                                             DomainClaims(settings_.domains_per_signer), settings_.tenants);
  }
  last_keys_ns_ = monotonic_now_ns();
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
  report.realtime_mapping = stats_.realtime_mapping;
  report.halves_produced = stats_.halves_produced;
  report.records_produced = stats_.records_produced;
  report.bytes_produced = stats_.bytes_produced;
  for (std::size_t i = 0; i < report.dropped.size(); ++i) report.dropped[i] += stats_.dropped[i];
  for (std::size_t i = 0; i < report.rejected.size(); ++i) report.rejected[i] += stats_.rejected[i];
  report.last_error = stats_.last_error;
  report.insecure = stats_.insecure;
  report.key_reload_failures = stats_.key_reload_failures;
  report.domains_bound = stats_.domains_bound;
  report.signers = stats_.signers;
  report.key_ids.clear();
  if (auto keys = current_keys())
    for (const auto& k : keys->keys) report.key_ids.push_back(key_id_hex(k.id));
}

}  // namespace skewscope::exchange
