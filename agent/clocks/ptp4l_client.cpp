#include "clocks/ptp4l_client.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>

namespace skewscope::clocks {
namespace {

constexpr ptp::ManagementId kRoundIds[] = {
    ptp::ManagementId::kTimeStatusNp,
    // PORT_DATA_SET is not last: ptp4l answers a wildcard port GET once per port, in one go, and
    // handles our datagrams in order, so every per-port answer is queued before the last reply.
    ptp::ManagementId::kPortDataSet,
    ptp::ManagementId::kCurrentDataSet,
    ptp::ManagementId::kParentDataSet,
};
// Larger than any management message ptp4l sends over UDS (it uses a 1500-byte buffer).
constexpr std::size_t kRecvBuffer = 2048;
// Datagrams read per drain: a peer flooding our reply socket cannot hold the clock thread past
// the round's deadline (the rest waits for the next drain, or is dropped with the socket).
constexpr int kMaxDatagramsPerDrain = 1024;

std::atomic<unsigned> g_client_counter{0};

bool fill_address(const std::string& path, sockaddr_un& sa) {
  std::memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof sa.sun_path) return false;
  std::memcpy(sa.sun_path, path.data(), path.size());
  return true;
}

constexpr std::string_view kSocketPrefix = "skewscope-pmc.";

// A process killed before its destructors ran leaves its reply sockets behind. Once per
// directory, remove those (our own naming only) whose process is gone, so that restarts of the
// agent do not pile them up in /var/run.
void remove_stale_sockets(const std::string& dir) {
  static std::mutex mu;
  static std::set<std::string> done;
  {
    std::lock_guard lock(mu);
    if (!done.insert(dir).second) return;
  }
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kSocketPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + kSocketPrefix.size(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    std::error_code sec;
    if (!std::filesystem::is_socket(it->symlink_status(sec))) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) ::unlink(it->path().c_str());
  }
}

}  // namespace

Ptp4lClient::Ptp4lClient(Options opts) : opts_(std::move(opts)) {
  // Like pmc over UDS: clock identity 0, our pid as port number. ptp4l copies it into the
  // replies' targetPortIdentity, which we check.
  self_.port_number = static_cast<std::uint16_t>(::getpid());
}

Ptp4lClient::~Ptp4lClient() { close_socket(); }

Ptp4lClient::Ptp4lClient(Ptp4lClient&& o) noexcept
    : opts_(std::move(o.opts_)),
      fd_(std::exchange(o.fd_, -1)),
      path_(std::exchange(o.path_, {})),
      next_seq_(o.next_seq_),
      self_(o.self_),
      pending_(std::move(o.pending_)) {}

Ptp4lClient& Ptp4lClient::operator=(Ptp4lClient&& o) noexcept {
  if (this != &o) {
    close_socket();
    opts_ = std::move(o.opts_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::exchange(o.path_, {});
    next_seq_ = o.next_seq_;
    self_ = o.self_;
    pending_ = std::move(o.pending_);
  }
  return *this;
}

void Ptp4lClient::close_socket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
}

bool Ptp4lClient::open_socket(QueryResult& res) {
  auto fail = [&](ErrorReason reason, int err) {
    res.error = reason;
    res.sys_errno = err;
    res.errors.add(reason);
    close_socket();
    return false;
  };
  remove_stale_sockets(opts_.client_dir);
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return fail(reason_from_errno(errno), errno);
  const std::string path = opts_.client_dir + "/" + std::string(kSocketPrefix) + std::to_string(::getpid()) + "." +
                           std::to_string(g_client_counter.fetch_add(1));
  sockaddr_un sa;
  if (!fill_address(path, sa)) return fail(ErrorReason::kIo, ENAMETOOLONG);
  // A file at our path can only be left by a dead process that had our pid.
  ::unlink(path.c_str());
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) return fail(reason_from_errno(errno), errno);
  path_ = path;
  return true;
}

void Ptp4lClient::drain(QueryResult& res) {
  std::uint8_t buf[kRecvBuffer];
  for (int i = 0; i < kMaxDatagramsPerDrain; ++i) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) return;  // EAGAIN: queue empty; anything else will show on the next recv
    const bool truncated = static_cast<std::size_t>(n) > sizeof buf;
    handle(buf, truncated ? sizeof buf : static_cast<std::size_t>(n), truncated, res);
  }
}

