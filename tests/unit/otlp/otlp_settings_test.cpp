#include "otlp/otlp_settings.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace skewscope::otlp;

namespace {

Environment env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::string value_of(const Attributes& a, const std::string& key) {
  for (const auto& [k, v] : a)
    if (k == key) return v;
  return "<absent>";
}

}  // namespace

TEST_CASE("no endpoint anywhere: export is off, and its other flags are an error") {
  auto off = plan_otlp({}, env_of({}), "h");
  REQUIRE(off);
  CHECK_FALSE(off->has_value());
  OtlpFlags flags;
  flags.sample = "1/10";
  auto bad = plan_otlp(flags, env_of({}), "h");
  CHECK_FALSE(bad);
  CHECK(bad.error.find("--otlp-endpoint") != std::string::npos);
}

TEST_CASE("the flag and OTEL_EXPORTER_OTLP_ENDPOINT are bases; the traces endpoint is used as it is") {
  OtlpFlags flags;
  flags.endpoint = "http://127.0.0.1:4318";
  auto a = plan_otlp(flags, env_of({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://x:1/ignored"}}), "h");
  REQUIRE(a);
  CHECK((*a)->url.text() == "http://127.0.0.1:4318/v1/traces");

  auto b = plan_otlp({}, env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example:4318/otel/"}}), "h");
  REQUIRE(b);
  CHECK((*b)->url.tls);
  CHECK((*b)->url.text() == "https://collector.example:4318/otel/v1/traces");

  auto c = plan_otlp({},
                     env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"},
                             {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1]:9999/custom/path"}}),
                     "h");
  REQUIRE(c);
  CHECK((*c)->url.host == "[::1]");
  CHECK((*c)->url.port == 9999);
  CHECK((*c)->url.path == "/custom/path");

  auto d = plan_otlp({}, env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector"}}), "h");
  REQUIRE(d);
  CHECK((*d)->url.port == 80);
}

TEST_CASE("bad URLs, samples, compression and timeouts name what is wrong") {
  for (const char* url : {"ftp://x:1", "http://", "http://x:0", "http://x:70000", "http://x:12a", "http://u:p@x:1",
                          "http://[::1", "http://x:1/a?b=c"}) {
    OtlpFlags flags;
    flags.endpoint = url;
    auto r = plan_otlp(flags, env_of({}), "h");
    CHECK_MESSAGE(!r, url);
    CHECK(r.error.rfind("--otlp-endpoint: ", 0) == 0);
  }
  OtlpFlags flags;
  flags.endpoint = "http://x:1";
  for (const char* sample : {"1/0", "2/3", "1/", "1/x", "1/-4"}) {
    flags.sample = sample;
    CHECK_MESSAGE(!plan_otlp(flags, env_of({}), "h"), sample);
  }
  flags.sample = "1/16";
  auto ok = plan_otlp(flags, env_of({}), "h");
  REQUIRE(ok);
  CHECK((*ok)->sample_one_in == 16);

  auto zip = plan_otlp(flags, env_of({{"OTEL_EXPORTER_OTLP_COMPRESSION", "brotli"}}), "h");
  CHECK_FALSE(zip);
  CHECK(zip.error.find("OTEL_EXPORTER_OTLP_COMPRESSION") != std::string::npos);
  auto gz = plan_otlp(flags, env_of({{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"}}), "h");
  REQUIRE(gz);
  CHECK((*gz)->gzip);

  auto timeout = plan_otlp(flags, env_of({{"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"}}), "h");
  REQUIRE(timeout);
  CHECK((*timeout)->timeout_ns == 2'500'000'000);
  CHECK_FALSE(plan_otlp(flags, env_of({{"OTEL_EXPORTER_OTLP_TIMEOUT", "2s"}}), "h"));

  flags.ca_file = "/etc/ssl/certs/ca.pem";  // an http endpoint has no use for it
  CHECK_FALSE(plan_otlp(flags, env_of({}), "h"));
}

TEST_CASE("headers and resource attributes are read as the SDKs read them") {
  OtlpFlags flags;
  flags.endpoint = "http://x:1";
  auto r = plan_otlp(flags,
                     env_of({{"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20dTpw, x-tenant = blue"},
                             {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-signal=traces"},
                             {"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment=lab%2C1"}}),
                     "node-7");
  REQUIRE(r);
  const auto& s = **r;
  CHECK(value_of(s.headers, "Authorization") == "Basic dTpw");
  CHECK(value_of(s.headers, "x-tenant") == "blue");
  CHECK(value_of(s.headers, "x-signal") == "traces");
  CHECK(s.resource.front() == std::make_pair(std::string("service.name"), std::string("from-attrs")));
  CHECK(value_of(s.resource, "deployment.environment") == "lab,1");
  CHECK(value_of(s.resource, "host.name") == "node-7");

  auto named =
      plan_otlp(flags, env_of({{"OTEL_SERVICE_NAME", "svc"}, {"OTEL_RESOURCE_ATTRIBUTES", "service.name=x"}}), "h");
  REQUIRE(named);
  CHECK(value_of((*named)->resource, "service.name") == "svc");
  auto plain = plan_otlp(flags, env_of({}), "h");
  REQUIRE(plain);
  CHECK(value_of((*plain)->resource, "service.name") == "skewscope");

  CHECK_FALSE(plan_otlp(flags, env_of({{"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}}), "h"));
  CHECK_FALSE(plan_otlp(flags, env_of({{"OTEL_RESOURCE_ATTRIBUTES", "k=%zz"}}), "h"));
}

TEST_CASE("--otlp-metrics: the metrics endpoint, its headers and the export interval") {
  OtlpFlags flags;
  flags.endpoint = "http://127.0.0.1:4318/base/";
  auto off = plan_otlp(flags, env_of({}), "h");
  REQUIRE(off);
  CHECK_FALSE((*off)->metrics_url);  // without the flag: no metrics
  flags.metrics = true;
  auto based = plan_otlp(flags,
                         env_of({{"OTEL_EXPORTER_OTLP_HEADERS", "a=1"},
                                 {"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "m=2"},
                                 {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "t=3"}}),
                         "h");
  REQUIRE(based);
  REQUIRE((*based)->metrics_url);
  CHECK((*based)->metrics_url->text() == "http://127.0.0.1:4318/base/v1/metrics");
  CHECK((*based)->url.text() == "http://127.0.0.1:4318/base/v1/traces");
  CHECK(value_of((*based)->metrics_headers, "a") == "1");
  CHECK(value_of((*based)->metrics_headers, "m") == "2");
  CHECK(value_of((*based)->metrics_headers, "t") == "<absent>");
  CHECK(value_of((*based)->headers, "m") == "<absent>");
  CHECK((*based)->metrics_interval_ns == 60'000'000'000);

  auto own = plan_otlp(
      flags,
      env_of({{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/own/path"}, {"OTEL_METRIC_EXPORT_INTERVAL", "1500"}}),
      "h");
  REQUIRE(own);
  CHECK((*own)->metrics_url->text() == "http://m:9/own/path");  // as it is, like the traces' own
  CHECK((*own)->metrics_interval_ns == 1'500'000'000);

  for (const char* bad : {"0", "-5", "1s", "", "99999999999"}) {
    auto refused = plan_otlp(flags, env_of({{"OTEL_METRIC_EXPORT_INTERVAL", bad}}), "h");
    if (std::string(bad).empty()) {
      CHECK(refused);  // unset-like: the default
      continue;
    }
    CHECK_FALSE(refused);
    CHECK(refused.error.find("OTEL_METRIC_EXPORT_INTERVAL") != std::string::npos);
  }

  // Only a traces endpoint: nowhere to send metrics, said rather than guessed.
  OtlpFlags env_only;
  env_only.metrics = true;
  auto nowhere = plan_otlp(env_only, env_of({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/v1/traces"}}), "h");
  CHECK_FALSE(nowhere);
  CHECK(nowhere.error.find("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != std::string::npos);
  auto no_export = plan_otlp(env_only, env_of({}), "h");
  CHECK_FALSE(no_export);
  CHECK(no_export.error.find("--otlp-metrics") != std::string::npos);
}
