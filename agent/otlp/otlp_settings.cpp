#include "otlp/otlp_settings.hpp"

#include <charconv>
#include <cstdlib>

#include "domains/duration.hpp"

namespace skewscope::otlp {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || hex_digit(s[i + 1]) < 0 || hex_digit(s[i + 2]) < 0)
      return Result<std::string>::fail("bad percent-encoding in '" + s + "'");
    out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
    i += 2;
  }
  return Result<std::string>::ok(std::move(out));
}

// The first variable of `names` that is set and not empty, with the name it came from.
std::optional<std::pair<std::string, std::string>> first_set(const Environment& env,
                                                             std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto value = env(name); value && !trim(*value).empty()) return std::make_pair(std::string(name), trim(*value));
  return std::nullopt;
}

std::string join_signal_path(OtlpUrl url, const char* signal) {
  // The SDKs append the signal's path to the base endpoint, keeping a base path if there is one.
  if (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
  return url.path + "/v1/" + signal;
}
std::string join_traces_path(const OtlpUrl& url) { return join_signal_path(url, "traces"); }

Result<std::int64_t> positive_ms(const std::pair<std::string, std::string>& variable) {
  std::int64_t ms = 0;
  const std::string& text = variable.second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms <= 0 || ms > 86'400'000)
    return Result<std::int64_t>::fail(variable.first + ": '" + text + "' is not a positive number of milliseconds");
  return Result<std::int64_t>::ok(ms * 1'000'000);
}

// --otlp-metrics: the metrics endpoint and interval. `base`: the flag's endpoint, if given.
Status plan_metrics(OtlpSettings& s, std::optional<OtlpUrl> base, const Environment& env) {
  if (auto metrics = first_set(env, {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"})) {
    auto url = parse_otlp_url(metrics->second);
    if (!url) return Status::fail(metrics->first + ": " + url.error);
    s.metrics_url = *url;  // used as it is, like the traces' own endpoint
  } else {
    if (!base)
      if (auto general = first_set(env, {"OTEL_EXPORTER_OTLP_ENDPOINT"})) {
        auto url = parse_otlp_url(general->second);
        if (!url) return Status::fail(general->first + ": " + url.error);
        base = *url;
      }
    if (!base)
      return Status::fail(
          "--otlp-metrics: no metrics endpoint: give --otlp-endpoint, OTEL_EXPORTER_OTLP_ENDPOINT or "
          "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    s.metrics_url = *base;
    s.metrics_url->path = join_signal_path(*base, "metrics");
  }
  if (auto interval = first_set(env, {"OTEL_METRIC_EXPORT_INTERVAL"})) {
    auto ns = positive_ms(*interval);
    if (!ns) return Status::fail(ns.error);
    s.metrics_interval_ns = *ns;
  }
  return Status::ok();
}

}  // namespace

std::string OtlpUrl::origin() const {
  return std::string(tls ? "https://" : "http://") + host + ":" + std::to_string(port);
}

Result<OtlpUrl> parse_otlp_url(const std::string& text) {
  using R = Result<OtlpUrl>;
  OtlpUrl url;
  std::string rest;
  if (text.rfind("http://", 0) == 0) {
    rest = text.substr(7);
  } else if (text.rfind("https://", 0) == 0) {
    url.tls = true;
    rest = text.substr(8);
  } else {
    return R::fail("'" + text + "' is not an http:// or https:// URL");
  }
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  url.path = slash == std::string::npos ? "/" : rest.substr(slash);
  if (authority.empty()) return R::fail("'" + text + "' has no host");
  if (authority.find('@') != std::string::npos)
    return R::fail("'" + text + "': credentials in the URL are not supported; use OTEL_EXPORTER_OTLP_HEADERS");
  std::string port_text;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return R::fail("'" + text + "': unclosed '[' in the host");
    url.host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return R::fail("'" + text + "': expected ':' after the IPv6 host");
      port_text = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.find(':');
    url.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty() || url.host == "[]") return R::fail("'" + text + "' has no host");
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty() || authority.back() == ':') {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
      return R::fail("'" + text + "': the port must be 1-65535");
    url.port = port;
  }
  if (url.path.find_first_of("?#") != std::string::npos)
    return R::fail("'" + text + "': a query or fragment is not supported");
  return R::ok(std::move(url));
}

Result<Attributes> parse_key_values(const std::string& text) {
  using R = Result<Attributes>;
  Attributes out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || trim(item.substr(0, eq)).empty()) return R::fail("'" + item + "' is not key=value");
    auto key = percent_decode(trim(item.substr(0, eq)));
    auto value = percent_decode(trim(item.substr(eq + 1)));
    if (!key) return R::fail(key.error);
    if (!value) return R::fail(value.error);
    out.emplace_back(std::move(*key), std::move(*value));
  }
  return R::ok(std::move(out));
}

Result<std::uint32_t> parse_sample(const std::string& text) {
  using R = Result<std::uint32_t>;
  if (text.rfind("1/", 0) != 0) return R::fail("'" + text + "' is not 1/N");
  std::uint32_t n = 0;
  const char* begin = text.data() + 2;
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || at != end || n < 1) return R::fail("'" + text + "' is not 1/N with N >= 1");
  return R::ok(n);
}

