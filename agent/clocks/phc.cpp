#include "clocks/phc.hpp"

#include <fcntl.h>
#include <linux/ptp_clock.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace skewscope::clocks {
namespace {

// phc2sys takes 5 readings by default; a few more cost microseconds and give the minimum-bracket
// choice more to pick from.
constexpr unsigned kSamples = 9;

std::int64_t to_ns(const ptp_clock_time& t) { return t.sec * 1'000'000'000LL + t.nsec; }

// Numeric order so ptp10 sorts after ptp9.
bool phc_less(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Each returns 0 on success or the ioctl's errno.
int try_precise(int fd, std::vector<PhcSample>& out) {
  ptp_sys_offset_precise p;
  std::memset(&p, 0, sizeof p);
  if (::ioctl(fd, PTP_SYS_OFFSET_PRECISE, &p) != 0) return errno;
  // A hardware cross-timestamp: both clocks captured at the same instant, zero bracket.
  const std::int64_t sys = to_ns(p.sys_realtime);
  out.push_back({sys, to_ns(p.device), sys});
  return 0;
}

int try_extended(int fd, std::vector<PhcSample>& out) {
  ptp_sys_offset_extended e;
  std::memset(&e, 0, sizeof e);
  e.n_samples = kSamples;
  if (::ioctl(fd, PTP_SYS_OFFSET_EXTENDED, &e) != 0) return errno;
  for (unsigned i = 0; i < std::min<unsigned>(e.n_samples, PTP_MAX_SAMPLES); ++i)
    out.push_back({to_ns(e.ts[i][0]), to_ns(e.ts[i][1]), to_ns(e.ts[i][2])});
  return 0;
}

int try_basic(int fd, std::vector<PhcSample>& out) {
  ptp_sys_offset b;
  std::memset(&b, 0, sizeof b);
  b.n_samples = kSamples;
  if (::ioctl(fd, PTP_SYS_OFFSET, &b) != 0) return errno;
  // ts = sys, phc, sys, phc, ..., sys: each PHC read shares its brackets with its neighbours.
  for (unsigned i = 0; i < std::min<unsigned>(b.n_samples, PTP_MAX_SAMPLES); ++i)
    out.push_back({to_ns(b.ts[2 * i]), to_ns(b.ts[2 * i + 1]), to_ns(b.ts[2 * i + 2])});
  return 0;
}

bool unsupported(int err) { return err == EOPNOTSUPP || err == ENOTTY || err == EINVAL; }

}  // namespace

const char* to_string(PhcMethod m) {
  switch (m) {
    case PhcMethod::kPrecise: return "precise";
    case PhcMethod::kExtended: return "extended";
    case PhcMethod::kBasic: return "basic";
  }
  return "basic";
}

std::optional<PhcOffset> best_sample(std::span<const PhcSample> samples) {
  std::optional<PhcOffset> best;
  for (const auto& s : samples) {
    if (s.sys_after_ns < s.sys_before_ns) continue;  // the system clock stepped mid-read
    const std::int64_t interval = s.sys_after_ns - s.sys_before_ns;
    if (best && interval >= best->interval_ns) continue;
    const std::int64_t midpoint = s.sys_before_ns + interval / 2;
    best = PhcOffset{midpoint - s.phc_ns, interval};
  }
  return best;
}

std::vector<std::string> list_phcs(const std::string& sysfs_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(sysfs_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("ptp", 0) == 0 && name.size() > 3 &&
        std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.push_back(name);
  }
  std::sort(out.begin(), out.end(), phc_less);
  return out;
}

PhcReading read_phc(const std::string& clock, const std::string& sysfs_dir, const std::string& dev_dir) {
  PhcReading r;
  r.clock = clock;
  {
    std::ifstream in(sysfs_dir + "/" + clock + "/clock_name");
    std::getline(in, r.name);
  }
  Fd fd(::open((dev_dir + "/" + clock).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    r.sys_errno = errno;
    r.error = reason_from_errno(r.sys_errno);
    return r;
  }
  std::vector<PhcSample> samples;
  struct Attempt {
    PhcMethod method;
    int (*fn)(int, std::vector<PhcSample>&);
  };
  for (const Attempt a : {Attempt{PhcMethod::kPrecise, try_precise}, Attempt{PhcMethod::kExtended, try_extended},
                          Attempt{PhcMethod::kBasic, try_basic}}) {
    samples.clear();
    const int err = a.fn(fd.get(), samples);
    if (err == 0) {
      r.offset = best_sample(samples);
      r.method = a.method;
      if (!r.offset) r.error = ErrorReason::kIo;  // the driver returned only unusable samples
      return r;
    }
    r.sys_errno = err;
    if (!unsupported(err)) break;  // a real failure: do not mask it with a weaker method
  }
  r.error = unsupported(r.sys_errno) ? ErrorReason::kUnsupported : reason_from_errno(r.sys_errno);
  return r;
}

}  // namespace skewscope::clocks
