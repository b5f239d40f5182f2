#include "api/payload_output.hpp"

#include "exchange/flow_keys.hpp"

namespace skewscope {
namespace {

nlohmann::json ratio(std::uint64_t part, std::uint64_t whole) {
  return whole ? nlohmann::json(static_cast<double>(part) / static_cast<double>(whole)) : nlohmann::json(nullptr);
}

// Which ZMTP streams were not parsed, and why: the reason counts and the latest streams by name,
// so that an operator sees a 0-message ZMTP socket explained (docs/pairing.md, ZMTP).
nlohmann::json zmtp_unparsed_json(const MessagePairingCounters& m, const std::vector<std::string>& domain_names) {
  using nlohmann::json;
  json reasons = json::object();
  for (std::size_t i = 0; i < m.zmtp_unparsed_streams.size(); ++i)
    reasons[std::string(protocols::zmtp::to_string(static_cast<protocols::zmtp::UnparsedReason>(i)))] =
        m.zmtp_unparsed_streams[i];
  json recent = json::array();
  for (const auto& u : m.zmtp_unparsed_recent) {
    const auto endpoint = [](const Address& a, std::uint16_t port) {
      return exchange::address_text(a) + ":" + std::to_string(port);
    };
    recent.push_back({{"domain", u.domain < domain_names.size() ? json(domain_names[u.domain]) : json(u.domain)},
                      {"kind", u.kind == HalfKind::send ? "send" : "recv"},
                      {"sender", endpoint(u.flow.src_addr, u.flow.src_port)},
                      {"receiver", endpoint(u.flow.dst_addr, u.flow.dst_port)},
                      {"reason", std::string(protocols::zmtp::to_string(u.reason))}});
  }
  return {{"by_reason", reasons}, {"latest", recent}};
}

}  // namespace

nlohmann::json payload_json(const PayloadReport& p, const std::vector<std::string>& domain_names) {
  using nlohmann::json;
  const auto& s = p.source;
  const auto& m = p.pairing;
  json rejected = json::object();
  for (std::size_t i = 0; i < p.rejected.size(); ++i)
    rejected[payload_reject_name(static_cast<PayloadReject>(i))] = p.rejected[i];
  return {{"max_bytes", p.max_bytes},
          {"submitted", s.emitted},  // records the kernel side put in the payload ring buffer
          {"records", p.records},    // records the agent read
          {"truncated", s.truncated},
          {"iov_truncated", s.iov_truncated},
          {"lost",
           {{"ring_buffer_full", s.ringbuf_full},
            {"read_failed", s.read_failed},
            {"table_full", s.arm_full},
            {"malformed", s.malformed_records}}},
          {"sockets",
           {{"kafka", s.sockets_kafka},
            {"zmtp", s.sockets_zmtp},
            {"other", s.sockets_other},
            {"kafka_broker_side", s.sockets_kafka_broker_side},
            {"outside_domains", s.sockets_outside_domains}}},
          {"classified_mid_stream", s.sockets_mid_stream},
          {"calls_without_buffer", s.calls_without_buffer},
          {"outside_domain_calls", s.outside_calls},
          {"wakeups", s.wakeups},
          {"rejected", rejected},
          {"outside_domains", p.outside_domains},
          {"zmtp",
           {{"send_messages", m.zmtp_send_messages},
            {"recv_messages", m.zmtp_recv_messages},
            {"pairs", m.zmtp_pairs},
            {"pairing_ratio", ratio(m.zmtp_pairs, m.zmtp_send_messages)},
            {"diverted_to_exchange", m.zmtp_diverted},  // halves of cross-host messages: paired by the owner
            {"mirrored",  // receives not copied: the sender's parse here names their messages
             {{"calls_not_copied", s.recv_mirrored},
              {"calls", m.zmtp_mirrored_calls},
              {"unresolved_calls", m.zmtp_mirror_unresolved_calls},
              {"messages_given_up", m.zmtp_mirror_messages_given_up},
              {"boundaries_dropped", m.zmtp_mirror_boundaries_dropped}}},
            {"streams",
             {{"zmtp3", m.zmtp_streams_v3},
              {"zmtp2", m.zmtp_streams_v2},
              {"downgraded_to_zmtp2", m.zmtp_streams_downgraded}}},
            {"unparsed_streams", zmtp_unparsed_json(m, domain_names)}}},
          {"kafka",
           {{"produced_batches", m.kafka_produced_batches},
            {"fetched_batches", m.kafka_fetched_batches},
            {"pairs", m.kafka_pairs},
            {"paired_records", m.kafka_paired_records},
            {"pairing_ratio", ratio(m.kafka_pairs, m.kafka_produced_batches)},
            {"unkeyed_batches", m.kafka_unkeyed_batches}}},
          {"unpaired_sends", m.unpaired_sends},
          {"unpaired_recvs", m.unpaired_recvs},
          {"duplicate_halves", m.duplicate_halves},
          {"dropped_table_full", m.dropped_table_full},
          {"streams_refused", m.streams_refused},
          {"parser_sync_losses", m.parser_sync_losses},
          {"parser_invalid", m.parser_invalid},
          {"parser_resyncs_from_other_end", m.parser_resyncs_from_other_end},
          {"pending", p.pending}};
}

void append_payload_metrics(PrometheusWriter& w, const PayloadReport& p) {
  const auto& s = p.source;
  const auto& m = p.pairing;
  w.family("skewscope_payload_records_total", "counter",
           "Payload records (bounded copies of a send or receive on a Kafka or ZMTP socket) read by the agent.");
  w.sample("skewscope_payload_records_total", static_cast<double>(p.records));
  w.family("skewscope_payload_truncated_total", "counter",
           "Payload records whose call moved more bytes than --payload-bytes copied.");
  w.sample("skewscope_payload_truncated_total", static_cast<double>(s.truncated));
  w.family("skewscope_payload_lost_total", "counter", "Payload records not delivered, by reason.");
  w.sample("skewscope_payload_lost_total", {{"reason", "ring_buffer_full"}}, static_cast<double>(s.ringbuf_full));
  w.sample("skewscope_payload_lost_total", {{"reason", "read_failed"}}, static_cast<double>(s.read_failed));
  w.sample("skewscope_payload_lost_total", {{"reason", "table_full"}}, static_cast<double>(s.arm_full));
  w.sample("skewscope_payload_lost_total", {{"reason", "malformed"}}, static_cast<double>(s.malformed_records));
  w.family("skewscope_payload_sockets_total", "counter", "Sockets classified by the payload detector, by protocol.");
  w.sample("skewscope_payload_sockets_total", {{"protocol", "kafka"}}, static_cast<double>(s.sockets_kafka));
  w.sample("skewscope_payload_sockets_total", {{"protocol", "zmtp"}}, static_cast<double>(s.sockets_zmtp));
  w.sample("skewscope_payload_sockets_total", {{"protocol", "other"}}, static_cast<double>(s.sockets_other));
  w.sample("skewscope_payload_sockets_total", {{"protocol", "kafka_broker_side"}},
           static_cast<double>(s.sockets_kafka_broker_side));
  w.sample("skewscope_payload_sockets_total", {{"protocol", "outside_domains"}},
           static_cast<double>(s.sockets_outside_domains));
  w.family("skewscope_message_halves_total", "counter",
           "Message halves found in the payloads: ZMTP messages and Kafka record batches, by transport and kind.");
  w.sample("skewscope_message_halves_total", {{"transport", "zmtp"}, {"kind", "send"}},
           static_cast<double>(m.zmtp_send_messages));
  w.sample("skewscope_message_halves_total", {{"transport", "zmtp"}, {"kind", "recv"}},
           static_cast<double>(m.zmtp_recv_messages));
  w.sample("skewscope_message_halves_total", {{"transport", "kafka"}, {"kind", "send"}},
           static_cast<double>(m.kafka_produced_batches));
  w.sample("skewscope_message_halves_total", {{"transport", "kafka"}, {"kind", "recv"}},
           static_cast<double>(m.kafka_fetched_batches));
  w.family(
      "skewscope_message_unpaired_total", "counter",
      "Message halves that will not pair, by kind: aged out, or (ZMTP) passed by a later message of the other side.");
  w.sample("skewscope_message_unpaired_total", {{"kind", "send"}}, static_cast<double>(m.unpaired_sends));
  w.sample("skewscope_message_unpaired_total", {{"kind", "recv"}}, static_cast<double>(m.unpaired_recvs));
}

}  // namespace skewscope
