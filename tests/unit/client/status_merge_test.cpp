#include <doctest/doctest.h>

#include <limits>

#include "client/status_merge.hpp"

using namespace skewscope;
using nlohmann::json;

namespace {

json pair(const std::string& src, const std::string& dst, const std::string& state, json window_spans,
          json age = nullptr) {
  json p = {{"src", src},
            {"dst", dst},
            {"transport", "tcp"},
            {"spans", 10},
            {"negative_spans", 0},
            {"window_spans", window_spans},
            {"window_negative_spans", 0},
            {"negative_span_ratio", 0.0},
            {"health", state == "violated"  ? json(0)
                       : state == "unknown" ? json(nullptr)
                                            : json(1)},
            {"state", state}};
  if (!age.is_null()) p["last_span_age_seconds"] = age;
  return p;
}

json status(json health, json pairs, std::uint64_t events = 100) {
  return {{"health", health},
          {"window_seconds", 30},
          {"pairs", pairs},
          {"capture", {{"events", events}, {"lost", 1}, {"pairing_ratio", 0.5}}}};
}

AgentStatus up(const std::string& url, json s) { return {url, s, {}}; }
AgentStatus down(const std::string& url) { return {url, std::nullopt, "cannot reach the agent at " + url}; }

const json& find_pair(const json& merged, const std::string& src, const std::string& dst) {
  for (const auto& p : merged["pairs"])
    if (p["src"] == src && p["dst"] == dst) return p;
  FAIL("pair not in the merged view: " << src << "->" << dst);
  static json none;
  return none;
}

}  // namespace

TEST_CASE("a known state beats unknown, whatever the age or window") {
  CHECK(prefer_pair_report(pair("a", "b", "ok", 1, 50.0), pair("a", "b", "unknown", 0, 0.1)));
  CHECK_FALSE(prefer_pair_report(pair("a", "b", "unknown", 900, 0.1), pair("a", "b", "violated", 1, 20.0)));
}

TEST_CASE("then the fresher last span wins; a missing or null age counts as never") {
  CHECK(prefer_pair_report(pair("a", "b", "ok", 10, 0.5), pair("a", "b", "ok", 500, 3.0)));
  CHECK_FALSE(prefer_pair_report(pair("a", "b", "ok", 500, 3.0), pair("a", "b", "ok", 10, 0.5)));
  CHECK(prefer_pair_report(pair("a", "b", "ok", 1, 100.0), pair("a", "b", "ok", 500)));  // no age: +inf
  json null_age = pair("a", "b", "ok", 500);
  null_age["last_span_age_seconds"] = nullptr;
  CHECK(prefer_pair_report(pair("a", "b", "ok", 1, 100.0), null_age));
  CHECK_FALSE(prefer_pair_report(null_age, pair("a", "b", "ok", 1, 100.0)));
}

TEST_CASE("then the larger window; a full tie keeps the current report") {
  CHECK(prefer_pair_report(pair("a", "b", "ok", 300, 1.0), pair("a", "b", "ok", 200, 1.0)));
  CHECK(prefer_pair_report(pair("a", "b", "ok", 300), pair("a", "b", "ok", 200)));
  CHECK_FALSE(prefer_pair_report(pair("a", "b", "ok", 300, 1.0), pair("a", "b", "ok", 300, 1.0)));
}

TEST_CASE("disjoint agents: the union of their pairs, counters summed, health 1") {
  json merged =
      merge_statuses({up("http://x", status(1, {pair("a", "b", "ok", 5)}, 100)),
                      up("http://y", status(1, {pair("c", "d", "ok", 7), pair("d", "c", "at_risk", 2)}, 50))});
  CHECK(merged["health"] == 1);
  CHECK(merged["health_reason"].is_null());
  CHECK(merged["pairs"].size() == 3);
  CHECK(find_pair(merged, "a", "b")["agent"] == "http://x");
  CHECK(find_pair(merged, "d", "c")["agent"] == "http://y");
  CHECK(merged["capture"]["events"] == 150);
  CHECK(merged["capture"]["lost"] == 2);
  CHECK_FALSE(merged["capture"].contains("pairing_ratio"));  // a ratio does not add up
  CHECK(merged["window_seconds"] == 30);
  REQUIRE(merged["agents"].size() == 2);
  CHECK(merged["agents"][0] == json{{"url", "http://x"},
                                    {"reachable", true},
                                    {"error", nullptr},
                                    {"health", 1},
                                    {"pairs", 1},
                                    {"reported_pairs", 1}});
  CHECK(merged["agents"][1]["pairs"] == 2);
  CHECK(merged_status_exit_code(merged) == 0);
}

