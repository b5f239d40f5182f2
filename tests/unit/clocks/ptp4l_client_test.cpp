// The management client against a fake ptp4l socket: a full round, every failure mode as a
// value (missing, refused, timeout, malformed, management error), and its socket's lifetime.
#include "clocks/ptp4l_client.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "fake_ptp4l.hpp"

using namespace skewscope::clocks;
using skewscope::clocks::testing::Behaviour;
using skewscope::clocks::testing::FakePtp4l;
using skewscope::clocks::testing::TempDir;

namespace {

Ptp4lClient client_for(const TempDir& dir, const std::string& server, int timeout_ms = 200) {
  Ptp4lClient::Options o;
  o.server_path = server;
  o.client_dir = dir.path();
  o.timeout = std::chrono::milliseconds(timeout_ms);
  return Ptp4lClient(o);
}

}  // namespace

TEST_CASE("a round returns all four data sets") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l");
  auto c = client_for(dir, dir.path() + "/ptp4l", 2000);
  const QueryResult q = c.query();
  CHECK_FALSE(q.error.has_value());
  REQUIRE(q.reading.time_status.has_value());
  CHECK(q.reading.time_status->gm_present);
  REQUIRE(q.reading.ports.size() == 1);
  CHECK(q.reading.ports[0].port_state == static_cast<std::uint8_t>(ptp::PortState::kUncalibrated));
  CHECK(q.reading.current.has_value());
  CHECK(q.reading.parent.has_value());
  CHECK(server.requests() == 4);
  // Rounds repeat on the same socket with fresh sequence ids.
  const QueryResult q2 = c.query();
  CHECK_FALSE(q2.error.has_value());
  CHECK(q2.errors[ErrorReason::kUnexpectedReply] == 0);
}

TEST_CASE("the reply socket is unique, bound in client_dir, and removed with the client") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l");
  std::string p1, p2;
  {
    auto a = client_for(dir, dir.path() + "/ptp4l", 2000);
    auto b = client_for(dir, dir.path() + "/ptp4l", 2000);
    CHECK_FALSE(a.query().error.has_value());
    CHECK_FALSE(b.query().error.has_value());
    p1 = a.client_path();
    p2 = b.client_path();
    CHECK(p1 != p2);
    CHECK(p1.rfind(dir.path() + "/skewscope-pmc." + std::to_string(::getpid()) + ".", 0) == 0);
    CHECK(std::filesystem::exists(p1));
    Ptp4lClient moved(std::move(a));  // ownership moves, the socket stays
    CHECK(moved.client_path() == p1);
    CHECK(std::filesystem::exists(p1));
  }
  CHECK_FALSE(std::filesystem::exists(p1));
  CHECK_FALSE(std::filesystem::exists(p2));
}

TEST_CASE("reply sockets left by dead processes are removed, others kept") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l");
  auto bind_at = [](const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    ::close(fd);
  };
  // pid 1 is alive; a pid above pid_max cannot be.
  const std::string dead = dir.path() + "/skewscope-pmc.99999999.0";
  const std::string alive = dir.path() + "/skewscope-pmc.1.0";
  const std::string other = dir.path() + "/pmc.99999999";
  bind_at(dead);
  bind_at(alive);
  bind_at(other);
  auto c = client_for(dir, dir.path() + "/ptp4l", 2000);
  CHECK_FALSE(c.query().error.has_value());
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::exists(alive));
  CHECK(std::filesystem::exists(other));
}

TEST_CASE("no socket at the path is 'missing'") {
  TempDir dir;
  auto c = client_for(dir, dir.path() + "/nothing-here");
  const QueryResult q = c.query();
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kMissing);
  CHECK(q.sys_errno == ENOENT);
  CHECK(q.errors[ErrorReason::kMissing] == 1);
  CHECK_FALSE(q.reading.time_status.has_value());
}

TEST_CASE("a socket file nobody listens on is 'refused'") {
  TempDir dir;
  const std::string path = dir.path() + "/dead";
  {
    // What a killed ptp4l leaves behind: the file, no listener.
    int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    ::close(fd);
  }
  auto c = client_for(dir, path);
  const QueryResult q = c.query();
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kRefused);
  CHECK(q.sys_errno == ECONNREFUSED);
}

