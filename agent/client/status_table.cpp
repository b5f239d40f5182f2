#include "client/status_table.hpp"

#include <cstdio>

#include "domains/duration.hpp"

namespace skewscope {
namespace {

constexpr std::size_t kOffsetColumns = 24;  // "-123.456us ± 123.456us"

std::string seconds_text(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  return format_duration_ns(static_cast<std::int64_t>(v.get<double>() * 1e9));
}

// An offset only with its bound: "-" when either is missing (offset_missing in the JSON says why).
std::string offset_text(const nlohmann::json& p) {
  const auto offset = p.value("offset_seconds", nlohmann::json());
  const auto bound = p.value("offset_bound_seconds", nlohmann::json());
  if (!offset.is_number() || !bound.is_number()) return "-";
  return seconds_text(offset) + " ± " + seconds_text(bound);
}

// Right-aligned to width columns; printf's widths count bytes, and "±" is two.
std::string right_aligned(const std::string& text, std::size_t width) {
  std::size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;  // count UTF-8 lead bytes only
  return columns >= width ? text : std::string(width - columns, ' ') + text;
}

// Health is null when the agent cannot know (capture down, or halves lost in the window).
std::string health_text(const nlohmann::json& v) { return v.is_number() ? v.dump() : "?"; }

}  // namespace

std::string render_status_table(const nlohmann::json& s) {
  std::string out;
  char line[256];
  if (s.contains("tenant"))  // a tenant's view has no agent-wide counters (docs/tenants.md)
    std::snprintf(line, sizeof line, "causality_health %s   window %ss   tenant %s\n\n",
                  health_text(s.value("health", nlohmann::json())).c_str(),
                  s.contains("window_seconds") ? s["window_seconds"].dump().c_str() : "?",
                  s.value("tenant", "?").c_str());
  else
    std::snprintf(line, sizeof line, "causality_health %s   window %ss   events %llu   lost %llu\n\n",
                  health_text(s.value("health", nlohmann::json())).c_str(),
                  s.contains("window_seconds") ? s["window_seconds"].dump().c_str() : "?",
                  static_cast<unsigned long long>(s["capture"].value("events", 0ull)),
                  static_cast<unsigned long long>(s["capture"].value("lost", 0ull)));
  out += line;
  std::snprintf(line, sizeof line, "%-12s %-12s %-6s %10s %9s %10s %8s %8s %10s %s %6s %-9s\n", "SRC", "DST", "TRANS",
                "SPANS", "NEG", "WIN_SPANS", "WIN_NEG", "RATIO", "MIN_SPAN",
                right_aligned("OFFSET ± BOUND", kOffsetColumns).c_str(), "HEALTH", "STATE");
  out += line;
  for (const auto& p : s.value("pairs", nlohmann::json::array())) {
    std::snprintf(line, sizeof line, "%-12s %-12s %-6s %10llu %9llu %10llu %8llu %8.4f %10s %s %6s %-9s\n",
                  p.value("src", "?").c_str(), p.value("dst", "?").c_str(), p.value("transport", "?").c_str(),
                  static_cast<unsigned long long>(p.value("spans", 0ull)),
                  static_cast<unsigned long long>(p.value("negative_spans", 0ull)),
                  static_cast<unsigned long long>(p.value("window_spans", 0ull)),
                  static_cast<unsigned long long>(p.value("window_negative_spans", 0ull)),
                  p.value("negative_span_ratio", 0.0), seconds_text(p["min_span_seconds"]).c_str(),
                  right_aligned(offset_text(p), kOffsetColumns).c_str(),
                  health_text(p.value("health", nlohmann::json())).c_str(), p.value("state", "?").c_str());
    out += line;
  }
  // Why a health is unknown, for the agent and for each pair that cannot be vouched for.
  if (const auto reason = s.value("health_reason", nlohmann::json()); reason.is_string())
    out += "\ncausality_health " + reason.get<std::string>() + "\n";
  for (const auto& p : s.value("pairs", nlohmann::json::array())) {
    const auto why = p.value("unknown_reason", nlohmann::json());
    if (!why.is_string()) continue;
    std::snprintf(line, sizeof line, "  %s -> %s %s: health unknown, %s (last span %s ago)\n",
                  p.value("src", "?").c_str(), p.value("dst", "?").c_str(), p.value("transport", "?").c_str(),
                  why.get<std::string>().c_str(),
                  seconds_text(p.value("last_span_age_seconds", nlohmann::json())).c_str());
    out += line;
  }
  return out;
}

}  // namespace skewscope
