#include "otlp/span_export.hpp"

#include <arpa/inet.h>
#include <zlib.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "opentelemetry/otlp_trace_subset.pb.h"

namespace skewscope::otlp {
namespace {

namespace pb = skewscope::otlp::v1;

void add_string(pb::Span& out, const char* key, const std::string& value) {
  auto* kv = out.add_attributes();
  kv->set_key(key);
  kv->mutable_value()->set_string_value(value);
}
void add_bool(pb::Span& out, const char* key, bool value) {
  auto* kv = out.add_attributes();
  kv->set_key(key);
  kv->mutable_value()->set_bool_value(value);
}
void add_int(pb::Span& out, const char* key, std::int64_t value) {
  auto* kv = out.add_attributes();
  kv->set_key(key);
  kv->mutable_value()->set_int_value(value);
}
void add_double(pb::Span& out, const char* key, double value) {
  auto* kv = out.add_attributes();
  kv->set_key(key);
  kv->mutable_value()->set_double_value(value);
}

std::string random_id(std::mt19937_64& ids, std::size_t bytes) {
  std::string id(bytes, '\0');
  do {
    for (std::size_t i = 0; i < bytes; i += 8) {
      const std::uint64_t r = ids();
      for (std::size_t j = 0; j < 8 && i + j < bytes; ++j) id[i + j] = static_cast<char>(r >> (8 * j));
    }
  } while (id.find_first_not_of('\0') == std::string::npos);  // all-zero ids are invalid in OTLP
  return id;
}

std::string span_name(const ExportSpan& s) {
  if (s.span.transport == Transport::kafka && !s.topic.empty()) return s.topic + " deliver";
  return std::string(transport_name(s.span.transport)) + " " + s.src + " -> " + s.dst;
}

// Timestamps before the epoch (a hostile simulated offset) cannot be a fixed64 of nanoseconds.
std::uint64_t unix_nano(std::int64_t ns) { return ns < 0 ? 0 : static_cast<std::uint64_t>(ns); }

// The OTel network and server conventions, from the span's point of view: it ends where the
// message was received, so the receiving socket is the local end. Kafka (CONSUMER): the peer is
// the broker the consumer fetched from, which is also the server. TCP, ZeroMQ: the peer is the
// sender's socket; which end accepted the connection is not known, so no server.* is claimed.
void add_endpoints(pb::Span& out, const ExportSpan& s) {
  if (!s.socket) return;
  const FlowKey& f = *s.socket;
  if (s.span.transport == Transport::kafka) {
    add_string(out, "server.address", address_text(f.dst_addr));
    add_int(out, "server.port", f.dst_port);
    add_string(out, "network.peer.address", address_text(f.dst_addr));
    add_int(out, "network.peer.port", f.dst_port);
    add_string(out, "network.local.address", address_text(f.src_addr));
    add_int(out, "network.local.port", f.src_port);
  } else {
    add_string(out, "network.peer.address", address_text(f.src_addr));
    add_int(out, "network.peer.port", f.src_port);
    add_string(out, "network.local.address", address_text(f.dst_addr));
    add_int(out, "network.local.port", f.dst_port);
  }
  add_string(out, "network.transport", "tcp");
}

void fill_span(pb::Span& out, const ExportSpan& s, std::mt19937_64& ids) {
  out.set_trace_id(random_id(ids, 16));
  out.set_span_id(random_id(ids, 8));
  out.set_name(span_name(s));
  out.set_kind(static_cast<pb::Span::SpanKind>(span_kind(s.span.transport)));
  // Raw: the send in the sender's clock, the receive in the receiver's. A negative span keeps its
  // end before its start: that is the finding, not something to hide.
  out.set_start_time_unix_nano(unix_nano(s.span.send_ns));
  out.set_end_time_unix_nano(unix_nano(s.span.recv_ns));
  add_string(out, "skewscope.src", s.src);
  add_string(out, "skewscope.dst", s.dst);
  add_string(out, "skewscope.transport", transport_name(s.span.transport));
  add_bool(out, "skewscope.negative", s.span.span_ns() < 0);
  add_string(out, "skewscope.state", pair_state_name(s.state));
  add_string(out, "skewscope.timestamp_source", timestamp_source_name(s.span.timestamp_source));
  add_int(out, "skewscope.bytes", s.span.bytes);
  if (s.span.transport == Transport::zmtp) add_int(out, "skewscope.messages", s.span.messages);
  if (s.offset_ns) add_double(out, "skewscope.offset", *s.offset_ns * 1e-9);
  if (s.bound_ns) add_double(out, "skewscope.offset_bound", *s.bound_ns * 1e-9);
  add_bool(out, "skewscope.corrected", s.corrected.corrected);
  if (s.trusted) add_bool(out, "skewscope.trusted", *s.trusted);
  if (s.corrected.corrected && s.corrected.corrected_recv_ns) {
    add_int(out, "skewscope.corrected_start_unix_nano", s.corrected.send_ns);
    add_int(out, "skewscope.corrected_end_unix_nano", *s.corrected.corrected_recv_ns);
    add_bool(out, "skewscope.correction_capped", s.corrected.capped);
  }
  add_endpoints(out, s);
  if (s.span.transport == Transport::kafka) {
    add_string(out, "messaging.system", "kafka");
    add_string(out, "messaging.operation.type", "receive");
    if (!s.topic.empty()) add_string(out, "messaging.destination.name", s.topic);
    // A string in the messaging conventions (partition ids are not numbers in every system).
    if (s.partition >= 0) add_string(out, "messaging.destination.partition.id", std::to_string(s.partition));
    if (s.records > 0) add_int(out, "messaging.batch.message_count", s.records);
  }
}

}  // namespace

std::string address_text(const Address& address) {
  static constexpr std::uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[INET6_ADDRSTRLEN] = {};
  if (std::equal(std::begin(kV4Mapped), std::end(kV4Mapped), address.begin()))
    inet_ntop(AF_INET, address.data() + 12, text, sizeof text);
  else
    inet_ntop(AF_INET6, address.data(), text, sizeof text);
  return text;
}

OtlpSpanKind span_kind(Transport transport) {
  // Kafka: the span ends where the consumer received the batch, so CONSUMER (its start is the
  // producer's send, on the producer's clock). TCP, ZMTP and RDMA carry one-way messages with no
  // request/response the agent can see: CLIENT/SERVER would claim one, so the kind stays neutral.
  return transport == Transport::kafka ? OtlpSpanKind::consumer : OtlpSpanKind::unspecified;
}

std::uint64_t connection_hash(const ExportSpan& s) {
  // FNV-1a over the bytes, then a finalizer: the same decision on every agent, build and run.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) h = (h ^ static_cast<const std::uint8_t*>(data)[i]) * 1099511628211ull;
  };
  if (s.socket) {
    // Both directions of a connection are one decision: its two ends in a fixed order.
    auto a = std::tie(s.socket->src_addr, s.socket->src_port);
    auto b = std::tie(s.socket->dst_addr, s.socket->dst_port);
    const auto& [lo_addr, lo_port] = std::min(a, b);
    const auto& [hi_addr, hi_port] = std::max(a, b);
    mix(lo_addr.data(), lo_addr.size());
    mix(&lo_port, sizeof lo_port);
    mix(hi_addr.data(), hi_addr.size());
    mix(&hi_port, sizeof hi_port);
  } else {
    // No socket known: the stream (sender, receiver, transport, topic) is the nearest thing.
    for (const std::string* text : {&s.src, &s.dst, &s.topic}) {
      mix(text->data(), text->size());
      mix("", 1);  // a separator, so that ("ab", "c") and ("a", "bc") differ
    }
  }
  const auto transport = static_cast<std::uint8_t>(s.span.transport);
  mix(&transport, 1);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h;
}

