#include "api/control_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace skewscope {
namespace {

bool make_address(const std::string& path, sockaddr_un& addr) {
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return false;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  return true;
}

int connect_to(const std::string& path) {
  sockaddr_un addr{};
  if (!make_address(path, addr)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads up to a newline or 4 KiB, with a timeout: a client that never finishes its line cannot
// hold the control thread.
std::string read_line(int fd, int timeout_ms) {
  std::string line;
  char buf[512];
  while (line.size() < 4096) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
    if (auto nl = line.find('\n'); nl != std::string::npos) {
      line.resize(nl);
      break;
    }
  }
  return line;
}

}  // namespace

ControlSocket::~ControlSocket() { stop(); }

std::string ControlSocket::bind(const std::string& path) {
  sockaddr_un addr{};
  if (!make_address(path, addr)) return "control socket path '" + path + "' is empty or too long";
  if (int other = connect_to(path); other >= 0) {
    close(other);
    return "control socket " + path + " is in use by another agent";
  }
  unlink(path.c_str());  // a stale file from an agent that did not exit cleanly
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return std::string("control socket: ") + std::strerror(errno);
  mode_t old = umask(0177);  // created 0600 from the start: no window where others can connect
  int rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (rc != 0 || listen(fd_, 8) != 0) {
    std::string why = std::strerror(errno);
    close(fd_);
    fd_ = -1;
    return "control socket " + path + ": " + why;
  }
  chmod(path.c_str(), 0600);
  path_ = path;
  return {};
}

void ControlSocket::start() {
  thread_ = std::thread([this] { serve(); });
}

void ControlSocket::serve() {
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::string reply = handler_(read_line(client, 2000));
    write_all(client, reply + "\n");
    close(client);
  }
}

void ControlSocket::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
    unlink(path_.c_str());
  }
}

std::string control_request(const std::string& path, const std::string& line, bool& reached) {
  int fd = connect_to(path);
  reached = fd >= 0;
  if (fd < 0) return "error: cannot reach the agent's control socket " + path + ": " + std::strerror(errno);
  std::string reply;
  if (write_all(fd, line + "\n")) reply = read_line(fd, 5000);
  close(fd);
  if (reply.empty()) return "error: no reply from the agent";
  return reply;
}

}  // namespace skewscope
