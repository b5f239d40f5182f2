#include <doctest/doctest.h>

#include "api/diagnosis_output.hpp"
#include "client/explain.hpp"
#include "client/explain_merged_status.hpp"
#include "diagnose/engine.hpp"

using namespace skewscope;
using namespace skewscope::diagnose;
using nlohmann::json;

namespace {
PairObservation settled_pair(const std::string& src, const std::string& dst, double offset_ns, double bound_ns) {
  PairObservation p;
  p.src = src;
  p.dst = dst;
  p.has_estimate = p.two_sided = true;
  p.now.offset_ns = offset_ns;
  p.now.bound_ns = bound_ns;
  p.now.settled = true;
  p.spans = 100;
  return p;
}
PairObservation stepped(const std::string& src, const std::string& dst, double step_ns) {
  PairObservation p = settled_pair(src, dst, step_ns, 40'000);
  p.now.settled = false;
  p.now.broken = true;
  p.negative_spans = 10;
  p.shift = Shift{Cause::clock_step, step_ns, 60'000, 5'000'000'000, 0, step_ns};
  return p;
}
// A status JSON with the agent's pairs, as status_json writes the diagnosis part.
json status_of(const DiagnosisReport& r) {
  json pairs = json::array();
  for (const auto& d : r.pairs)
    pairs.push_back({{"src", d.src}, {"dst", d.dst}, {"diagnosis", pair_diagnosis_json(d)}});
  return {{"pairs", pairs}, {"hosts", hosts_json(r)}};
}
}  // namespace

TEST_CASE("a pair's diagnosis survives the JSON, in either orientation") {
  auto r = diagnose::diagnose({stepped("a", "b", 5e6), stepped("b", "c", -5e6), settled_pair("a", "c", 0, 20'000)}, {},
                              Config{});
  const PairDiagnosis& d = r.pairs.front();
  REQUIRE(d.cause == Cause::clock_step);
  json j = pair_diagnosis_json(r, "a", "b");
  CHECK(j["cause"] == "clock_step");
  CHECK(j["culprit"] == "b");
  CHECK(j["unit"] == "seconds");
  CHECK(j["amount"].get<double>() == doctest::Approx(0.005));
  auto back = pair_diagnosis_from_json(j, "a", "b");
  REQUIRE(back);
  CHECK(back->cause == Cause::clock_step);
  CHECK(*back->amount == doctest::Approx(5e6));
  REQUIRE(back->step);
  CHECK(back->step->value == doctest::Approx(5e6));
  json flipped = pair_diagnosis_json(r, "b", "a");
  CHECK(flipped["amount"].get<double>() == doctest::Approx(-0.005));
  CHECK(pair_diagnosis_json(r, "a", "zz").is_null());
}

TEST_CASE("bad diagnosis JSON is an error naming the pair, never a made-up cause") {
  CHECK_FALSE(pair_diagnosis_from_json(json::array(), "a", "b"));
  auto unknown = pair_diagnosis_from_json({{"cause", "gremlins"}}, "a", "b");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error.find("a→b") != std::string::npos);
  CHECK_FALSE(pair_diagnosis_from_json({{"cause", "none"}, {"measures", {{"step_seconds", "x"}}}}, "a", "b"));
  CHECK_FALSE(pair_diagnosis_from_json({{"cause", "none"}, {"measures", {{"step_seconds", {1.0, -1.0}}}}}, "a", "b"));
  auto statuses = diagnosis_from_statuses({{{"pairs", {{{"src", "a"}, {"dst", "b"}, {"diagnosis", {{"cause", 3}}}}}}}});
  CHECK_FALSE(statuses);
}

TEST_CASE("the merged view names a culprit no single agent could") {
  // Agent 1 owns pre→infer only, agent 2 owns infer→post and pre→post.
  Config c;
  auto one = combine({diagnose_pair(stepped("pre", "infer", 5e6), nullptr, nullptr, c)}, {}, c);
  auto two = combine({diagnose_pair(stepped("infer", "post", -5e6), nullptr, nullptr, c),
                      diagnose_pair(settled_pair("pre", "post", 1'000, 20'000), nullptr, nullptr, c)},
                     {}, c);
  CHECK_FALSE(one.pairs.front().culprit);
  auto merged = diagnosis_from_statuses({status_of(one), status_of(two)});
  REQUIRE(merged);
  CHECK(merged->incidents == 2);
  for (const auto& p : merged->pairs)
    if (p.incident()) {
      REQUIRE(p.culprit);
      CHECK(*p.culprit == "infer");
    }
  const std::string text = explain_text(*merged);
  CHECK(text.find("infer's clock stepped +5.000 ms") != std::string::npos);
  INFO(text);
  CHECK(text.find("pre→post consistent") != std::string::npos);
  json j = explain_json(*merged);
  CHECK(j["incidents"] == 2);
  CHECK(j["pairs"].size() == 2);
}

TEST_CASE("the merged status view carries the diagnosis triangulated over every agent's pairs") {
  Config c;
  auto one = combine({diagnose_pair(stepped("pre", "infer", 5e6), nullptr, nullptr, c)}, {}, c);
  auto two = combine({diagnose_pair(stepped("infer", "post", -5e6), nullptr, nullptr, c),
                      diagnose_pair(settled_pair("pre", "post", 1'000, 20'000), nullptr, nullptr, c)},
                     {}, c);
  const json s1 = status_of(one), s2 = status_of(two);
  // merge_statuses keeps each pair's report as its agent wrote it: agent 1's says no culprit.
  json merged = {{"pairs", json::array({s1["pairs"][0], s2["pairs"][0], s2["pairs"][1]})}};
  merged["pairs"][0]["transport"] = "tcp";
  REQUIRE(merged["pairs"][0]["diagnosis"]["culprit"].is_null());
  // The same pair in the other orientation (as another transport's row may show it).
  json back = s1["pairs"][0];
  back["src"] = "infer";
  back["dst"] = "pre";
  merged["pairs"].push_back(back);
  add_merged_diagnosis(merged, {AgentStatus{"http://a", s1, ""}, AgentStatus{"http://b", s2, ""},
                                AgentStatus{"http://c", std::nullopt, "unreachable"}});
  CHECK(merged["incidents"] == 2);
  CHECK(merged["pairs"][0]["diagnosis"]["culprit"] == "infer");
  CHECK(merged["pairs"][0]["diagnosis"]["cause"] == "clock_step");
  CHECK(merged["pairs"][2]["diagnosis"]["cause"] == "none");
  CHECK(merged["pairs"][3]["diagnosis"]["culprit"] == "infer");
  CHECK(merged["pairs"][3]["diagnosis"]["amount"].get<double>() < 0);  // θ(infer→pre) = −5 ms
  bool named = false;
  for (const auto& h : merged["hosts"])
    if (h["host"] == "infer") named = h["culprit"].get<bool>() && h["cause"] == "clock_step";
  CHECK(named);
  SUBCASE("a malformed diagnosis leaves the agents' own verdicts and says why") {
    json bad = s2;
    bad["pairs"][0]["diagnosis"]["cause"] = "gremlins";
    json m = {{"pairs", json::array({s1["pairs"][0]})}};
    add_merged_diagnosis(m, {AgentStatus{"http://a", s1, ""}, AgentStatus{"http://b", bad, ""}});
    CHECK(m.contains("diagnosis_error"));
    CHECK_FALSE(m.contains("hosts"));
    CHECK(m["pairs"][0]["diagnosis"]["culprit"].is_null());
  }
}

TEST_CASE("explain without incidents, and with an undetermined culprit") {
  auto healthy = diagnose::diagnose({settled_pair("a", "b", 0, 20'000)}, {}, Config{});
  CHECK(explain_text(healthy).rfind("No incident", 0) == 0);
  auto two_hosts = diagnose::diagnose({stepped("a", "b", 5e6)}, {}, Config{});
  const std::string text = explain_text(two_hosts);
  CHECK(text.find("a→b: clock_step") != std::string::npos);
  CHECK(text.find("culprit undetermined (only two hosts") != std::string::npos);
  CHECK(pair_diagnosis_json(two_hosts.pairs.front())["culprit_candidates"] == json::array());

  // Two hosts fit the pairs so far: said as candidates, in the text and in the JSON.
  DiagnosisReport pending;
  PairDiagnosis p;
  p.src = "a";
  p.dst = "d";
  p.cause = Cause::clock_drift;
  p.culprit_candidates = {"a", "d"};
  p.evidence = "θ(a→d): offset moves -20.0 ppm";
  pending.pairs.push_back(p);
  pending.incidents = 1;
  CHECK(explain_text(pending).find("culprit not yet known: a or d") != std::string::npos);
  CHECK(pair_diagnosis_json(p)["culprit_candidates"] == json{"a", "d"});
}

TEST_CASE("metrics: one series per pair and cause, and per host and blamable cause") {
  auto r = diagnose::diagnose({stepped("a", "b", 5e6), stepped("b", "c", -5e6), settled_pair("a", "c", 0, 20'000)}, {},
                              Config{});
  std::string out;
  PrometheusWriter w(out);
  append_diagnosis_metrics(w, r);
  CHECK(out.find("skewscope_diagnosis{src=\"a\",dst=\"b\",cause=\"clock_step\"} 1") != std::string::npos);
  CHECK(out.find("skewscope_diagnosis{src=\"a\",dst=\"c\",cause=\"none\"} 1") != std::string::npos);
  CHECK(out.find("skewscope_host_suspect{host=\"b\",cause=\"clock_step\"} 1") != std::string::npos);
  CHECK(out.find("skewscope_host_suspect{host=\"a\",cause=\"clock_step\"} 0") != std::string::npos);
  CHECK(out.find("skewscope_host_suspect{host=\"a\",cause=\"path_asymmetry\"}") == std::string::npos);
}