TEST_CASE("hand-over: one report per pair, the new owner's once its window holds spans") {
  // The old owner still has its last window; the new owner has just started (unknown).
  json old_owner = status(1, {pair("a", "b", "ok", 300, 4.0)});
  json new_owner = status(1, {pair("a", "b", "unknown", 0)});
  json merged = merge_statuses({up("http://new", new_owner), up("http://old", old_owner)});
  REQUIRE(merged["pairs"].size() == 1);
  CHECK(merged["pairs"][0]["agent"] == "http://old");
  CHECK(merged["agents"][0]["pairs"] == 0);
  CHECK(merged["agents"][0]["reported_pairs"] == 1);
  // Later: the new owner has fresh spans, the old one's are ageing.
  new_owner = status(1, {pair("a", "b", "ok", 20, 0.2)});
  old_owner = status(1, {pair("a", "b", "ok", 280, 9.0)});
  merged = merge_statuses({up("http://old", old_owner), up("http://new", new_owner)});
  REQUIRE(merged["pairs"].size() == 1);
  CHECK(merged["pairs"][0]["agent"] == "http://new");
  CHECK(merged["pairs"][0]["window_spans"] == 20);
}

TEST_CASE("a pair violated in the merged view makes health 0, even with an agent unreachable") {
  json merged = merge_statuses({up("http://x", status(0, {pair("a", "b", "violated", 5, 1.0)})), down("http://y")});
  CHECK(merged["health"] == 0);
  CHECK(merged_status_exit_code(merged) == 1);
  CHECK(merged["agents"][1]["reachable"] == false);
  CHECK(merged["agents"][1]["error"] == "cannot reach the agent at http://y");
}

TEST_CASE("a stale violation replaced by a fresher ok report does not make health 0") {
  json merged = merge_statuses({up("http://x", status(0, {pair("a", "b", "violated", 5, 25.0)})),
                                up("http://y", status(1, {pair("a", "b", "ok", 50, 0.1)}))});
  CHECK(find_pair(merged, "a", "b")["state"] == "ok");
  CHECK(merged["health"] == 1);
}

TEST_CASE("an unreachable agent makes health null and says which; exit 3") {
  json merged = merge_statuses({up("http://x", status(1, {pair("a", "b", "ok", 5)})), down("http://y")});
  CHECK(merged["health"].is_null());
  CHECK(merged["health_reason"] == "agent http://y unreachable");
  CHECK(merged_status_exit_code(merged) == 3);
  std::string text = render_agents_section(merged);
  CHECK(text.find("1 of 2 reachable") != std::string::npos);
  CHECK(text.find("unreachable: cannot reach the agent at http://y") != std::string::npos);
  CHECK(text.find("causality_health unknown: agent http://y unreachable") != std::string::npos);
}

TEST_CASE("an agent reporting unknown health makes health null and says which; exit 1") {
  json merged = merge_statuses(
      {up("http://x", status(1, {pair("a", "b", "ok", 5)})), up("http://y", status(nullptr, json::array()))});
  CHECK(merged["health"].is_null());
  CHECK(merged["health_reason"] == "agent http://y reports unknown health");
  CHECK(merged_status_exit_code(merged) == 1);
  CHECK(render_agents_section(merged).find("http://y") != std::string::npos);
}

TEST_CASE("agents that disagree on the window: window unknown") {
  json other = status(1, json::array());
  other["window_seconds"] = 2;
  json merged = merge_statuses({up("http://x", status(1, json::array())), up("http://y", other)});
  CHECK(merged["window_seconds"].is_null());
}