bool keep_span(const ExportSpan& s, std::uint32_t sample_one_in) {
  if (sample_one_in <= 1) return true;
  if (s.span.span_ns() < 0 || s.at_risk || s.state == PairState::at_risk || s.state == PairState::violated) return true;
  return connection_hash(s) % sample_one_in == 0;
}

std::string encode_request(const std::vector<ExportSpan>& spans, const ExportIdentity& identity, std::mt19937_64& ids) {
  pb::ExportTraceServiceRequest request;
  auto* rs = request.add_resource_spans();
  for (const auto& [key, value] : identity.resource) {
    auto* kv = rs->mutable_resource()->add_attributes();
    kv->set_key(key);
    kv->mutable_value()->set_string_value(value);
  }
  auto* ss = rs->add_scope_spans();
  ss->mutable_scope()->set_name("skewscope");
  ss->mutable_scope()->set_version(identity.scope_version);
  for (const auto& s : spans) fill_span(*ss->add_spans(), s, ids);
  return request.SerializeAsString();
}

std::int64_t rejected_spans(const std::string& response_body) {
  pb::ExportTraceServiceResponse response;
  if (response_body.empty() || !response.ParseFromString(response_body)) return 0;
  return response.partial_success().rejected_spans();
}

Result<std::string> gzip(const std::string& data) {
  z_stream z{};
  // 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return Result<std::string>::fail("gzip: deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const auto written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Result<std::string>::fail("gzip: deflate did not finish");
  out.resize(written);
  return Result<std::string>::ok(std::move(out));
}

}  // namespace skewscope::otlp
