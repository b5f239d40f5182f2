#include "exchange/message_record_codec.hpp"

#include "exchange/flow_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

bool valid_topic(const std::string& t) {
  if (t.empty() || t.size() > kMaxTopicBytes) return false;
  for (char c : t)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return false;
  return true;
}

}  // namespace

std::string message_key(const std::string& topic, std::int32_t partition) {
  return "kafka/" + topic + "/" + std::to_string(partition);
}

void encode_message_halves(const std::vector<WireMessageHalf>& halves, v1::HalvesBatch& pb) {
  if (halves.empty()) return;
  const std::int64_t base = halves.front().realtime_ns;
  pb.set_message_base_realtime_ns(base);
  for (const auto& h : halves) {
    v1::KafkaBatchHalf* m = pb.add_message_halves();
    const bool fetched = h.kind == WireMessageHalf::Kind::fetched;
    m->set_kind(fetched ? v1::KafkaBatchHalf::FETCHED : v1::KafkaBatchHalf::PRODUCED);
    m->set_domain(h.domain);
    m->set_topic(h.topic);
    m->set_partition(h.partition);
    m->set_producer_id(h.producer_id);
    m->set_producer_epoch(h.producer_epoch);
    m->set_base_sequence(h.base_sequence);
    m->set_crc(h.crc);
    m->set_attributes(static_cast<std::uint16_t>(h.attributes));
    if (h.base_offset) m->set_base_offset(*h.base_offset);
    m->set_records(h.records);
    m->set_bytes(h.bytes);
    m->set_realtime_delta_ns(h.realtime_ns - base);
    if (fetched) {
      v1::Socket* s = m->mutable_consumer();
      put_address(s->mutable_local_addr(), h.consumer.src_addr);
      put_address(s->mutable_remote_addr(), h.consumer.dst_addr);
      s->set_local_port(h.consumer.src_port);
      s->set_remote_port(h.consumer.dst_port);
    }
  }
}

Result<std::vector<WireMessageHalf>, RecordReject> decode_message_halves(const v1::HalvesBatch& pb,
                                                                         std::size_t domain_count) {
  using Decoded = Result<std::vector<WireMessageHalf>, RecordReject>;
  if (pb.message_halves_size() > static_cast<int>(kMaxHalvesPerRecord))
    return Decoded::fail(RecordReject::invalid_content);
  std::vector<WireMessageHalf> out;
  out.reserve(static_cast<std::size_t>(pb.message_halves_size()));
  for (const auto& m : pb.message_halves()) {
    const bool fetched = m.kind() == v1::KafkaBatchHalf::FETCHED;
    if ((!fetched && m.kind() != v1::KafkaBatchHalf::PRODUCED) || m.domain() >= domain_count ||
        !valid_topic(m.topic()) || m.partition() < 0 || m.producer_epoch() < INT16_MIN ||
        m.producer_epoch() > INT16_MAX || m.attributes() > 0xffff || m.records() < 0 || m.bytes() == 0 ||
        (m.has_base_offset() && m.base_offset() < 0) || fetched != m.has_consumer())
      return Decoded::fail(RecordReject::invalid_content);
    WireMessageHalf h;
    h.kind = fetched ? WireMessageHalf::Kind::fetched : WireMessageHalf::Kind::produced;
    h.domain = m.domain();
    h.topic = m.topic();
    h.partition = m.partition();
    h.producer_id = m.producer_id();
    h.producer_epoch = static_cast<std::int16_t>(m.producer_epoch());
    h.base_sequence = m.base_sequence();
    h.crc = m.crc();
    h.attributes = static_cast<std::int16_t>(static_cast<std::uint16_t>(m.attributes()));
    if (m.has_base_offset()) h.base_offset = m.base_offset();
    h.records = m.records();
    h.bytes = m.bytes();
    // Wrapping arithmetic: a hostile delta must not be undefined behaviour.
    h.realtime_ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(pb.message_base_realtime_ns()) +
                                              static_cast<std::uint64_t>(m.realtime_delta_ns()));
    if (fetched) {
      const auto& s = m.consumer();
      if (!get_address(s.local_addr(), h.consumer.src_addr) || !get_address(s.remote_addr(), h.consumer.dst_addr) ||
          !valid_port(s.local_port()) || !valid_port(s.remote_port()))
        return Decoded::fail(RecordReject::invalid_content);
      h.consumer.src_port = static_cast<std::uint16_t>(s.local_port());
      h.consumer.dst_port = static_cast<std::uint16_t>(s.remote_port());
    }
    out.push_back(std::move(h));
  }
  return Decoded::ok(std::move(out));
}

protocols::kafka::BatchHalf to_batch_half(const WireMessageHalf& h) {
  protocols::kafka::BatchHalf b;
  b.side = h.kind == WireMessageHalf::Kind::fetched ? protocols::kafka::BatchHalf::Side::kFetched
                                                    : protocols::kafka::BatchHalf::Side::kProduced;
  b.topic = h.topic;
  b.partition = h.partition;
  b.producer_id = h.producer_id;
  b.producer_epoch = h.producer_epoch;
  b.base_sequence = h.base_sequence;
  b.crc = h.crc;
  b.attributes = h.attributes;
  b.base_offset = h.base_offset;
  b.record_count = h.records;
  b.batch_bytes = h.bytes;
  return b;
}

WireMessageHalf to_wire(const protocols::kafka::BatchHalf& b, std::uint32_t domain, std::int64_t realtime_ns,
                        const FlowKey& consumer) {
  WireMessageHalf h;
  const bool fetched = b.side == protocols::kafka::BatchHalf::Side::kFetched;
  h.kind = fetched ? WireMessageHalf::Kind::fetched : WireMessageHalf::Kind::produced;
  h.domain = domain;
  h.topic = b.topic;
  h.partition = b.partition;
  h.producer_id = b.producer_id;
  h.producer_epoch = b.producer_epoch;
  h.base_sequence = b.base_sequence;
  h.crc = b.crc;
  h.attributes = b.attributes;
  h.base_offset = b.base_offset;
  h.records = b.record_count;
  h.bytes = b.batch_bytes;
  h.realtime_ns = realtime_ns;
  if (fetched) h.consumer = consumer;
  return h;
}

}  // namespace skewscope::exchange