void Ptp4lClient::handle(const std::uint8_t* data, std::size_t size, bool truncated, QueryResult& res) {
  if (truncated) {
    res.errors.add(ErrorReason::kMalformed);
    return;
  }
  auto decoded = ptp::decode({data, size});
  if (!decoded) {
    res.errors.add(ErrorReason::kMalformed);
    return;
  }
  const ptp::Message* msg = &*decoded;
  Pending* p = nullptr;
  for (auto& cand : pending_)
    if (cand.seq == msg->sequence_id) p = &cand;
  if (p == nullptr || msg->action != ptp::Action::kResponse || msg->target != self_) {
    res.errors.add(ErrorReason::kUnexpectedReply);  // from an earlier round, or not for us
    return;
  }
  auto& r = res.reading;
  bool accepted = false;
  if (auto* e = std::get_if<ptp::ManagementError>(&msg->body)) {
    res.errors.add(ErrorReason::kManagementError);
    r.management_errors.push_back(*e);
    p->answered = true;
    return;
  } else if (auto* t = std::get_if<ptp::TimeStatusNp>(&msg->body); t && p->id == ptp::ManagementId::kTimeStatusNp) {
    accepted = !p->answered;
    if (accepted) r.time_status = *t;
  } else if (auto* port = std::get_if<ptp::PortDataSet>(&msg->body); port && p->id == ptp::ManagementId::kPortDataSet) {
    // One answer per port: a repeated portIdentity is a duplicate, not another port, and no more
    // than kMaxPtpPorts are kept, so a flood of replies costs neither memory nor a false count.
    const bool known = std::any_of(r.ports.begin(), r.ports.end(),
                                   [&](const ptp::PortDataSet& q) { return q.port_identity == port->port_identity; });
    accepted = !known && r.ports.size() < kMaxPtpPorts;
    if (accepted) r.ports.push_back(*port);
  } else if (auto* c = std::get_if<ptp::CurrentDataSet>(&msg->body); c && p->id == ptp::ManagementId::kCurrentDataSet) {
    accepted = !p->answered;
    if (accepted) r.current = *c;
  } else if (auto* pd = std::get_if<ptp::ParentDataSet>(&msg->body); pd && p->id == ptp::ManagementId::kParentDataSet) {
    accepted = !p->answered;
    if (accepted) r.parent = *pd;
  } else {
    res.errors.add(ErrorReason::kMalformed);  // right sequence id, wrong kind of answer
    return;
  }
  if (!accepted) {
    res.errors.add(ErrorReason::kUnexpectedReply);  // a duplicate
    return;
  }
  p->answered = true;
}

QueryResult Ptp4lClient::query() {
  QueryResult res;
  if (fd_ < 0 && !open_socket(res)) return res;
  pending_.clear();
  drain(res);  // replies that missed the previous round's deadline

  sockaddr_un server;
  if (!fill_address(opts_.server_path, server)) {  // empty, or longer than sun_path
    res.error = ErrorReason::kIo;
    res.sys_errno = ENAMETOOLONG;
    res.errors.add(ErrorReason::kIo);
    return res;
  }
  for (auto id : kRoundIds) {
    ptp::GetRequest req{id, next_seq_++, self_, opts_.domain};
    const auto bytes = ptp::encode_get(req);
    const ssize_t n = ::sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                               reinterpret_cast<const sockaddr*>(&server), sizeof server);
    if (n < 0) {
      const int err = errno;
      res.error = reason_from_errno(err);
      res.sys_errno = err;
      res.errors.add(*res.error);
      pending_.clear();
      return res;
    }
    pending_.push_back({id, req.sequence_id, false});
  }

  auto all_answered = [&] {
    for (const auto& p : pending_)
      if (!p.answered) return false;
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + opts_.timeout;
  while (!all_answered()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd pfd{fd_, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno != EINTR) {
      res.errors.add(ErrorReason::kIo);
      break;
    }
    if (rc > 0) drain(res);
  }

  std::size_t answered = 0;
  for (const auto& p : pending_) answered += p.answered ? 1 : 0;
  if (answered < pending_.size()) {
    res.errors.add(ErrorReason::kTimeout);
    res.error =
        (answered == 0 && res.errors[ErrorReason::kMalformed] > 0) ? ErrorReason::kMalformed : ErrorReason::kTimeout;
    // Rebind next round: late replies then bounce off a closed socket instead of confusing the
    // next round, and a reply socket deleted under us (tmp cleaners) is recreated.
    close_socket();
  } else if (!res.reading.management_errors.empty()) {
    res.error = ErrorReason::kManagementError;
  }
  pending_.clear();
  return res;
}

}  // namespace skewscope::clocks
