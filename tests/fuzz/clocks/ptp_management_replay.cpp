// Runs the decoder property over the captured corpus and a bounded number of seeded mutations
// of it, with the normal compiler: a fuzz pass that runs in every CTest run.
//   clocks_ptp_management_replay [--iterations N] [--seed S] CORPUS_FILE_OR_DIR...
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ptp_management_fuzz.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, std::size_t at, std::size_t v) {
  if (at + 1 >= b.size()) return;
  b[at] = static_cast<std::uint8_t>(v >> 8);
  b[at + 1] = static_cast<std::uint8_t>(v);
}

// Structure-aware touches keep many mutants past the header checks, so the TLV code is reached.
Bytes mutate(const std::vector<Bytes>& corpus, std::mt19937_64& rng) {
  Bytes b = corpus[rng() % corpus.size()];
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    switch (rng() % 8) {
      case 0:
        if (!b.empty()) b[rng() % b.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!b.empty()) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
        break;
      case 2: b.resize(rng() % (b.size() + 1)); break;
      case 3: {
        const std::size_t extra = rng() % 16;
        for (std::size_t k = 0; k < extra; ++k)
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(rng() % (b.size() + 1)), static_cast<std::uint8_t>(rng()));
        break;
      }
      case 4: put16(b, 2, b.size()); break;                             // messageLength = actual size
      case 5: put16(b, 50, b.size() >= 52 ? b.size() - 52 : 0); break;  // TLV length = the rest
      case 6: put16(b, 50, rng() % 64); break;                          // small TLV lengths
      case 7: {
        const Bytes& other = corpus[rng() % corpus.size()];  // splice two messages
        const std::size_t cut = rng() % (std::min(b.size(), other.size()) + 1);
        b.resize(cut);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(cut), other.end());
        break;
      }
    }
  }
  return b;
}

bool read_file(const std::filesystem::path& p, std::vector<Bytes>& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 200000;
  unsigned long long seed = 1;
  std::vector<Bytes> corpus;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc)
      iterations = std::strtol(argv[++i], nullptr, 10);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a))
        if (e.path().extension() == ".bin") read_file(e.path(), corpus);
    } else if (!read_file(a, corpus)) {
      std::fprintf(stderr, "cannot read %s\n", a.c_str());
      return 2;
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "usage: %s [--iterations N] [--seed S] CORPUS_FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  std::size_t decoded = 0;
  for (const auto& b : corpus) {
    skewscope::clocks::fuzz::check_one(b);
    decoded += skewscope::clocks::ptp::decode(b) ? 1 : 0;
  }
  if (decoded != corpus.size()) {
    std::fprintf(stderr, "only %zu of %zu corpus files decode\n", decoded, corpus.size());
    return 1;
  }
  std::mt19937_64 rng(seed);
  std::size_t mutants_decoded = 0;
  for (long i = 0; i < iterations; ++i) {
    const Bytes b = mutate(corpus, rng);
    // Exactly-sized heap copy so a sanitizer build catches any overread.
    const std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[b.size() ? b.size() : 1]);
    std::copy(b.begin(), b.end(), exact.get());
    skewscope::clocks::fuzz::check_one({exact.get(), b.size()});
    mutants_decoded += skewscope::clocks::ptp::decode({exact.get(), b.size()}) ? 1 : 0;
  }
  std::printf("corpus %zu files, %ld mutants, %zu of them decoded\n", corpus.size(), iterations, mutants_decoded);
  return 0;
}
