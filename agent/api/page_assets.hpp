// The live page served at / (agent/api/page/: HTML, CSS, plain JS that polls /api/v1/status and
// draws the hosts in SVG), embedded in the binary at build time by cmake/embed_assets.cmake.
#pragma once

#include <string_view>
#include <vector>

namespace skewscope {

struct PageAsset {
  std::string_view path;  // as requested: "/", "/page.js", ...
  std::string_view content_type;
  std::string_view body;
};

const std::vector<PageAsset>& page_assets();

inline const PageAsset* find_page_asset(std::string_view path) {
  for (const auto& asset : page_assets())
    if (asset.path == path) return &asset;
  return nullptr;
}

}  // namespace skewscope
