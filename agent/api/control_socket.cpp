#include "api/control_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace skewscope {
namespace {

using Clock = std::chrono::steady_clock;

bool make_address(const std::string& path, sockaddr_un& addr) {
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return false;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  return true;
}

// Connects to path; -1 with errno set on failure. Non-blocking, so a listener with a full backlog
// is EAGAIN at once instead of a wait.
int connect_to(const std::string& path, bool nonblocking) {
  sockaddr_un addr{};
  if (!make_address(path, addr)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// Best effort, never blocks and never raises SIGPIPE: a reply is one short line, which fits in
// a fresh unix socket's buffer; a peer that went away simply does not get it.
void send_reply(int fd, const std::string& line) {
  std::string data = line + "\n";
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

const char* describe(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a socket";
}

int ms_until(Clock::time_point t, Clock::time_point now) {
  if (t <= now) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(t - now).count());
}

}  // namespace

ControlSocket::~ControlSocket() { stop(); }

Status ControlSocket::bind(const std::string& path) {
  sockaddr_un addr{};
  if (!make_address(path, addr)) return Status::fail("control socket path '" + path + "' is empty or too long");
  // lstat, not stat: a symlink is refused as such, never followed to whatever it names.
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Status::fail("control socket path " + path + " exists and is " + describe(st.st_mode) +
                          ": refusing to replace it (remove it, or choose another --control-socket)");
    if (int other = connect_to(path, true); other >= 0) {
      close(other);
      return Status::fail("control socket " + path + " is in use by another agent");
    }
    // ECONNREFUSED is the one answer that proves nobody listens: a stale socket from an agent
    // that did not exit cleanly. Anything else (EACCES, EAGAIN from a busy listener) is refused.
    if (errno != ECONNREFUSED)
      return Status::fail("control socket " + path + " exists and cannot be checked (" + std::strerror(errno) +
                          "): refusing to replace it");
    if (unlink(path.c_str()) != 0 && errno != ENOENT)
      return Status::fail("control socket " + path + ": cannot remove the stale socket: " + std::strerror(errno));
  } else if (errno != ENOENT) {
    return Status::fail("control socket " + path + ": " + std::strerror(errno));
  }
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return Status::fail(std::string("control socket: ") + std::strerror(errno));
  mode_t old = umask(0177);  // created 0600 from the start: no window where others can connect
  int rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (rc != 0 || listen(fd_, 64) != 0) {
    std::string why = std::strerror(errno);
    close(fd_);
    fd_ = -1;
    return Status::fail("control socket " + path + ": " + why);
  }
  chmod(path.c_str(), 0600);
  if (lstat(path.c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  path_ = path;
  return Status::ok();
}

void ControlSocket::start() {
  if (auto made = StopEvent::create()) stop_event_.emplace(std::move(*made));
  thread_ = std::thread([this] { serve(); });
}

void ControlSocket::serve() {
  struct Connection {
    int fd;
    std::string line;
    Clock::time_point deadline;
  };
  std::vector<Connection> conns;
  std::vector<pollfd> fds;
  auto finish = [&](std::size_t i, const std::string& reply) {
    send_reply(conns[i].fd, reply);
    close(conns[i].fd);
    conns[i].fd = -1;
  };
  // fds: the listening socket, the stop eventfd (-1: poll ignores it), then one per connection.
  constexpr std::size_t kFirstConnection = 2;
  while (!stopping_) {
    fds.assign({pollfd{fd_, POLLIN, 0}, pollfd{stop_event_ ? stop_event_->fd() : -1, POLLIN, 0}});
    std::optional<Clock::time_point> wake;                                   // none: until a client or the stop
    if (!stop_event_) wake = Clock::now() + std::chrono::milliseconds(200);  // to see stopping_
    for (const auto& c : conns) {
      fds.push_back(pollfd{c.fd, POLLIN, 0});
      wake = wake ? std::min(*wake, c.deadline) : c.deadline;
    }
    int ready = ::poll(fds.data(), fds.size(), wake ? ms_until(*wake, Clock::now()) : -1);
    if (ready < 0 && errno != EINTR) break;
    const Clock::time_point now = Clock::now();

    for (std::size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      if (fds[i + kFirstConnection].revents != 0) {
        char buf[512];
        ssize_t n = read(c.fd, buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n < 0 || (n == 0 && c.line.empty())) {  // reset, or a connect-and-close probe
          close(c.fd);
          c.fd = -1;
          continue;
        }
        if (n > 0) c.line.append(buf, static_cast<std::size_t>(n));
        const auto nl = c.line.find('\n');
        if (nl == std::string::npos && c.line.size() > kMaxLine) {
          ++too_long_;
          finish(i, "error: command longer than " + std::to_string(kMaxLine) + " bytes");
          continue;
        }
        // A complete line, or the client closed its side (what it sent is the command).
        if (nl != std::string::npos || n <= 0) {
          if (nl != std::string::npos) c.line.resize(nl);
          std::string reply = handler_(c.line);
          ++served_;
          finish(i, reply);
          continue;
        }
      }
      if (now >= c.deadline) {
        ++timed_out_;
        finish(i, "error: no complete command within " + std::to_string(kLineDeadline.count()) + " ms");
      }
    }
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const Connection& c) { return c.fd < 0; }), conns.end());

    if (fds[0].revents & POLLIN) {
      for (;;) {
        int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (client < 0) break;  // EAGAIN: the backlog is empty
        if (conns.size() >= kMaxConnections) {
          ++busy_;
          send_reply(client, "error: busy (too many control connections), try again");
          close(client);
          continue;
        }
        conns.push_back(Connection{client, {}, Clock::now() + kLineDeadline});
      }
    }
  }
  for (auto& c : conns) close(c.fd);
}

void ControlSocket::stop() {
  stopping_ = true;
  if (stop_event_) stop_event_->notify();
  if (thread_.joinable()) thread_.join();
  stop_event_.reset();
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
    // Only our own socket: if something else was put at the path meanwhile, it stays.
    struct stat st {};
    if (lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == dev_ && st.st_ino == ino_)
      unlink(path_.c_str());
  }
}

ControlSocketCounters ControlSocket::counters() const {
  return {served_.load(), busy_.load(), timed_out_.load(), too_long_.load()};
}

std::string control_request(const std::string& path, const std::string& line, bool& reached) {
  int fd = connect_to(path, false);
  reached = fd >= 0;
  if (fd < 0) return "error: cannot reach the agent's control socket " + path + ": " + std::strerror(errno);
  std::string data = line + "\n", reply;
  bool sent = true;
  for (std::size_t done = 0; done < data.size();) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      sent = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  // The whole reply within 5 s, however it trickles in.
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
  while (sent && reply.find('\n') == std::string::npos && reply.size() < ControlSocket::kMaxLine) {
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, ms_until(deadline, Clock::now()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) break;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  if (auto nl = reply.find('\n'); nl != std::string::npos) reply.resize(nl);
  if (reply.empty()) return "error: no reply from the agent";
  return reply;
}

}  // namespace skewscope
