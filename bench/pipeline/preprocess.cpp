// Stage 2, preprocessing: normalizes a prompt and tokenizes it into 32-bit token ids
// (BOS, then one id per word), the input an inference server expects.
#include "stage.hpp"

#include <cctype>

using namespace pipeline;

int main(int argc, char** argv) {
  StageConfig cfg;
  cfg.name = "pre";
  uint32_t vocab = 32000;
  size_t max_tokens = 512;
  CLI::App app("Pipeline stage 2: prompt normalization and tokenization", "pipeline_preprocess");
  add_stage_options(app, cfg, true, true);
  app.add_option("--vocab", vocab, "vocabulary size")->check(CLI::Range(16u, 1u << 24));
  app.add_option("--max-prompt-tokens", max_tokens, "truncate prompts to this many tokens")
      ->check(CLI::Range(size_t{2}, size_t{1} << 20));
  parse_or_exit(app, argc, argv);
  check_endpoints_or_exit(app, cfg, true, true);

  constexpr uint32_t kBos = 1;
  auto tokenize = [&](uint64_t, std::span<const std::byte> in) {
    std::vector<uint32_t> tokens{kBos};
    std::string word;
    auto flush = [&] {
      if (word.empty() || tokens.size() >= max_tokens) return;
      // ids 0 and 1 are reserved (pad, BOS)
      tokens.push_back(2 + static_cast<uint32_t>(fnv1a(as_bytes(word)) % (vocab - 2)));
      word.clear();
    };
    for (char c : as_text(in)) {
      if (std::isalnum(static_cast<unsigned char>(c)))
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      else
        flush();
    }
    flush();
    auto bytes = std::as_bytes(std::span<const uint32_t>(tokens));
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  };
  return guarded_main([&] { return run_stage(cfg, kPreRecv, kPreSend, tokenize); });
}
