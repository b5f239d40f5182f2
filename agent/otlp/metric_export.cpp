#include "otlp/metric_export.hpp"

#include "opentelemetry/otlp_metrics_subset.pb.h"

namespace skewscope::otlp {
namespace {

namespace pb = skewscope::otlp::v1;

struct Gauge {
  const char* name;
  const char* description;
  const char* unit;
  std::optional<double> (*value)(const PairGauges&);
};

// One gauge per value of the status JSON's pair: same name stem, same meaning (docs/contract.md).
const Gauge kGauges[] = {
    {"skewscope.pair.causality_health",
     "1 when timestamps can order events between the pair, 0 when they cannot; no point when unknown", "1",
     [](const PairGauges& p) { return p.health ? std::optional<double>(*p.health) : std::nullopt; }},
    {"skewscope.pair.offset", "clock(dst) - clock(src), midpoint of the settled interval", "s",
     [](const PairGauges& p) { return p.offset_s; }},
    {"skewscope.pair.offset_bound", "half-width of the offset interval", "s",
     [](const PairGauges& p) { return p.offset_bound_s; }},
    {"skewscope.pair.delta_t_min",
     "half the minimum round trip between the pair: a clock offset above it inverts messages", "s",
     [](const PairGauges& p) { return p.delta_t_min_s; }},
};

void add_pair_attributes(pb::NumberDataPoint& point, const PairGauges& p) {
  auto add = [&point](const char* key, const std::string& value) {
    auto* kv = point.add_attributes();
    kv->set_key(key);
    kv->mutable_value()->set_string_value(value);
  };
  add("skewscope.src", p.src);
  add("skewscope.dst", p.dst);
  add("skewscope.transport", transport_name(p.transport));
}

pb::NumberDataPoint& new_point(pb::Metric& metric, const PairGauges& p, std::int64_t time_unix_nano) {
  auto* point = metric.mutable_gauge()->add_data_points();
  point->set_time_unix_nano(time_unix_nano < 0 ? 0 : static_cast<std::uint64_t>(time_unix_nano));
  add_pair_attributes(*point, p);
  return *point;
}

}  // namespace

std::size_t data_points(const MetricsSnapshot& snapshot) {
  std::size_t n = snapshot.pairs.size();  // the state gauge has a point for every pair
  for (const auto& g : kGauges)
    for (const auto& p : snapshot.pairs) n += g.value(p) ? 1 : 0;
  return n;
}

std::string encode_metrics_request(const MetricsSnapshot& snapshot, const ExportIdentity& identity) {
  pb::ExportMetricsServiceRequest request;
  auto* rm = request.add_resource_metrics();
  for (const auto& [key, value] : identity.resource) {
    auto* kv = rm->mutable_resource()->add_attributes();
    kv->set_key(key);
    kv->mutable_value()->set_string_value(value);
  }
  auto* sm = rm->add_scope_metrics();
  sm->mutable_scope()->set_name("skewscope");
  sm->mutable_scope()->set_version(identity.scope_version);
  for (const auto& g : kGauges) {
    pb::Metric metric;
    metric.set_name(g.name);
    metric.set_description(g.description);
    metric.set_unit(g.unit);
    for (const auto& p : snapshot.pairs)
      if (auto v = g.value(p)) new_point(metric, p, snapshot.time_unix_nano).set_as_double(*v);
    if (metric.has_gauge()) *sm->add_metrics() = std::move(metric);
  }
  // The state as a state set: one point per pair, value 1, the state's name an attribute (as
  // Prometheus' skewscope_pair_state does with a label), so a backend can group by it.
  pb::Metric state;
  state.set_name("skewscope.pair.state");
  state.set_description("1 for the pair's current state (ok, at_risk, violated, unknown), named in skewscope.state");
  state.set_unit("1");
  for (const auto& p : snapshot.pairs) {
    auto& point = new_point(state, p, snapshot.time_unix_nano);
    auto* kv = point.add_attributes();
    kv->set_key("skewscope.state");
    kv->mutable_value()->set_string_value(pair_state_name(p.state));
    point.set_as_int(1);
  }
  if (state.has_gauge()) *sm->add_metrics() = std::move(state);
  return request.SerializeAsString();
}

std::int64_t rejected_data_points(const std::string& response_body) {
  pb::ExportMetricsServiceResponse response;
  if (response_body.empty() || !response.ParseFromString(response_body)) return 0;
  return response.partial_success().rejected_data_points();
}

}  // namespace skewscope::otlp
