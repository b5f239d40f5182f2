#include "otlp/metric_export.hpp"

#include <doctest/doctest.h>

#include <map>

#include "opentelemetry/otlp_metrics_subset.pb.h"

using namespace skewscope;
using namespace skewscope::otlp;
namespace pb = skewscope::otlp::v1;

namespace {

std::map<std::string, std::string> attributes(const pb::NumberDataPoint& p) {
  std::map<std::string, std::string> out;
  for (const auto& kv : p.attributes()) out[kv.key()] = kv.value().string_value();
  return out;
}

}  // namespace

TEST_CASE("each pair's gauges: known values as double points, unknown ones left out, the state as a state set") {
  MetricsSnapshot snapshot;
  snapshot.time_unix_nano = 1'700'000'000'000'000'000;
  PairGauges known;
  known.src = "a";
  known.dst = "b";
  known.health = 1;
  known.state = PairState::ok;
  known.offset_s = 0.0025;
  known.offset_bound_s = 0.0004;
  known.delta_t_min_s = 0.00003;
  PairGauges unknown;
  unknown.src = "b";
  unknown.dst = "c";
  unknown.transport = Transport::kafka;
  snapshot.pairs = {known, unknown};
  CHECK(data_points(snapshot) == 6);  // 4 of the known pair, and a state for each

  Attributes resource{{"service.name", "skewscope"}};
  pb::ExportMetricsServiceRequest request;
  REQUIRE(request.ParseFromString(encode_metrics_request(snapshot, ExportIdentity{resource, "9.9"})));
  REQUIRE(request.resource_metrics_size() == 1);
  const auto& sm = request.resource_metrics(0).scope_metrics(0);
  CHECK(sm.scope().name() == "skewscope");
  std::map<std::string, const pb::Metric*> metrics;
  for (const auto& m : sm.metrics()) metrics[m.name()] = &m;
  REQUIRE(metrics.size() == 5);
  std::size_t points = 0;
  for (const auto& [name, m] : metrics) {
    REQUIRE(m->has_gauge());
    points += static_cast<std::size_t>(m->gauge().data_points_size());
    for (const auto& p : m->gauge().data_points()) CHECK(p.time_unix_nano() == 1'700'000'000'000'000'000ull);
  }
  CHECK(points == data_points(snapshot));
  const auto& health = metrics["skewscope.pair.causality_health"]->gauge();
  REQUIRE(health.data_points_size() == 1);  // the unknown pair has no point, not a 0
  CHECK(health.data_points(0).as_double() == 1.0);
  CHECK(attributes(health.data_points(0)) == std::map<std::string, std::string>{{"skewscope.src", "a"},
                                                                                {"skewscope.dst", "b"},
                                                                                {"skewscope.transport", "tcp"}});
  CHECK(metrics["skewscope.pair.offset"]->unit() == "s");
  CHECK(metrics["skewscope.pair.offset"]->gauge().data_points(0).as_double() == 0.0025);
  CHECK(metrics["skewscope.pair.offset_bound"]->gauge().data_points(0).as_double() == 0.0004);
  CHECK(metrics["skewscope.pair.delta_t_min"]->gauge().data_points(0).as_double() == 0.00003);
  const auto& state = metrics["skewscope.pair.state"]->gauge();
  REQUIRE(state.data_points_size() == 2);
  CHECK(state.data_points(0).as_int() == 1);
  CHECK(attributes(state.data_points(0))["skewscope.state"] == "ok");
  CHECK(attributes(state.data_points(1))["skewscope.state"] == "unknown");
  CHECK(attributes(state.data_points(1))["skewscope.transport"] == "kafka");
}

TEST_CASE("partial success of a metrics export") {
  pb::ExportMetricsServiceResponse response;
  response.mutable_partial_success()->set_rejected_data_points(3);
  CHECK(rejected_data_points(response.SerializeAsString()) == 3);
  CHECK(rejected_data_points("") == 0);
  CHECK(rejected_data_points("\xff\xff garbage") == 0);
}
