#include "api/page_assets.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

using namespace skewscope;

namespace {

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(SKEWSCOPE_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("the live page's files are embedded byte for byte, each with its content type") {
  const struct {
    const char* path;
    const char* file;
    const char* type;
  } expected[] = {{"/", "agent/api/page/index.html", "text/html; charset=utf-8"},
                  {"/page.js", "agent/api/page/page.js", "text/javascript; charset=utf-8"},
                  {"/page.css", "agent/api/page/page.css", "text/css; charset=utf-8"}};
  for (const auto& e : expected) {
    const PageAsset* asset = find_page_asset(e.path);
    REQUIRE_MESSAGE(asset, e.path);
    CHECK(asset->content_type == e.type);
    const std::string file = source_file(e.file);
    REQUIRE(!file.empty());
    CHECK(asset->body == file);
  }
  CHECK(find_page_asset("/page.js.map") == nullptr);
  CHECK(find_page_asset("/index.html") == nullptr);
}

TEST_CASE("the page loads only its own files and the status") {
  const std::string html(find_page_asset("/")->body);
  const std::string js(find_page_asset("/page.js")->body);
  // No CDN: every src/href is a path of this agent.
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("src=\"/page.js\"") != std::string::npos);
  // Same-origin paths only: the merged view (--peer-agent), else the agent's own status.
  CHECK(js.find("fetch(statusPath") != std::string::npos);
  CHECK(js.find("let statusPath = \"/api/v1/merged\"") != std::string::npos);
  CHECK(js.find("statusPath = \"/api/v1/status\"") != std::string::npos);
  CHECK(js.find("fetch(\"http") == std::string::npos);
}
