// Stage 4, postprocessing: detokenizes the generated ids into text and applies a small
// content filter (masks words on a fixed list), as a serving front end would.
#include "stage.hpp"

#include <unordered_set>

using namespace pipeline;

int main(int argc, char** argv) {
  StageConfig cfg;
  cfg.name = "post";
  CLI::App app("Pipeline stage 4: detokenization and output filtering", "pipeline_postprocess");
  add_stage_options(app, cfg, true, true);
  parse_or_exit(app, argc, argv);
  check_endpoints_or_exit(app, cfg, true, true);

  const std::unordered_set<std::string> blocked = {"kaka", "zeze", "rururu"};
  uint64_t masked = 0, words_out = 0;
  auto detokenize = [&](uint64_t id, std::span<const std::byte> in) {
    const size_t n = in.size() / sizeof(uint32_t);
    std::string text = "id=" + std::to_string(id) + " tokens=" + std::to_string(n) + "\n";
    for (size_t i = 0; i < n; ++i) {
      uint32_t t;
      std::memcpy(&t, in.data() + i * sizeof t, sizeof t);
      std::string w = pseudo_word(t);
      if (blocked.count(w)) {
        w = "***";
        ++masked;
      }
      if (i == 0) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
      if (i > 0) text += ' ';
      text += w;
      ++words_out;
    }
    text += ".\n";
    auto bytes = as_bytes(text);
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  };
  return guarded_main([&] {
    return run_stage(cfg, kPostRecv, kPostSend, detokenize, [&](nlohmann::json& s) {
      s["words_out"] = words_out;
      s["words_masked"] = masked;
    });
  });
}