Environment process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
}

Result<std::optional<OtlpSettings>> plan_otlp(const OtlpFlags& flags, const Environment& env,
                                              const std::string& host_name) {
  using R = Result<std::optional<OtlpSettings>>;
  OtlpSettings s;
  std::optional<OtlpUrl> base;  // the flag's or OTEL_EXPORTER_OTLP_ENDPOINT's: /v1/<signal> appended
  if (!flags.endpoint.empty()) {
    auto url = parse_otlp_url(flags.endpoint);
    if (!url) return R::fail("--otlp-endpoint: " + url.error);
    base = *url;
    s.url = *url;
    s.url.path = join_traces_path(s.url);
  } else if (auto traces = first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"})) {
    auto url = parse_otlp_url(traces->second);
    if (!url) return R::fail(traces->first + ": " + url.error);
    s.url = *url;  // a signal-specific endpoint is used as it is
  } else if (auto general = first_set(env, {"OTEL_EXPORTER_OTLP_ENDPOINT"})) {
    auto url = parse_otlp_url(general->second);
    if (!url) return R::fail(general->first + ": " + url.error);
    s.url = *url;
    s.url.path = join_traces_path(s.url);
  } else {
    if (!flags.sample.empty() || !flags.compression.empty() || !flags.ca_file.empty() || !flags.timeout.empty() ||
        flags.metrics)
      return R::fail(
          "--otlp-sample, --otlp-compression, --otlp-ca-file, --otlp-timeout and --otlp-metrics need "
          "--otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT)");
    return R::ok(std::nullopt);
  }

  if (flags.metrics) {
    if (Status m = plan_metrics(s, base, env); !m) return R::fail(m.error);
  }

  if (!flags.sample.empty()) {
    auto n = parse_sample(flags.sample);
    if (!n) return R::fail("--otlp-sample: " + n.error);
    s.sample_one_in = *n;
  }

  std::string compression = flags.compression;
  std::string compression_source = "--otlp-compression";
  if (compression.empty())
    if (auto c = first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"})) {
      compression = c->second;
      compression_source = c->first;
    }
  if (compression == "gzip") {
    s.gzip = true;
  } else if (!compression.empty() && compression != "none") {
    return R::fail(compression_source + ": '" + compression + "' is not gzip or none");
  }

  s.ca_file = flags.ca_file;
  if (s.ca_file.empty())
    if (auto c = first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"}))
      s.ca_file = c->second;
  if (!s.ca_file.empty() && !s.url.tls)
    return R::fail("a CA file was given but the endpoint " + s.url.text() + " is not https://");

  if (!flags.timeout.empty()) {
    auto t = parse_duration_ns(flags.timeout);
    if (!t || *t <= 0) return R::fail("--otlp-timeout: '" + flags.timeout + "' is not a positive duration");
    s.timeout_ns = *t;
  } else if (auto t = first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"})) {
    // The SDKs read milliseconds here.
    std::int64_t ms = 0;
    auto [end, ec] = std::from_chars(t->second.data(), t->second.data() + t->second.size(), ms);
    if (ec != std::errc() || end != t->second.data() + t->second.size() || ms <= 0)
      return R::fail(t->first + ": '" + t->second + "' is not a positive number of milliseconds");
    s.timeout_ns = ms * 1'000'000;
  }

  // The signal-specific headers are added after the general ones (both are sent, like the SDKs).
  for (const char* name : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}) {
    auto value = first_set(env, {name});
    if (!value) continue;
    auto parsed = parse_key_values(value->second);
    if (!parsed) return R::fail(std::string(name) + ": " + parsed.error);
    for (auto& kv : *parsed) s.headers.push_back(std::move(kv));
  }
  if (s.metrics_url)
    for (const char* name : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"}) {
      auto value = first_set(env, {name});
      if (!value) continue;
      auto parsed = parse_key_values(value->second);
      if (!parsed) return R::fail(std::string(name) + ": " + parsed.error);
      for (auto& kv : *parsed) s.metrics_headers.push_back(std::move(kv));
    }

  Attributes resource;
  if (auto value = first_set(env, {"OTEL_RESOURCE_ATTRIBUTES"})) {
    auto parsed = parse_key_values(value->second);
    if (!parsed) return R::fail("OTEL_RESOURCE_ATTRIBUTES: " + parsed.error);
    resource = std::move(*parsed);
  }
  // service.name: OTEL_SERVICE_NAME wins over the one in OTEL_RESOURCE_ATTRIBUTES; else skewscope.
  std::string service = "skewscope";
  for (const auto& [k, v] : resource)
    if (k == "service.name") service = v;
  if (auto name = first_set(env, {"OTEL_SERVICE_NAME"})) service = name->second;
  s.resource.emplace_back("service.name", service);
  bool has_host = false;
  for (auto& kv : resource) {
    if (kv.first == "service.name") continue;
    has_host = has_host || kv.first == "host.name";
    s.resource.push_back(std::move(kv));
  }
  if (!has_host) s.resource.emplace_back("host.name", host_name);
  return R::ok(std::move(s));
}

}  // namespace skewscope::otlp
