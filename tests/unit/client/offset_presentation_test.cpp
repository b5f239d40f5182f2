// An offset reaches the outputs only with its bound and only from a settled two-sided interval:
// the status JSON says why not, /metrics leaves the series out, the table prints "-".
#include <doctest/doctest.h>

#include <string>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"
#include "client/status_table.hpp"

using namespace skewscope;

namespace {

PairReport pair_report(DomainId src, DomainId dst) {
  PairReport p;
  p.key = {src, dst, Transport::tcp};
  p.spans = 100;
  p.window = {100, 0, 20'000, {}};
  p.health = 1;
  p.state = PairState::ok;
  return p;
}

estimate::PairEstimate two_sided(DomainId src, DomainId dst, double lower, double upper, bool settled) {
  estimate::PairEstimate e;
  e.src = src;
  e.dst = dst;
  e.forward_spans = e.reverse_spans = 100;
  e.lower_ns = lower;
  e.upper_ns = upper;
  e.offset_ns = (lower + upper) / 2;
  e.bound_ns = (upper - lower) / 2;
  e.dt_min_ns = 20'000;
  e.settled = settled;
  return e;
}

// Domains 1..4: a request/response pair (settled), a one-way hop (one-sided), a one-way hop
// whose handshake is still in the window (two-sided but widening), and a pair with no estimate.
AgentReport report() {
  AgentReport r;
  r.domain_names = {"host", "client", "server", "push", "pull", "x", "y"};
  r.health.window_ns = 30'000'000'000;
  r.health.health = 1;
  r.health.capture_up = true;
  for (auto [s, d] : {std::pair{1, 2}, {3, 4}, {4, 3}, {5, 6}}) r.health.pairs.push_back(pair_report(s, d));
  r.estimates.push_back(two_sided(1, 2, -21'000, 19'000, true));
  estimate::PairEstimate one;
  one.src = 3;
  one.dst = 4;
  one.forward_spans = 100;
  one.upper_ns = 25'000;
  r.estimates.push_back(one);
  r.estimates.push_back(two_sided(4, 3, -25'000, 1'400'000, false));  // reverse: the widening one
  return r;
}

const nlohmann::json& pair(const nlohmann::json& s, const std::string& src, const std::string& dst) {
  for (const auto& p : s["pairs"])
    if (p["src"] == src && p["dst"] == dst) return p;
  FAIL("no pair " << src << " -> " << dst);
  static nlohmann::json none;
  return none;
}

}  // namespace

TEST_CASE("status JSON: offset with bound, or offset_missing with the side that is missing") {
  const auto s = status_json(report());
  const auto& ok = pair(s, "client", "server");
  CHECK(ok["offset_seconds"].get<double>() == doctest::Approx(-1e-6));
  CHECK(ok["offset_bound_seconds"].get<double>() == doctest::Approx(20e-6));
  CHECK(ok["offset_missing"].is_null());
  CHECK(ok["at_risk_basis"] == "settled_interval");

  const auto& oneway = pair(s, "push", "pull");
  CHECK(oneway["offset_seconds"].is_null());
  CHECK(oneway["offset_bound_seconds"].is_null());
  CHECK(oneway["offset_missing"] == "one_sided");
  CHECK(oneway["offset_missing_bound"] == "lower");
  CHECK(oneway["offset_upper_bound_seconds"].get<double>() == doctest::Approx(25e-6));
  CHECK(oneway["at_risk"].is_null());
  CHECK(oneway["at_risk_basis"] == "not_assessed");

  const auto& widening = pair(s, "pull", "push");
  CHECK(widening["offset_seconds"].is_null());
  CHECK(widening["offset_missing"] == "unsettled");
  CHECK(widening["offset_missing_bound"].is_null());
  CHECK(widening["offset_lower_bound_seconds"].is_number());  // the interval itself stays visible

  const auto& none = pair(s, "x", "y");
  CHECK(none["offset_missing"] == "no_estimate");
  CHECK(none["at_risk_basis"] == "not_assessed");
}

TEST_CASE("metrics: no offset or bound sample for a one-sided or unsettled pair") {
  const std::string text = render_agent_metrics(report(), "test");
  CHECK(text.find("skewscope_clock_offset_seconds{src=\"client\",dst=\"server\"} -1e-06\n") != std::string::npos);
  CHECK(text.find("skewscope_clock_offset_bound_seconds{src=\"client\",dst=\"server\"} 2e-05\n") != std::string::npos);
  for (const char* family : {"skewscope_clock_offset_seconds{", "skewscope_clock_offset_bound_seconds{"}) {
    INFO(family);
    CHECK(text.find(std::string(family) + "src=\"push\"") == std::string::npos);
    CHECK(text.find(std::string(family) + "src=\"pull\"") == std::string::npos);
    CHECK(text.find(std::string(family) + "src=\"x\"") == std::string::npos);
  }
}

TEST_CASE("table: OFFSET ± BOUND, or '-'") {
  const std::string table = render_status_table(status_json(report()));
  CHECK(table.find("OFFSET ± BOUND") != std::string::npos);
  CHECK(table.find("-1us ± 20us") != std::string::npos);
  CHECK(table.find("1.4") == std::string::npos);  // nothing of the widening interval's midpoint or width
  CHECK(table.find("687") == std::string::npos);  // its midpoint, 687.5 us
  // Every line from the header to the blank line (after which the reasons for unknown healths
  // follow) has the same width in columns (fixed-width fields), with or without the two-byte "±".
  std::size_t rows = 0, first = 0;
  for (std::size_t start = table.find("SRC"); start < table.size() && table[start] != '\n'; ++rows) {
    const std::size_t end = table.find('\n', start);
    std::size_t columns = 0;
    for (std::size_t i = start; i < end; ++i) columns += (static_cast<unsigned char>(table[i]) & 0xC0) != 0x80;
    if (rows == 0) first = columns;
    CHECK(columns == first);
    start = end + 1;
  }
  CHECK(rows == 5);
}