TEST_CASE("a silent server is a 'timeout', and the next round recovers") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kSilent);
  auto c = client_for(dir, dir.path() + "/ptp4l", 100);
  const QueryResult q = c.query();
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kTimeout);
  CHECK(q.errors[ErrorReason::kTimeout] == 1);
  server.set_behaviour(Behaviour::kAnswer);
  auto c2 = client_for(dir, dir.path() + "/ptp4l", 2000);
  CHECK_FALSE(c2.query().error.has_value());
  // The first client rebinds after its timeout and works again.
  const QueryResult again = c.query();
  CHECK_FALSE(again.error.has_value());
}

TEST_CASE("undecodable replies are 'malformed'") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kGarbage);
  auto c = client_for(dir, dir.path() + "/ptp4l", 200);
  const QueryResult q = c.query();
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kMalformed);
  CHECK(q.errors[ErrorReason::kMalformed] >= 1);
}

TEST_CASE("a reply with the right sequence id but the wrong data set is malformed") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kWrongId);
  auto c = client_for(dir, dir.path() + "/ptp4l", 200);
  const QueryResult q = c.query();
  CHECK(q.errors[ErrorReason::kMalformed] == 3);
  CHECK(q.reading.current.has_value());
  CHECK_FALSE(q.reading.time_status.has_value());
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kTimeout);
}

TEST_CASE("a management error TLV is reported, the other data sets kept") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kError);
  auto c = client_for(dir, dir.path() + "/ptp4l", 2000);
  const QueryResult q = c.query();
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kManagementError);
  REQUIRE(q.reading.management_errors.size() == 1);
  CHECK(q.reading.management_errors[0].error_id == 0x0006);
  CHECK(q.reading.time_status.has_value());
  CHECK_FALSE(q.reading.parent.has_value());
}

TEST_CASE("one PORT_DATA_SET reply per port is collected") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kTwoPorts);
  auto c = client_for(dir, dir.path() + "/ptp4l", 2000);
  const QueryResult q = c.query();
  CHECK_FALSE(q.error.has_value());
  REQUIRE(q.reading.ports.size() == 2);
  CHECK(q.reading.ports[1].port_identity.port_number == 2);
}

TEST_CASE("a flood of PORT_DATA_SET replies: duplicates deduped by port identity, ports capped") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kPortFlood);
  auto c = client_for(dir, dir.path() + "/ptp4l", 5000);
  const QueryResult q = c.query();
  CHECK_FALSE(q.error.has_value());
  REQUIRE(q.reading.ports.size() == kMaxPtpPorts);
  for (std::size_t i = 0; i < q.reading.ports.size(); ++i)
    CHECK(q.reading.ports[i].port_identity.port_number == i + 1);  // each port once, in order
  // Every copy of port 1 and every port past the cap is counted, none silently kept or lost.
  const auto refused = static_cast<std::uint64_t>(testing::kFloodDuplicates + testing::kFloodPorts) - kMaxPtpPorts;
  CHECK(q.errors[ErrorReason::kUnexpectedReply] == refused);
}

TEST_CASE("duplicate replies are counted as unexpected, not used twice") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l", Behaviour::kLateDuplicate);
  auto c = client_for(dir, dir.path() + "/ptp4l", 2000);
  const QueryResult q = c.query();
  CHECK_FALSE(q.error.has_value());
  // TIME_STATUS_NP, CURRENT and PARENT duplicates are not data; PORT_DATA_SET has one per port.
  const QueryResult q2 = c.query();
  CHECK(q.errors[ErrorReason::kUnexpectedReply] + q2.errors[ErrorReason::kUnexpectedReply] >= 3);
}

TEST_CASE("an unbindable client directory is an error value") {
  Ptp4lClient::Options o;
  o.server_path = "/nonexistent/ptp4l";
  o.client_dir = "/nonexistent-dir-for-skewscope";
  Ptp4lClient c(o);
  const QueryResult q = c.query();
  REQUIRE(q.error.has_value());
  CHECK(*q.error == ErrorReason::kMissing);
  CHECK(c.client_path().empty());
}

TEST_CASE("errno mapping") {
  CHECK(reason_from_errno(ENOENT) == ErrorReason::kMissing);
  CHECK(reason_from_errno(ECONNREFUSED) == ErrorReason::kRefused);
  CHECK(reason_from_errno(EACCES) == ErrorReason::kPermission);
  CHECK(reason_from_errno(EPERM) == ErrorReason::kPermission);
  CHECK(reason_from_errno(EAGAIN) == ErrorReason::kTimeout);
  CHECK(reason_from_errno(EIO) == ErrorReason::kIo);
}
