// Stage 3, inference: an LLM-shaped CPU workload. A fixed pseudo-random integer "model"
// (LAYERS matrices of HIDDEN × HIDDEN) runs a prefill pass over the prompt tokens, then
// generates tokens one at a time, each token a full pass through every layer. The output length
// is drawn from the prompt's content (a long-tailed distribution between --min-tokens and
// --max-tokens), so latency varies per request the way a generation server's does, and the
// output is a pure function of the input.
#include "stage.hpp"

#include <bit>

using namespace pipeline;

namespace {

class Model {
 public:
  Model(size_t hidden, size_t layers, uint32_t vocab, uint64_t seed)
      : d_(hidden), layers_(layers), vocab_(vocab), w_(hidden * hidden * layers), h_(hidden), t_(hidden) {
    uint64_t state = seed;
    for (auto& x : w_) x = static_cast<uint32_t>(splitmix64(state)) | 1u;
  }

  std::vector<uint32_t> generate(std::span<const uint32_t> prompt, size_t n_out) {
    std::fill(h_.begin(), h_.end(), 0x9e3779b9u);
    // Prefill: one layer per prompt token (real servers batch the prompt, so it costs less per
    // token than decoding), then a full pass to produce the first token.
    for (size_t i = 0; i < prompt.size(); ++i) {
      embed(prompt[i]);
      layer(i % layers_);
    }
    std::vector<uint32_t> out;
    out.reserve(n_out);
    uint32_t tok = prompt.empty() ? 1 : prompt.back();
    for (size_t k = 0; k < n_out; ++k) {
      embed(tok);
      for (size_t l = 0; l < layers_; ++l) layer(l);
      tok = 2 + (h_[0] ^ std::rotl(h_[d_ / 2], 13) ^ h_[d_ - 1]) % (vocab_ - 2);
      out.push_back(tok);
    }
    return out;
  }

 private:
  void embed(uint32_t tok) {
    uint32_t e = tok * 0x85ebca6bu + 0xc2b2ae35u;
    for (size_t j = 0; j < d_; ++j) {
      h_[j] ^= e;
      e = e * 1664525u + 1013904223u;
    }
  }
  void layer(size_t l) {
    const uint32_t* w = w_.data() + l * d_ * d_;
    for (size_t i = 0; i < d_; ++i) {
      uint32_t acc = 0;
      const uint32_t* row = w + i * d_;
      for (size_t j = 0; j < d_; ++j) acc += row[j] * h_[j];
      t_[i] = acc ^ (acc >> 15);
    }
    std::swap(h_, t_);
  }

  size_t d_, layers_;
  uint32_t vocab_;
  std::vector<uint32_t> w_, h_, t_;
};

}  // namespace

int main(int argc, char** argv) {
  StageConfig cfg;
  cfg.name = "infer";
  size_t hidden = 128, layers = 4, min_tokens = 8, max_tokens = 192;
  uint32_t vocab = 32000;
  uint64_t model_seed = 42;
  CLI::App app("Pipeline stage 3: token-by-token generation with real per-token compute", "pipeline_inference");
  add_stage_options(app, cfg, true, true);
  app.add_option("--hidden", hidden, "hidden size: per-token work is LAYERS × HIDDEN²")
      ->check(CLI::Range(size_t{4}, size_t{4096}));
  app.add_option("--layers", layers, "layers")->check(CLI::Range(size_t{1}, size_t{256}));
  app.add_option("--min-tokens", min_tokens, "shortest output")->check(CLI::Range(size_t{1}, size_t{1} << 16));
  app.add_option("--max-tokens", max_tokens, "longest output")->check(CLI::Range(size_t{1}, size_t{1} << 16));
  app.add_option("--vocab", vocab, "vocabulary size")->check(CLI::Range(16u, 1u << 24));
  app.add_option("--model-seed", model_seed, "seed of the weights");
  parse_or_exit(app, argc, argv);
  check_endpoints_or_exit(app, cfg, true, true);
  if (max_tokens < min_tokens) {
    std::cerr << app.get_name() << ": --max-tokens must be >= --min-tokens\n";
    return 2;
  }

  Model model(hidden, layers, vocab, model_seed);
  uint64_t tokens_total = 0;
  std::vector<int64_t> per_token_ns;
  auto infer = [&](uint64_t, std::span<const std::byte> in) {
    std::vector<uint32_t> prompt(in.size() / sizeof(uint32_t));
    std::memcpy(prompt.data(), in.data(), prompt.size() * sizeof(uint32_t));
    // Output length from the prompt: u² on [0,1) gives many short answers and a long tail.
    const uint64_t u = fnv1a(in) % 1024;
    const size_t n = min_tokens + static_cast<size_t>(((max_tokens - min_tokens) * u * u) >> 20);
    const int64_t t0 = monotonic_ns();
    auto out = model.generate(prompt, n);
    per_token_ns.push_back((monotonic_ns() - t0) / static_cast<int64_t>(n));
    tokens_total += out.size();
    auto bytes = std::as_bytes(std::span<const uint32_t>(out));
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  };
  return guarded_main([&] {
    return run_stage(cfg, kInferRecv, kInferSend, infer, [&](nlohmann::json& s) {
      s["tokens_out"] = tokens_total;
      s["per_token"] = distribution(per_token_ns);
      s["model"] = {{"hidden", hidden},         {"layers", layers},         {"vocab", vocab},
                    {"min_tokens", min_tokens}, {"max_tokens", max_tokens}, {"seed", model_seed}};
    });
  });
}