TEST_CASE("odd answers from an agent of another version are tolerated, never trusted blindly") {
  json odd = {{"health", "yes"}, {"pairs", {1, "x", {{"src", 3}}, pair("a", "b", "ok", 2)}}, {"capture", 7}};
  json merged = merge_statuses({up("http://odd", odd), up("http://empty", json::object())});
  CHECK(merged["health"].is_null());   // neither reports a number
  CHECK(merged["pairs"].size() == 1);  // only the pair with its names
  CHECK(merged["agents"][0]["reported_pairs"] == 1);
  CHECK(merged["capture"] == json::object());
}

TEST_CASE("no agents at all: nothing known") {
  json merged = merge_statuses({});
  CHECK(merged["health"].is_null());
  CHECK(merged["health_reason"] == "no agent");
  CHECK(merged["pairs"].empty());
}

TEST_CASE("with the exchange, each agent's line says what it owns") {
  json s = status(1, json::array());
  s["exchange"] = {{"connected", true}, {"partitions", {0, 3}}};
  json merged = merge_statuses({up("http://x", s), up("http://y", status(1, json::array()))});
  CHECK(merged["agents"][0]["exchange"]["partitions"] == json{0, 3});
  CHECK_FALSE(merged["agents"][1].contains("exchange"));
  std::string text = render_agents_section(merged);
  CHECK(text.find("exchange connected, partitions [0,3]") != std::string::npos);
}

TEST_CASE("status exit code: 0 only with health 1 and every pair vouched for") {
  CHECK(status_exit_code(status(1, {pair("a", "b", "ok", 5)})) == 0);
  CHECK(status_exit_code(status(1, {pair("a", "b", "at_risk", 5)})) == 0);  // a warning, not unknown
  // A pair whose window emptied: health null, so `status` cannot say it is fine.
  CHECK(status_exit_code(status(1, {pair("a", "b", "ok", 5), pair("b", "a", "unknown", 0, 45.0)})) == 1);
  CHECK(status_exit_code(status(nullptr, {pair("a", "b", "unknown", 0, 45.0)})) == 1);
  CHECK(status_exit_code(status(nullptr, json::array())) == 1);  // no pair at all
  CHECK(status_exit_code(status(0, {pair("a", "b", "violated", 5)})) == 1);
  CHECK(status_exit_code(json::object()) == 1);
}

TEST_CASE("merged: an agent with no pair of its own hides nothing; only unknown pairs are no evidence") {
  json idle = status(nullptr, json::array());
  idle["unknown_reason"] = "no_pair_known";
  json merged = merge_statuses({up("http://x", status(1, {pair("a", "b", "ok", 5)})), up("http://idle", idle)});
  CHECK(merged["health"] == 1);
  CHECK(merged_status_exit_code(merged) == 0);

  json silent = status(nullptr, {pair("a", "b", "unknown", 0, 40.0)});
  silent["unknown_reason"] = "no_pair_known";
  merged = merge_statuses({up("http://x", silent), up("http://idle", idle)});
  CHECK(merged["health"].is_null());
  CHECK(merged["health_reason"] == "no pair has a span (or a known health) in the window");
  CHECK(merged_status_exit_code(merged) == 1);
  CHECK(find_pair(merged, "a", "b")["last_span_age_seconds"] == 40.0);

  // Unpaired halves are a reason of the agent's own: it stays in the merged view.
  json unpaired = status(nullptr, json::array());
  unpaired["unknown_reason"] = "halves_unpaired";
  unpaired["health_reason"] = "unknown: 100% of halves unpaired in the window (b 1000 of 1000)";
  merged = merge_statuses({up("http://x", status(1, {pair("a", "b", "ok", 5)})), up("http://nat", unpaired)});
  CHECK(merged["health"].is_null());
  CHECK(merged["health_reason"] ==
        "agent http://nat reports unknown health (unknown: 100% of halves unpaired in the window (b 1000 of 1000))");
  CHECK(merged_status_exit_code(merged) == 1);
  // A healthy merged pair does not hide another agent's unknown one.
  merged = merge_statuses({up("http://x", status(1, {pair("a", "b", "ok", 5)})),
                           up("http://y", status(1, {pair("c", "d", "ok", 5), pair("d", "c", "unknown", 0, 31.0)}))});
  CHECK(merged["health"] == 1);
  CHECK(merged_status_exit_code(merged) == 1);
}
