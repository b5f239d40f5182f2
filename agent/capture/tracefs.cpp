#include "capture/tracefs.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace skewscope {
namespace {
constexpr long kTracefsMagic = 0x74726163;
}

bool tracefs_mounted() {
  struct statfs fs {};
  return statfs(kTracefsPath, &fs) == 0 && fs.f_type == kTracefsMagic;
}

Status ensure_tracefs() {
  if (tracefs_mounted()) return Status::ok();
  if (unshare(CLONE_NEWNS) != 0) return Status::fail(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return Status::fail(std::string("making / a slave mount: ") + std::strerror(errno));
  if (mount("tracefs", kTracefsPath, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return Status::fail(std::string("mount tracefs on ") + kTracefsPath + ": " + std::strerror(errno));
  return Status::ok();
}

}  // namespace skewscope
