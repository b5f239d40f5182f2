// The control socket never removes what is not its own stale socket, and no client, slow, silent
// or one too many, keeps another from being answered.
#include "api/control_socket.hpp"

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace skewscope;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/skewscope-control-test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return a;
}

// A connected client that has sent `prefix` and nothing more.
int open_client(const std::string& path, const std::string& prefix = "") {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a = address(path);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  if (!prefix.empty())
    REQUIRE(send(fd, prefix.data(), prefix.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(prefix.size()));
  return fd;
}

// Reads until EOF (the server closes after its reply), at most timeout_ms in all.
std::string read_to_close(int fd, int timeout_ms) {
  std::string out;
  char buf[256];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// True while the server still holds the connection open (nothing to read, no hang-up).
bool still_open(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

std::string echo(const std::string& line) { return "ok " + line; }

}  // namespace

TEST_CASE("a regular file, a directory or a symlink at the path is refused and left alone") {
  TempDir dir;
  const std::string file = dir.path + "/file";
  std::ofstream(file) << "precious\n";
  ControlSocket a(echo);
  const std::string error = a.bind(file).error;
  CHECK(error.find("regular file") != std::string::npos);
  CHECK(error.find(file) != std::string::npos);
  std::ifstream in(file);
  std::string content;
  std::getline(in, content);
  CHECK(content == "precious");

  const std::string subdir = dir.path + "/dir";
  std::filesystem::create_directory(subdir);
  ControlSocket b(echo);
  CHECK(b.bind(subdir).error.find("directory") != std::string::npos);
  CHECK(std::filesystem::is_directory(subdir));

  const std::string link = dir.path + "/link";
  std::filesystem::create_symlink(file, link);
  ControlSocket c(echo);
  CHECK(c.bind(link).error.find("symbolic link") != std::string::npos);
  CHECK(std::filesystem::is_symlink(link));
  // A dangling symlink is not followed either.
  const std::string dangling = dir.path + "/dangling";
  std::filesystem::create_symlink(dir.path + "/nowhere", dangling);
  ControlSocket d(echo);
  CHECK(d.bind(dangling).error.find("symbolic link") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path + "/nowhere"));
}

TEST_CASE("a live socket is refused; only a stale one is replaced") {
  TempDir dir;
  const std::string path = dir.path + "/control.sock";
  ControlSocket live(echo);
  REQUIRE(live.bind(path));
  live.start();
  ControlSocket second(echo);
  CHECK(second.bind(path).error.find("in use") != std::string::npos);
  bool reached = false;
  CHECK(control_request(path, "ping", reached) == "ok ping");  // the first agent is untouched
  live.stop();
  CHECK_FALSE(std::filesystem::exists(path));  // removed its own socket

  // A socket file left by a process that died: bound, never listened on, closed.
  int stale = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a = address(path);
  REQUIRE(::bind(stale, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  close(stale);
  REQUIRE(std::filesystem::is_socket(path));
  ControlSocket fresh(echo);
  CHECK(fresh.bind(path));
  fresh.start();
  CHECK(control_request(path, "again", reached) == "ok again");
}

TEST_CASE("stop() leaves a file that replaced its socket") {
  TempDir dir;
  const std::string path = dir.path + "/control.sock";
  ControlSocket s(echo);
  REQUIRE(s.bind(path));
  std::filesystem::remove(path);
  std::ofstream(path) << "someone else's\n";
  s.stop();
  CHECK(std::filesystem::is_regular_file(path));
}

TEST_CASE("a slow client does not block another; it is cut off at the line deadline") {
  TempDir dir;
  const std::string path = dir.path + "/control.sock";
  ControlSocket s(echo);
  REQUIRE(s.bind(path));
  s.start();
  int slow = open_client(path, "simul");  // trickling, no newline yet
  int silent = open_client(path);         // connected, sends nothing
  bool reached = false;
  CHECK(control_request(path, "simulate x=1ms", reached) == "ok simulate x=1ms");
  // Answered while both others are still being waited for.
  CHECK(still_open(slow));
  CHECK(still_open(silent));
  // They get an error at the deadline and are closed, and counted.
  CHECK(read_to_close(slow, 10'000).find("error: no complete command") == 0);
  CHECK(read_to_close(silent, 10'000).find("error: no complete command") == 0);
  auto counters = s.counters();
  CHECK(counters.served == 1);
  CHECK(counters.timed_out == 2);
  close(slow);
  close(silent);
}

TEST_CASE("connections beyond the limit are refused and counted; the others are served") {
  TempDir dir;
  const std::string path = dir.path + "/control.sock";
  ControlSocket s(echo);
  REQUIRE(s.bind(path));
  s.start();
  std::vector<int> idle;
  for (std::size_t i = 0; i < ControlSocket::kMaxConnections; ++i) idle.push_back(open_client(path));
  // The server has accepted them all once this client, queued behind them, is refused.
  int extra = open_client(path);
  CHECK(read_to_close(extra, 10'000).find("error: busy") == 0);
  CHECK(s.counters().busy == 1);
  // One of the held connections completes its line and is answered.
  REQUIRE(send(idle[0], "hello\n", 6, MSG_NOSIGNAL) == 6);
  CHECK(read_to_close(idle[0], 10'000) == "ok hello\n");
  for (int fd : idle) close(fd);
  close(extra);
}

TEST_CASE("a line longer than the limit is refused, a line closed without newline is served") {
  TempDir dir;
  const std::string path = dir.path + "/control.sock";
  ControlSocket s(echo);
  REQUIRE(s.bind(path));
  s.start();
  int big = open_client(path);
  const std::string junk(ControlSocket::kMaxLine + 100, 'x');
  REQUIRE(send(big, junk.data(), junk.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(junk.size()));
  CHECK(read_to_close(big, 10'000).find("error: command longer") == 0);
  CHECK(s.counters().too_long == 1);
  close(big);
  int half = open_client(path, "no newline");
  shutdown(half, SHUT_WR);
  CHECK(read_to_close(half, 10'000) == "ok no newline\n");
  close(half);
}
