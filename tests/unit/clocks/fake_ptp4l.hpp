// A stand-in for ptp4l's management socket, for unprivileged tests: binds a UNIX datagram socket
// in a temporary directory and answers GETs on a thread, with replies built from the captured
// ptp4l data sets, or misbehaves on purpose.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "clocks/ptp_management.hpp"
#include "ptp4l_data.hpp"

namespace skewscope::clocks::testing {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/skewscope-clocks-test.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// kPortFlood answers PORT_DATA_SET with kFloodDuplicates copies of port 1, then ports
// 2..kFloodPorts: a broken or hostile peer.
enum class Behaviour { kAnswer, kSilent, kGarbage, kError, kTwoPorts, kWrongId, kLateDuplicate, kPortFlood };
inline constexpr int kFloodDuplicates = 3000;
inline constexpr int kFloodPorts = 400;

// The replies ptp4l gave in the capture, keyed by management id.
inline ptp::Body captured_body(ptp::ManagementId id, const std::string& role = "slave") {
  const char* name = "time_status_np";
  switch (id) {
    case ptp::ManagementId::kTimeStatusNp: name = "time_status_np"; break;
    case ptp::ManagementId::kPortDataSet: name = "port_data_set"; break;
    case ptp::ManagementId::kCurrentDataSet: name = "current_data_set"; break;
    case ptp::ManagementId::kParentDataSet: name = "parent_data_set"; break;
  }
  auto r = ptp::decode(testdata::bytes(role + "_" + name + ".bin"));
  return r->body;
}

class FakePtp4l {
 public:
  explicit FakePtp4l(std::string path, Behaviour b = Behaviour::kAnswer) : path_(std::move(path)), behaviour_(b) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path_.c_str(), sizeof sa.sun_path - 1);
    ::unlink(path_.c_str());
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) std::abort();
    thread_ = std::thread([this] { run(); });
  }
  ~FakePtp4l() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  void set_behaviour(Behaviour b) { behaviour_ = b; }
  // Replace the TIME_STATUS_NP served from now on (e.g. to advance ingress_time).
  void set_time_status(const ptp::TimeStatusNp& t) {
    std::lock_guard l(mu_);
    time_status_ = t;
  }
  void set_port_state(std::uint8_t s) { port_state_ = s; }
  int requests() const { return requests_; }

 private:
  void reply(const sockaddr_un& to, socklen_t len, const std::vector<std::uint8_t>& b) {
    ::sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<const sockaddr*>(&to), len);
  }

  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      std::uint8_t buf[2048];
      sockaddr_un from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) continue;
      ++requests_;
      auto d = ptp::decode({buf, static_cast<std::size_t>(n)});
      if (!d) continue;
      const ptp::Message* req = &*d;
      const auto id = static_cast<ptp::ManagementId>(std::get<ptp::OtherTlv>(req->body).management_id);
      ptp::Body body = captured_body(id);
      if (auto* t = std::get_if<ptp::TimeStatusNp>(&body)) {
        std::lock_guard l(mu_);
        if (time_status_) *t = *time_status_;
      }
      if (auto* port = std::get_if<ptp::PortDataSet>(&body); port && port_state_) port->port_state = port_state_;
      const ptp::PortIdentity me{{1, 2, 3, 0xff, 0xfe, 4, 5, 6}, 0};
      switch (behaviour_.load()) {
        case Behaviour::kAnswer: reply(from, len, ptp::encode_response(*req, body, me)); break;
        case Behaviour::kSilent: break;
        case Behaviour::kGarbage: reply(from, len, {0x0d, 0x02, 0x00, 0x10, 1, 2, 3}); break;
        case Behaviour::kError:
          if (id == ptp::ManagementId::kParentDataSet)
            reply(from, len, ptp::encode_response(*req, ptp::ManagementError{0x0006, 0xC000, ""}, me));
          else
            reply(from, len, ptp::encode_response(*req, body, me));
          break;
        case Behaviour::kTwoPorts:
          reply(from, len, ptp::encode_response(*req, body, me));
          if (auto* port = std::get_if<ptp::PortDataSet>(&body)) {
            port->port_identity.port_number = 2;
            port->port_state = static_cast<std::uint8_t>(ptp::PortState::kSlave);
            reply(from, len, ptp::encode_response(*req, body, me));
          }
          break;
        case Behaviour::kWrongId:
          reply(from, len, ptp::encode_response(*req, captured_body(ptp::ManagementId::kCurrentDataSet), me));
          break;
        case Behaviour::kPortFlood:
          reply(from, len, ptp::encode_response(*req, body, me));
          if (auto* port = std::get_if<ptp::PortDataSet>(&body)) {
            for (int i = 0; i < kFloodDuplicates; ++i) reply(from, len, ptp::encode_response(*req, body, me));
            for (int n = 2; n <= kFloodPorts; ++n) {
              port->port_identity.port_number = static_cast<std::uint16_t>(n);
              reply(from, len, ptp::encode_response(*req, body, me));
            }
          }
          break;
        case Behaviour::kLateDuplicate:
          reply(from, len, ptp::encode_response(*req, body, me));
          reply(from, len, ptp::encode_response(*req, body, me));
          break;
      }
    }
  }

  std::string path_;
  std::atomic<Behaviour> behaviour_;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::atomic<std::uint8_t> port_state_{0};
  std::mutex mu_;
  std::optional<ptp::TimeStatusNp> time_status_;
  int fd_ = -1;
  std::thread thread_;
};

}  // namespace skewscope::clocks::testing
