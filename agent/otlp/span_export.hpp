// One paired span as an OTLP span (docs/otlp.md, "What a span carries"), the sampling rule, and
// the encoding of a batch into an ExportTraceServiceRequest. Pure: the exporter thread
// (otlp_exporter.hpp) sends what this encodes; the tests decode it again.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "estimate/correct.hpp"
#include "health/health_tracker.hpp"
#include "otlp/otlp_settings.hpp"
#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope::otlp {

// A span and what the agent knew of its pair when it was read (under the core's lock).
struct ExportSpan {
  Span span;
  std::string src;  // domain names
  std::string dst;
  std::string topic;  // Kafka only
  std::int32_t partition = -1;
  std::int32_t records = 0;
  estimate::CorrectedSpan corrected;  // raw times always; the correction only when settled and two-sided
  std::optional<double> offset_ns;    // the pair's offset midpoint and half-width, when two-sided
  std::optional<double> bound_ns;
  PairState state = PairState::unknown;
  bool at_risk = false;
  // --policy-file: false while a policy covering the pair is not met, true while every one is;
  // nullopt when no policy covers the pair (the attribute is then absent, as on /api/v1/spans).
  std::optional<bool> trusted;
  // The socket behind the span, when the agent saw it (AgentCore::RecentSpan::socket): TCP, the
  // flow sender -> receiver; Kafka, the consumer's socket consumer -> broker.
  std::optional<FlowKey> socket;
};

// An address as OTel's network.*.address wants it: dotted IPv4 for an IPv4-mapped one, else IPv6.
std::string address_text(const Address& address);

// OTLP's SpanKind numbers (trace/v1): the kinds this exporter uses.
enum class OtlpSpanKind : int { unspecified = 0, consumer = 5 };
OtlpSpanKind span_kind(Transport transport);

// --otlp-sample 1/N: keeps every span of one connection in N (both directions of a socket pair;
// a span with no socket known falls back to its stream: sender, receiver, transport, topic), and
// always a negative span and every span of an at-risk or violated pair.
bool keep_span(const ExportSpan& s, std::uint32_t sample_one_in);
// The hash that decision is taken on: the same for both directions of one connection, and the
// same on every run and build (no std::hash), so agents sample alike.
std::uint64_t connection_hash(const ExportSpan& s);

struct ExportIdentity {
  const Attributes& resource;
  std::string scope_version;
};

// Serialized ExportTraceServiceRequest: one resource, one scope, the spans in order. Trace and
// span ids are random (each span is its own trace: the agent sees no trace context).
std::string encode_request(const std::vector<ExportSpan>& spans, const ExportIdentity& identity, std::mt19937_64& ids);

// The receiver's ExportTraceServiceResponse: how many spans it says it rejected (partial
// success), 0 for an empty or undecodable body (a 2xx is success either way).
std::int64_t rejected_spans(const std::string& response_body);

// gzip (RFC 1952) of `data`, for Content-Encoding: gzip.
Result<std::string> gzip(const std::string& data);

}  // namespace skewscope::otlp
