#include "api/agent_routes.hpp"

#include <charconv>

#include "estimate/correct.hpp"
#include "estimate/json.hpp"
#include "estimate/whatif.hpp"

namespace skewscope {
namespace {

HttpReply error_reply(int status, const std::string& message) {
  return {status, nlohmann::json{{"error", message}}.dump() + "\n", "application/json"};
}

}  // namespace

void add_analysis_routes(HttpApi& api, SharedCore& shared, bool spans_enabled, SpanTrust trusted) {
  api.add_route("/api/v1/whatif", [&](const HttpApi::Query& q) {
    auto it = q.find("clock_error");
    if (it == q.end()) return error_reply(400, "missing clock_error, e.g. ?clock_error=gaussian:1ms");
    auto models = estimate::parse_error_models(it->second);
    if (!models) return error_reply(400, models.error);
    auto core = shared.lock();
    auto table = estimate::what_if(core->estimator(), *models.value, monotonic_now_ns());
    auto name = [&core](DomainId id) { return core->domains().name(id); };
    auto format = q.find("format");
    if (format != q.end() && format->second == "text")
      return HttpReply{200, estimate::render_what_if(table, name), "text/plain; charset=utf-8"};
    return HttpReply{200, estimate::to_json(table, name).dump() + "\n", "application/json"};
  });

  // Spans are per-message data of every traced connection on the host: opt-in, not on by default.
  if (!spans_enabled) {
    api.add_route("/api/v1/spans", [](const HttpApi::Query&) {
      return error_reply(404, "/api/v1/spans is off: start the agent with --enable-spans-api to serve it");
    });
    return;
  }
  // In a tenant's view (docs/tenants.md): the newest spans whose two ends are the tenant's.
  api.add_tenant_route("/api/v1/spans", [&, trusted](const HttpApi::Query& q) {
    std::size_t limit = 100;
    if (auto it = q.find("limit"); it != q.end()) {
      auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), limit);
      if (ec != std::errc() || end != it->second.data() + it->second.size() || limit == 0 ||
          limit > AgentCore::kRecentSpans)
        return error_reply(400, "limit must be 1-" + std::to_string(AgentCore::kRecentSpans));
    }
    const auto tenant = q.find("tenant");
    auto core = shared.lock();
    auto shown = [&](const Span& span) {
      return tenant == q.end() || (api.tenants().contains(tenant->second, core->domains().name(span.src)) &&
                                   api.tenants().contains(tenant->second, core->domains().name(span.dst)));
    };
    nlohmann::json spans = nlohmann::json::array();
    const auto& recent = core->recent_spans();
    std::size_t first = recent.size();  // the oldest of the newest `limit` spans shown
    for (std::size_t taken = 0; first > 0 && taken < limit;)
      if (shown(recent[--first].span)) ++taken;
    for (std::size_t i = first; i < recent.size(); ++i) {
      const Span& span = recent[i].span;
      if (!shown(span)) continue;
      nlohmann::json entry = {{"src", core->domains().name(span.src)},
                              {"dst", core->domains().name(span.dst)},
                              {"transport", transport_name(span.transport)},
                              {"bytes", span.bytes},
                              {"messages", span.messages},
                              {"span_seconds", static_cast<double>(span.span_ns()) * 1e-9}};
      // A Kafka batch's topic: here only, never a metric label (topics are not bounded).
      if (span.transport == Transport::kafka) entry["topic"] = recent[i].topic;
      // The policies' degraded mode: a consumer (the OTLP export) reads this before trusting the order.
      if (trusted)
        if (auto t = trusted(entry["src"].get<std::string>(), entry["dst"].get<std::string>(), span.transport))
          entry["trusted"] = *t;
      // Raw timestamps always; a correction only as extra, flagged fields (see estimate/correct.hpp).
      if (auto e = core->estimator().estimate(span.src, span.dst)) {
        entry.update(estimate::to_json(estimate::correct_span(span, *e, estimate::kMaxExportedCorrectionNs)));
      } else {
        entry["send_ns"] = span.send_ns;
        entry["recv_ns"] = span.recv_ns;
        entry["corrected"] = false;
      }
      spans.push_back(std::move(entry));
    }
    return HttpReply{200, nlohmann::json{{"spans", spans}}.dump() + "\n", "application/json"};
  });
}

}  // namespace skewscope
