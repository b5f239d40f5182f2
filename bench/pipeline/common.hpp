// Shared by the pipeline stages: wire format, checksums, durations, the stage's app-level clock,
// command-line error handling. The stages are ordinary programs: nothing here knows of skewscope.
#pragma once

#include <CLI/CLI.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipeline {

// ---- wire format ---------------------------------------------------------------------------
// One message = WireHeader followed by payload_len bytes. Little-endian host order (all stages
// run on one machine kind). Every stage stamps its own slot with its app-level clock.
enum Slot : int { kReqSend = 0, kPreRecv, kPreSend, kInferRecv, kInferSend, kPostRecv, kPostSend, kMonRecv, kSlots };
inline constexpr std::array<const char*, kSlots> kSlotNames = {"req_send",   "pre_recv",  "pre_send",  "infer_recv",
                                                               "infer_send", "post_recv", "post_send", "mon_recv"};
inline constexpr std::array<const char*, 5> kStageNames = {"req", "pre", "infer", "post", "mon"};

inline constexpr uint32_t kMagic = 0x4c504b53;  // "SKPL"
inline constexpr uint16_t kVersion = 1;
inline constexpr uint16_t kFlagEndOfStream = 1;  // id then holds the number of data messages

struct WireHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint64_t id;
  int64_t stamps[kSlots];  // CLOCK_REALTIME ns as read (and possibly skewed) by each stage; 0 = unset
  uint32_t payload_len;
  uint32_t reserved;
};
static_assert(sizeof(WireHeader) == 88);
static_assert(offsetof(WireHeader, stamps) == 16);
static_assert(offsetof(WireHeader, payload_len) == 80);

struct Message {
  WireHeader h{};
  std::vector<std::byte> payload;

  bool end_of_stream() const { return (h.flags & kFlagEndOfStream) != 0; }

  std::vector<std::byte> encode() const {
    WireHeader hh = h;
    hh.magic = kMagic;
    hh.version = kVersion;
    hh.payload_len = static_cast<uint32_t>(payload.size());
    std::vector<std::byte> out(sizeof hh + payload.size());
    std::memcpy(out.data(), &hh, sizeof hh);
    if (!payload.empty()) std::memcpy(out.data() + sizeof hh, payload.data(), payload.size());
    return out;
  }

  static std::optional<Message> decode(std::span<const std::byte> bytes) {
    Message m;
    if (bytes.size() < sizeof(WireHeader)) return std::nullopt;
    std::memcpy(&m.h, bytes.data(), sizeof m.h);
    if (m.h.magic != kMagic || m.h.version != kVersion) return std::nullopt;
    if (m.h.payload_len != bytes.size() - sizeof(WireHeader)) return std::nullopt;
    m.payload.assign(bytes.begin() + sizeof(WireHeader), bytes.end());
    return m;
  }
};

inline std::span<const std::byte> as_bytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}
inline std::string_view as_text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// ---- hashing and checksums -----------------------------------------------------------------
inline uint64_t fnv1a(std::span<const std::byte> data, uint64_t h = 0xcbf29ce484222325ULL) {
  for (std::byte b : data) {
    h ^= static_cast<uint8_t>(b);
    h *= 0x100000001b3ULL;
  }
  return h;
}
inline uint64_t fnv1a_u64(uint64_t v, uint64_t h = 0xcbf29ce484222325ULL) {
  return fnv1a(std::as_bytes(std::span<const uint64_t>(&v, 1)), h);
}
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Order-independent: the sum of per-message hashes of (id, payload). Transports may reorder
// nothing here, but the checksum must not depend on it either way. Timestamps are excluded.
struct Checksum {
  uint64_t sum = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t add(uint64_t id, std::span<const std::byte> payload) {
    uint64_t h = fnv1a(payload, fnv1a_u64(id));
    sum += h;
    ++count;
    bytes += payload.size();
    return h;
  }
  std::string hex() const {
    char buf[19];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(sum));
    return buf;
  }
};

// A pronounceable pseudo-word for vocabulary entry k: the prompt generator draws from these and
// the postprocessor detokenizes into them.
inline std::string pseudo_word(uint64_t k) {
  static constexpr const char* kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
                                               "ze", "po", "qu", "da", "fe", "gi", "ho", "ju"};
  uint64_t state = k * 0x2545f4914f6cdd1dULL + 7;
  uint64_t r = splitmix64(state);
  std::string w;
  const int syllables = 1 + static_cast<int>(r % 3);
  for (int i = 0; i < syllables; ++i) w += kSyllables[(r >> (8 + 4 * i)) & 15];
  return w;
}

// ---- durations -----------------------------------------------------------------------------
// "5ms", "250us", "-2ms", "+1.5s", "100ns", "2m", "0". Returns nanoseconds or nullopt.
std::optional<int64_t> parse_duration_ns(std::string_view text);
std::string format_duration_ns(int64_t ns);

// A CLI11 validator/transform-free helper: adds a duration option stored as ns.
CLI::Option* add_duration(CLI::App& app, const std::string& name, int64_t& ns_out, const std::string& help);

// ---- clocks --------------------------------------------------------------------------------
inline int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
inline int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The stage's own app-level clock: CLOCK_REALTIME read as a skewed host would read it. Same
// meaning as the agent's --simulate-clock NAME=OFFSET[,DRIFTppm]: OFFSET is how far this clock
// reads ahead of true time at the stage's start, and it gains DRIFT ppm of elapsed time after.
// Only the stamps this stage writes are shifted; no real clock is ever touched.
struct AppClock {
  int64_t offset_ns = 0;
  double drift_ppm = 0.0;
  int64_t epoch_ns = realtime_ns();

  int64_t app(int64_t raw_ns) const {
    return raw_ns + offset_ns + static_cast<int64_t>(static_cast<double>(raw_ns - epoch_ns) * drift_ppm * 1e-6);
  }
  void add_options(CLI::App& app);
};

// ---- process plumbing ----------------------------------------------------------------------
extern std::atomic<bool> g_stop;  // set by SIGTERM / SIGINT
void install_signal_handlers();

// Parses argv; on a bad flag prints one line "PROG: reason" and exits 2; --help exits 0.
void parse_or_exit(CLI::App& app, int argc, char** argv);

// Fails the program with one line on stderr, exit code 1 (runtime error, not usage).
[[noreturn]] void fatal(const std::string& what);

// Writes text to path atomically (tmp + rename), or to stdout when path is empty.
void write_text_file(const std::string& path, const std::string& text);

// Creates an empty file (the run script polls these to learn a stage is ready).
void touch(const std::string& path);

}  // namespace pipeline
