// The producer thread of KafkaExchange: refreshes the addresses this agent owns, takes the
// agent core's outgoing halves, dates them in wall-clock time, files them in one record per key
// and produces them; delivery reports and the connection/lag status are handled on it too. A file
// of its own because it never touches what the consumer thread owns (see kafka_exchange.hpp).
#include "runtime/kafka_exchange.hpp"

#include <algorithm>
#include <ctime>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "core/shared_core.hpp"
#include "exchange/flow_keys.hpp"
#include "exchange/local_addresses.hpp"
#include "exchange/record_signing.hpp"

namespace skewscope::exchange {

void KafkaExchange::delivery_cb(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  static_cast<KafkaExchange*>(opaque)->on_delivery(msg);
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
  auto core = core_.lock();
  core->set_owned_addresses(std::move(owned));
}

void KafkaExchange::sample_clocks() {
  std::lock_guard guard(shipping_clock_lock_);
  shipping_clock_.sample_now();
}

void KafkaExchange::produce_outgoing() {
  std::vector<OutgoingHalf> out;
  std::vector<OutgoingRdmaHalf> rdma_out;
  std::vector<OutgoingMessageHalf> messages;
  std::vector<WireTranslation> translations;
  std::vector<std::pair<std::string, WireBatch>> forwarded;
  std::vector<std::string> names;
  {
    auto core = core_.lock();
    core->take_outgoing(out);
    core->take_outgoing_rdma(rdma_out);
    core->take_outgoing_messages(messages);
    core->take_outgoing_translations(translations);
    core->take_forwarded(forwarded);
    if (out.empty() && rdma_out.empty() && messages.empty() && translations.empty() && forwarded.empty()) return;
    for (std::size_t i = 0; i < core->domains().size(); ++i)
      names.push_back(core->domains().name(static_cast<DomainId>(i)));
  }
  std::unique_lock clock_guard(shipping_clock_lock_);  // until every half is dated
  shipping_clock_.sample_now();  // after the take: every half taken was captured before this reading
  // One record per key: a host pair's halves travel together, in capture order.
  std::unordered_map<std::string, WireBatch> batches;
  std::unordered_map<std::string, std::unordered_map<std::uint32_t, std::uint32_t>> domain_index;
  // Fixes a half's wall-clock time and files it in the record of `key`, its domain renumbered
  // within that record.
  auto file_in = [&](const std::string& key, auto& h, const auto& outgoing) -> WireBatch& {
    if (shipping_clock_.covers(outgoing.capture_ns))
      h.realtime_ns = shipping_clock_.to_realtime(outgoing.capture_ns) + outgoing.clock_error_ns;
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
  clock_guard.unlock();
  // A router's translations go to the owner of the initiator's halves (README.md).
  for (const WireTranslation& t : translations) batches[host_pair_key(t.original)].translations.push_back(t);
  // Halves this owner re-keyed through a translation: already dated, one record per key and
  // origin domain, marked forwarded so that the next owner does not translate them again.
  for (auto& [key, batch] : forwarded) {
    batch.host = settings_.host_name;
    produce_record(key, batch);
  }
  for (auto& [key, batch] : batches) {
    batch.host = settings_.host_name;
    batch.clock_error_bound_ns = clock_bound_ns_;
    batch.clock_status = clock_status_;
    auto& dropped = dropped_since_batch_[key];
    batch.dropped_before = dropped;
    if (produce_record(key, batch)) dropped = 0;
  }
}

bool KafkaExchange::produce_record(const std::string& key, WireBatch& batch) {
  const std::uint64_t halves = batch.halves.size() + batch.rdma_halves.size() + batch.messages.size();
  // Each domain's tenant by this agent's map (docs/tenants.md): the owner checks it against its own.
  batch.domain_tenants.clear();
  if (!settings_.tenants.empty())
    for (const auto& d : batch.domains) batch.domain_tenants.push_back(settings_.tenants.tenant_of(d).value_or(""));
  std::string value = seal(key, encode_record(batch));
  rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_, RD_KAFKA_V_TOPIC(settings_.topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
      RD_KAFKA_V_VALUE(value.data(), value.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<std::uintptr_t>(halves))), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return true;
  count_drop(err == RD_KAFKA_RESP_ERR__QUEUE_FULL ? DropReason::queue_full : DropReason::delivery_failed, halves, key);
  return false;
}

// The record as it goes out: wrapped in the signed envelope with the first key, or as it is in
// insecure mode.
std::string KafkaExchange::seal(const std::string& kafka_key, std::string record) {
  auto keys = current_keys();
  if (!keys) return record;
  SignedFields fields;
  fields.epoch = epoch_;
  fields.sequence = ++sequence_;
  fields.signed_at_ns = realtime_now_ns();
  fields.signer = settings_.host_name;
  return sign_record(keys->keys.front(), std::move(fields), kafka_key, record);
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
  MonotonicToRealtime::Stats mapping;
  {
    std::lock_guard clock_guard(shipping_clock_lock_);
    mapping = shipping_clock_.stats();
  }
  std::lock_guard guard(stats_lock_);
  stats_.connected = connected;
  stats_.consumer_lag = lag;
  stats_.realtime_mapping = mapping;
}

void KafkaExchange::run_producer() {
  while (!stopping_) {
    const std::int64_t now = monotonic_now_ns();
    if (now - last_refresh_ns_ >= 2000 * kMs) {  // interfaces change rarely; a netlink dump is cheap
      refresh_addresses();
      last_refresh_ns_ = now;
    }
    if (now - last_keys_ns_ >= 2000 * kMs) {  // a rotated key file takes effect within 2 s
      reload_keys();
      last_keys_ns_ = now;
    }
    sample_clocks();
    // A record's envelope, signature, names and flows cost ~200 bytes whatever it holds: a key's
    // halves are gathered for kRecordIntervalNs (sooner when the outbox fills) so that a record
    // carries tens of halves even at a few thousand halves a second (README.md, "Record format").
    if (now - last_produce_ns_ >= kRecordIntervalNs || core_.lock()->outbox_half_full()) {
      produce_outgoing();
      last_produce_ns_ = now;
    }
    rd_kafka_poll(producer_, 5);  // delivery reports; also the pace of this loop
    if (now - last_status_ns_ >= 1000 * kMs) {
      update_status();
      last_status_ns_ = now;
    }
  }
}

}  // namespace skewscope::exchange
