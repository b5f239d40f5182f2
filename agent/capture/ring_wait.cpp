#include "capture/ring_wait.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

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
  const int event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd < 0) return Result<RingWait>::fail(std::string("creating an eventfd: ") + std::strerror(errno));
  epoll_event entry{};
  entry.events = EPOLLIN;
  entry.data.u64 = kInterruptTag;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &entry) != 0) {
    const int err = errno;
    close(event_fd);
    return Result<RingWait>::fail(std::string("adding an eventfd to the ring buffer's epoll set: ") +
                                  std::strerror(err));
  }
  return Result<RingWait>::ok(RingWait(epoll_fd, event_fd));
}

RingWait::RingWait(RingWait&& other) noexcept
    : epoll_fd_(other.epoll_fd_), event_fd_(std::exchange(other.event_fd_, -1)) {}

RingWait& RingWait::operator=(RingWait&& other) noexcept {
  if (this != &other) {
    if (event_fd_ >= 0) close(event_fd_);
    epoll_fd_ = other.epoll_fd_;
    event_fd_ = std::exchange(other.event_fd_, -1);
  }
  return *this;
}

RingWait::~RingWait() {
  if (event_fd_ >= 0) close(event_fd_);  // closing removes it from the epoll set
}

int RingWait::wait(std::chrono::milliseconds timeout) const {
  epoll_event ready[4];
  if (epoll_wait(epoll_fd_, ready, 4, static_cast<int>(timeout.count())) < 0 && errno != EINTR) return errno;
  return 0;
}

void RingWait::interrupt() const {
  const std::uint64_t one = 1;
  // Stays readable (never read back): every later wait returns at once, until the reader stops.
  if (write(event_fd_, &one, sizeof one) < 0) {
    // Only a counter overflow fails, and then the eventfd is readable already.
  }
}

}  // namespace skewscope
