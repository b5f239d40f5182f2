#include "runtime/peer_agents.hpp"

#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace skewscope;
using nlohmann::json;

namespace {

json status_with_pair(const std::string& src, const std::string& dst, const char* state) {
  const int health = std::string(state) == "violated" ? 0 : 1;
  return {{"health", health},
          {"window_seconds", 10},
          {"pairs", json::array({{{"src", src},
                                  {"dst", dst},
                                  {"transport", "tcp"},
                                  {"state", state},
                                  {"health", health},
                                  {"window_spans", 5},
                                  {"last_span_age_seconds", 0.1}}})},
          {"capture", {{"up", true}}}};
}

// A peer on a free loopback port answering /api/v1/status with `status`.
struct Peer {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::atomic<int> asked{0};
  explicit Peer(json status) {
    server.Get("/api/v1/status", [this, status](const httplib::Request&, httplib::Response& res) {
      ++asked;
      res.set_content(status.dump(), "application/json");
    });
    port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Peer() {
    server.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

const char* no_environment(const char*) { return nullptr; }

}  // namespace

TEST_CASE("the merged view: this agent's pairs and a peer's, a dead peer said unreachable") {
  Peer peer(status_with_pair("c", "d", "ok"));
  int dead_port = 0;
  {
    Peer gone(json::object());  // a port that was just free, and is closed again
    dead_port = gone.port;
  }
  auto peers = PeerAgents::create({peer.url(), "http://127.0.0.1:" + std::to_string(dead_port)}, no_environment);
  REQUIRE(peers);
  // Before any poll: the peers are listed, not yet asked.
  auto early = (*peers)->merged(status_with_pair("a", "b", "ok"), "self:1");
  REQUIRE(early["agents"].size() == 3);
  CHECK(early["agents"][1]["reachable"] == false);

  (*peers)->poll_once();
  CHECK(peer.asked == 1);
  auto merged = (*peers)->merged(status_with_pair("a", "b", "violated"), "self:1");
  REQUIRE(merged["pairs"].size() == 2);
  std::map<std::string, std::string> agent_of;
  for (const auto& p : merged["pairs"]) agent_of[p["src"].get<std::string>()] = p["agent"].get<std::string>();
  CHECK(agent_of["a"] == "self:1");
  CHECK(agent_of["c"] == peer.url());
  CHECK(merged["health"] == 0);  // this agent's violated pair is in the merged view
  REQUIRE(merged["agents"].size() == 3);
  CHECK(merged["agents"][0]["reachable"] == true);
  CHECK(merged["agents"][1]["reachable"] == true);
  CHECK(merged["agents"][2]["reachable"] == false);
  CHECK_FALSE(merged["agents"][2]["error"].get<std::string>().empty());
  // The diagnosis, triangulated again over every agent's pairs, as `status --agent A --agent B`
  // has it: the incidents counted and the hosts (none here), and each pair's own (null: no agent diagnosed it).
  CHECK_FALSE(merged.contains("diagnosis_error"));
  CHECK(merged["incidents"] == 0);
  CHECK(merged["hosts"].is_array());
  for (const auto& p : merged["pairs"]) CHECK((p.contains("diagnosis") && p["diagnosis"].is_null()));
}

TEST_CASE("the thread polls the peers on its own, and stops promptly") {
  Peer peer(status_with_pair("c", "d", "ok"));
  auto peers = PeerAgents::create({peer.url()}, no_environment);
  REQUIRE(peers);
  (*peers)->start();
  for (int i = 0; i < 300 && peer.asked < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(peer.asked >= 2);  // the first poll at once, the next a period later
  const auto t0 = std::chrono::steady_clock::now();
  (*peers)->stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));
}

TEST_CASE("a peer URL that is not one is refused, naming the flag") {
  auto bad = PeerAgents::create({"ftp://x:1"}, no_environment);
  CHECK_FALSE(bad);
  CHECK(bad.error.find("--peer-agent") != std::string::npos);
}
