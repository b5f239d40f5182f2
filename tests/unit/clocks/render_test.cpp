// Prometheus text, JSON and table output of a ClockSnapshot.
#include "clocks/render.hpp"

#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "render_sample.hpp"

using namespace skewscope::clocks;

namespace {

const char* const kFamilies[] = {"skewscope_ptp_master_offset_seconds",
                                 "skewscope_ptp_mean_path_delay_seconds",
                                 "skewscope_ptp_port_state",
                                 "skewscope_ptp_gm_present",
                                 "skewscope_ptp_last_sync_age_seconds",
                                 "skewscope_phc_system_offset_seconds",
                                 "skewscope_timex_maxerror_seconds",
                                 "skewscope_timex_sync_status",
                                 "skewscope_clock_error_bound_seconds",
                                 "skewscope_clock_status",
                                 "skewscope_clock_source_errors_total"};

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

}  // namespace

TEST_CASE("exactly the contract's families, each with HELP and TYPE") {
  for (const ClockSnapshot& s : {testing::populated_snapshot(), ClockSnapshot{}}) {
    std::string out;
    append_prometheus(s, out);
    std::set<std::string> types;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) {
      if (l.rfind("# TYPE ", 0) == 0) types.insert(l.substr(7, l.find(' ', 7) - 7));
    }
    CHECK(types == std::set<std::string>(std::begin(kFamilies), std::end(kFamilies)));
    for (const char* f : kFamilies) CHECK(out.find(std::string("# HELP ") + f + " ") != std::string::npos);
  }
}

TEST_CASE("samples: values in base units, unknown ones left out, labels escaped") {
  std::string out;
  append_prometheus(testing::populated_snapshot(), out);
  CHECK(has_line(out, "skewscope_ptp_master_offset_seconds{socket=\"/var/run/ptp4l\"} -1.5e-06"));
  CHECK(has_line(out, "skewscope_ptp_mean_path_delay_seconds{socket=\"/var/run/ptp4l\"} 2e-06"));
  CHECK(has_line(out, "skewscope_ptp_port_state{socket=\"/var/run/ptp4l\"} 9"));
  CHECK(has_line(out, "skewscope_ptp_gm_present{socket=\"/var/run/ptp4l\"} 1"));
  CHECK(has_line(out, "skewscope_ptp_last_sync_age_seconds{socket=\"/var/run/ptp4l\"} 0.25"));
  CHECK(has_line(out, "skewscope_ptp_last_sync_age_seconds{socket=\"/tmp/we\\\"ird\\\\path\"} 12"));
  CHECK(out.find("skewscope_ptp_port_state{socket=\"/tmp/we") == std::string::npos);  // unknown: no sample
  CHECK(has_line(out, "skewscope_phc_system_offset_seconds{clock=\"ptp0\"} -37.000000123"));
  CHECK(out.find("clock=\"ptp1\"") == std::string::npos);
  CHECK(has_line(out, "skewscope_timex_maxerror_seconds 0.0015"));
  CHECK(has_line(out, "skewscope_timex_sync_status 1"));
  CHECK(has_line(out, "skewscope_clock_error_bound_seconds 3.5e-06"));
  CHECK(has_line(out, "skewscope_clock_status 1"));
  CHECK(has_line(out, "skewscope_clock_source_errors_total{source=\"ptp4l\",reason=\"refused\"} 7"));
  CHECK(has_line(out, "skewscope_clock_source_errors_total{source=\"ptp4l\",reason=\"timeout\"} 0"));
  CHECK(has_line(out, "skewscope_clock_source_errors_total{source=\"phc\",reason=\"unsupported\"} 3"));
  CHECK(has_line(out, "skewscope_clock_source_errors_total{source=\"timex\",reason=\"io\"} 0"));

  std::string empty;
  append_prometheus(ClockSnapshot{}, empty);
  CHECK(has_line(empty, "skewscope_clock_status 0"));
  CHECK(empty.find("\nskewscope_clock_error_bound_seconds ") == std::string::npos);
  CHECK(empty.find("\nskewscope_timex_maxerror_seconds ") == std::string::npos);
}

TEST_CASE("JSON: unknown values are null") {
  const auto j = to_json(testing::populated_snapshot());
  CHECK(j["status"] == "synchronized");
  CHECK(j["error_bound_seconds"].get<double>() == doctest::Approx(3.5e-6));
  REQUIRE(j["ptp4l"].size() == 2);
  CHECK(j["ptp4l"][0]["port_state"] == 9);
  CHECK(j["ptp4l"][0]["port_state_name"] == "SLAVE");
  CHECK(j["ptp4l"][0]["error"].is_null());
  CHECK(j["ptp4l"][1]["port_state"].is_null());
  CHECK(j["ptp4l"][1]["master_offset_seconds"].is_null());
  CHECK(j["ptp4l"][1]["error"] == "refused");
  CHECK(j["phc"][0]["method"] == "extended");
  CHECK(j["phc"][1]["system_offset_seconds"].is_null());
  CHECK(j["phc"][1]["error"] == "unsupported");
  CHECK(j["timex"]["maxerror_seconds"].get<double>() == doctest::Approx(0.0015));
  CHECK(j["errors"]["ptp4l"]["refused"] == 7);
  const auto e = to_json(ClockSnapshot{});
  CHECK(e["error_bound_seconds"].is_null());
  CHECK(e["bound_source"].is_null());
  CHECK(e["timex"].is_null());
  CHECK(e["status"] == "unknown");
}

TEST_CASE("table") {
  const std::string t = render_table(testing::populated_snapshot());
  CHECK(t.find("host clock: synchronized") != std::string::npos);
  CHECK(t.find("SLAVE") != std::string::npos);
  CHECK(t.find("refused") != std::string::npos);
  CHECK(t.find("ptp0") != std::string::npos);
  CHECK(t.find("maxerror 1.5ms") != std::string::npos);
  CHECK(render_table(ClockSnapshot{}).find("(no ptp4l socket found)") != std::string::npos);
}
