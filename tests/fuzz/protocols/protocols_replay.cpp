// Runs the parser property over the captured corpus and a bounded number of seeded mutations of
// it, with the normal compiler: a fuzz pass that runs in every CTest run.
//   protocols_replay --protocol kafka|zmtp [--iterations N] [--seed S] CORPUS_DIR
//   protocols_replay --protocol kafka|zmtp --measure ROUNDS CORPUS_DIR
// --measure feeds the unmutated corpus ROUNDS times and prints the parsing cost per chunk and per
// message/batch named (a measurement for the overhead report, never asserted).
// Corpus files are the DIR's <protocol>-*.cap. Mutations work on the records (cut a prefix, flip
// bytes, drop, split or repeat a record, change a length) so that most mutants stay parseable
// captures and reach deep into the parsers, plus raw byte damage to the file itself.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "protocols_fuzz.hpp"

namespace {

using skewscope::protocols::testing::Record;
using Bytes = std::vector<std::uint8_t>;

Bytes serialize(const std::vector<Record>& records) {
  Bytes out;
  auto le = [&](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (const auto& r : records) {
    out.push_back(r.direction);
    le(r.length, 4);
    le(r.bytes.size(), 4);
    le(r.ts_ns, 8);
    out.insert(out.end(), r.bytes.begin(), r.bytes.end());
  }
  return out;
}

Bytes mutate(const std::vector<std::vector<Record>>& corpus, std::mt19937_64& rng) {
  std::vector<Record> rs = corpus[rng() % corpus.size()];
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n && !rs.empty(); ++i) {
    Record& r = rs[rng() % rs.size()];
    switch (rng() % 8) {
      case 0: r.bytes.resize(rng() % (r.bytes.size() + 1)); break;  // shorter prefix
      case 1:
        if (!r.bytes.empty()) r.bytes[rng() % r.bytes.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 2:
        if (!r.bytes.empty()) r.bytes[rng() % r.bytes.size()] = static_cast<std::uint8_t>(rng());
        break;
      case 3: rs.erase(rs.begin() + static_cast<std::ptrdiff_t>(rng() % rs.size())); break;  // lost chunk
      case 4: {                                                                              // one read split in two
        if (r.bytes.size() < 2) break;
        const std::size_t at = 1 + rng() % (r.bytes.size() - 1);
        Record tail = r;
        tail.bytes.assign(r.bytes.begin() + static_cast<std::ptrdiff_t>(at), r.bytes.end());
        tail.length = r.length - static_cast<std::uint32_t>(at);
        r.bytes.resize(at);
        r.length = static_cast<std::uint32_t>(at);
        const auto pos = static_cast<std::ptrdiff_t>(&r - rs.data()) + 1;
        rs.insert(rs.begin() + pos, tail);
        break;
      }
      case 5: rs.insert(rs.begin() + static_cast<std::ptrdiff_t>(rng() % rs.size()), r); break;  // repeated
      case 6: r.length = static_cast<std::uint32_t>(rng() % (r.length * 2ull + 2)); break;       // any length
      case 7: r.direction ^= 1; break;
    }
  }
  Bytes out = serialize(rs);
  if (rng() % 8 == 0 && !out.empty()) out[rng() % out.size()] = static_cast<std::uint8_t>(rng());  // raw damage
  return out;
}

// Feeds every capture `rounds` times; prints ns per chunk and per named message/batch.
int measure(const std::string& protocol, const std::vector<std::vector<Record>>& corpus, long rounds) {
  namespace p = skewscope::protocols;
  std::vector<std::vector<p::testing::Chunk>> chunked;
  for (const auto& rs : corpus) chunked.push_back(p::testing::to_chunks(rs));
  std::uint64_t chunks = 0, named = 0, bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < rounds; ++i) {
    for (const auto& cs : chunked) {
      if (protocol == "kafka") {
        p::kafka::ConnectionTracker t;
        std::vector<p::kafka::BatchHalf> out;
        for (const auto& c : cs)
          t.feed(c.direction ? p::kafka::Direction::kFromBroker : p::kafka::Direction::kToBroker, c.chunk, out);
        t.flush(out);
        named += out.size();
        bytes += t.counters().bytes;
      } else {
        p::zmtp::StreamTracker t[2];
        std::vector<p::zmtp::Message> out;
        for (const auto& c : cs) p::zmtp::feed_direction(t[c.direction], &t[1 - c.direction], c.chunk, out);
        named += out.size();
        bytes += t[0].counters().bytes + t[1].counters().bytes;
      }
      chunks += cs.size();
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %ld rounds, %llu chunks, %llu %s named, %llu bytes: %.0f ns per chunk, %.0f ns per %s, %.2f GB/s\n",
              protocol.c_str(), rounds, static_cast<unsigned long long>(chunks), static_cast<unsigned long long>(named),
              protocol == "kafka" ? "batches" : "messages", static_cast<unsigned long long>(bytes),
              ns / static_cast<double>(chunks), named ? ns / static_cast<double>(named) : 0.0,
              protocol == "kafka" ? "batch" : "message", static_cast<double>(bytes) / ns);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 2000;
  unsigned long long seed = 1;
  long rounds = 0;
  std::string protocol, dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc)
      iterations = std::strtol(argv[++i], nullptr, 10);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--protocol" && i + 1 < argc)
      protocol = argv[++i];
    else if (a == "--measure" && i + 1 < argc)
      rounds = std::strtol(argv[++i], nullptr, 10);
    else
      dir = a;
  }
  if ((protocol != "kafka" && protocol != "zmtp") || dir.empty() || iterations < 0) {
    std::fprintf(stderr, "usage: %s --protocol kafka|zmtp [--iterations N] [--seed S] CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const auto check =
      protocol == "kafka" ? skewscope::protocols::fuzz::check_kafka : skewscope::protocols::fuzz::check_zmtp;
  std::vector<std::vector<Record>> corpus;
  for (const auto& path : skewscope::protocols::testing::captures(dir, protocol + "-")) {
    const Bytes b = skewscope::protocols::testing::read_bytes(path);
    check(b);
    corpus.push_back(skewscope::protocols::testing::parse_capture(b));
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "no %s-*.cap in %s\n", protocol.c_str(), dir.c_str());
    return 1;
  }
  if (rounds > 0) return measure(protocol, corpus, rounds);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < iterations; ++i) {
    const Bytes b = mutate(corpus, rng);
    // Exactly-sized heap copy so a sanitizer build catches any overread.
    const std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[b.size() ? b.size() : 1]);
    if (!b.empty()) std::memcpy(exact.get(), b.data(), b.size());
    check({exact.get(), b.size()});
  }
  std::printf("%s: corpus %zu captures, %ld mutants checked\n", protocol.c_str(), corpus.size(), iterations);
  return 0;
}
