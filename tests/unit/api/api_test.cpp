#include <doctest/doctest.h>

#include <limits>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"
#include "sample_report.hpp"
#include "skewscope/prometheus_text.hpp"

using namespace skewscope;
using namespace skewscope::test;

TEST_CASE("label values are escaped") {
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(format_sample_value(3) == "3");
  CHECK(format_sample_value(0.5) == "0.5");
  // One writer for api/ and clocks/: a clock offset keeps its nanoseconds, a timestamp its
  // milliseconds, and arithmetic's last bits do not show.
  CHECK(format_sample_value(-37.000000123) == "-37.000000123");
  CHECK(format_sample_value(1790000000.125) == "1790000000.125");
  CHECK(format_sample_value(1000 * 1e-9) == "1e-06");
  CHECK(format_sample_value(1e15) == "1e+15");
  CHECK(format_sample_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(format_sample_value(-std::numeric_limits<double>::infinity()) == "-Inf");
}

TEST_CASE("/metrics has every family of the contract with HELP and TYPE") {
  std::string text = render_agent_metrics(sample_report(), "0.1.0");
  for (const char* family :
       {"skewscope_causality_health", "skewscope_pair_causality_health", "skewscope_spans_total",
        "skewscope_negative_spans_total", "skewscope_negative_span_ratio", "skewscope_span_min_seconds",
        "skewscope_clock_offset_seconds", "skewscope_clock_offset_bound_seconds", "skewscope_events_total",
        "skewscope_events_lost_total", "skewscope_build_info"}) {
    INFO(family);
    CHECK(text.find(std::string("# HELP ") + family + " ") != std::string::npos);
    CHECK(text.find(std::string("# TYPE ") + family + " ") != std::string::npos);
  }
  CHECK(text.find("skewscope_causality_health 0\n") != std::string::npos);
  CHECK(text.find("skewscope_pair_causality_health{src=\"pre\",dst=\"in\\\"fer\"} 0\n") != std::string::npos);
  CHECK(text.find("skewscope_span_min_seconds{src=\"pre\",dst=\"in\\\"fer\"} -0.002\n") != std::string::npos);
  CHECK(text.find("skewscope_events_lost_total{reason=\"ring_buffer_full\"} 3\n") != std::string::npos);
}

TEST_CASE("status JSON: the contract's fields, nulls for what is not known") {
  auto j = status_json(sample_report());
  CHECK(j["health"] == 0);
  CHECK(j["window_seconds"] == 30);
  auto p = j["pairs"][0];
  CHECK(p["src"] == "pre");
  CHECK(p["dst"] == "in\"fer");
  CHECK(p["transport"] == "tcp");
  CHECK(p["spans"] == 10);
  CHECK(p["negative_spans"] == 4);
  CHECK(p["window_spans"] == 8);
  CHECK(p["window_negative_spans"] == 4);
  CHECK(p["negative_span_ratio"] == 0.5);
  CHECK(p["state"] == "violated");
  CHECK(p["min_span_seconds"].get<double>() == doctest::Approx(-0.002));
  CHECK(p["offset_seconds"].is_null());
  CHECK(p["offset_bound_seconds"].is_null());
  CHECK(j["capture"]["events"] == 22);
  CHECK(j["capture"]["lost"] == 3);
}
