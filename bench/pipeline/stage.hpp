// The receive → work → send loop shared by preprocess, inference and postprocess, and the
// options, logs and summaries every stage has.
#pragma once

#include "common.hpp"
#include "transport.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace pipeline {

struct StageConfig {
  std::string name;  // req, pre, infer, post, mon
  std::string from, to;
  Endpoint from_ep{}, to_ep{};
  TransportOptions transport;
  AppClock clock;
  std::string log_path;                       // per-message CSV
  std::string summary_path;                   // JSON at exit; stdout when empty
  std::string ready_path;                     // created once the transports are ready
  int64_t idle_timeout_ns = 30'000'000'000;   // stop when nothing arrives (or leaves) for this long
  int64_t ready_timeout_ns = 30'000'000'000;  // give up when the transports are not ready by then
  int64_t linger_ns = 10'000'000'000;         // how long to deliver queued messages at exit
};

// --from/--to (as needed), --kafka-opt, --log, --summary, --ready-file, --idle-timeout, clock flags.
void add_stage_options(CLI::App& app, StageConfig& cfg, bool has_from, bool has_to);
// Validates endpoints after parsing; bad ones print one line and exit 2.
void check_endpoints_or_exit(CLI::App& app, StageConfig& cfg, bool has_from, bool has_to);

// Median, 99th percentile, min, max of a sample, in seconds; nulls when empty.
nlohmann::json distribution(std::vector<int64_t> ns);

// A buffered CSV log that is a no-op when no path was given.
class CsvLog {
 public:
  CsvLog(const std::string& path, const char* header);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;
  void row(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

 private:
  std::FILE* f_ = nullptr;
};

// Turns an input payload into the output payload; must be a pure function of (id, payload).
using Transform = std::function<std::vector<std::byte>(uint64_t id, std::span<const std::byte>)>;

// Runs a middle stage until end of stream, a signal or the idle timeout. recv_slot/send_slot are
// the header stamps this stage owns. extra adds stage-specific fields to the summary.
int run_stage(StageConfig& cfg, Slot recv_slot, Slot send_slot, const Transform& transform,
              const std::function<void(nlohmann::json&)>& extra = {});

// Wraps a stage main: runtime errors become one line on stderr and exit 1.
int guarded_main(const std::function<int()>& body);

}  // namespace pipeline
