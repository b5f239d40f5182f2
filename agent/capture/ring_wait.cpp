#include "capture/ring_wait.hpp"

#include <sys/epoll.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace skewscope {

bool ReaderIdleFlag::arm() {
  if (!flag_) return false;
  // seq_cst: a locked exchange on x86, which orders the reader's later loads (the ring's producer
  // position) after this store.
  std::atomic_ref<std::uint32_t>(*flag_).store(1, std::memory_order_seq_cst);
  return true;
}

namespace {
// libbpf tags its rings' entries with their index (data.fd); this one cannot be an index.
constexpr std::uint64_t kInterruptTag = ~std::uint64_t{0};
}  // namespace

Result<RingWait> RingWait::attach(int epoll_fd) {
  auto stop = StopEvent::create();
  if (!stop) return Result<RingWait>::fail(stop.error);
  epoll_event entry{};
  entry.events = EPOLLIN;
  entry.data.u64 = kInterruptTag;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, stop->fd(), &entry) != 0) {
    const int err = errno;  // before the message's allocation
    return Result<RingWait>::fail(std::string("adding an eventfd to the ring buffer's epoll set: ") +
                                  std::strerror(err));
  }
  return Result<RingWait>::ok(RingWait(epoll_fd, std::move(*stop)));
}

int RingWait::wait(std::chrono::milliseconds timeout) const {
  epoll_event ready[4];
  if (epoll_wait(epoll_fd_, ready, 4, static_cast<int>(timeout.count())) < 0 && errno != EINTR) return errno;
  return 0;
}

}  // namespace skewscope
