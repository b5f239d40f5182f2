// The wire capture's flags and what the kernel offers them: parsing --wire-timestamps, checking
// --wire-cgroup. No BPF object is loaded here, so
// the agent can refuse bad flags before it changes anything on the system.
#include <linux/magic.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "capture/wire_capture.hpp"

namespace skewscope {

Result<std::vector<WireInterface>> parse_wire_interfaces(const std::vector<std::string>& specs) {
  std::vector<WireInterface> out;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    std::size_t start = 0;
    while (start <= spec.size()) {
      std::size_t comma = spec.find(',', start);
      std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
      WireInterface w;
      std::size_t at = item.find('@');
      w.name = item.substr(0, at);
      if (at != std::string::npos) w.netns_path = item.substr(at + 1);
      if (w.name.empty() || w.name.size() >= IF_NAMESIZE || w.name.find('/') != std::string::npos ||
          w.name.find_first_of(" \t:") != std::string::npos)
        return Result<std::vector<WireInterface>>::fail("--wire-timestamps: '" + item +
                                                        "' is not IFACE or IFACE@NETNS_PATH");
      if (at != std::string::npos && (w.netns_path.empty() || w.netns_path.front() != '/'))
        return Result<std::vector<WireInterface>>::fail("--wire-timestamps: '" + item +
                                                        "': the namespace must be an absolute path");
      if (!seen.insert(w.label()).second)
        return Result<std::vector<WireInterface>>::fail("--wire-timestamps: '" + w.label() + "' is named twice");
      out.push_back(w);
    }
  }
  return Result<std::vector<WireInterface>>::ok(std::move(out));
}

Status check_wire_cgroup(const std::string& path) {
  if (path.empty() || path.front() != '/') return Status::fail("--wire-cgroup '" + path + "' must be an absolute path");
  struct statfs fs {};
  struct stat st {};
  if (::statfs(path.c_str(), &fs) != 0 || ::stat(path.c_str(), &st) != 0)
    return Status::fail("--wire-cgroup " + path + ": " + std::strerror(errno));
  if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode))
    return Status::fail("--wire-cgroup " + path + " is not a cgroup v2 directory");
  // The root of a cgroup2 mount is inode 1: attaching there would stamp every socket of the host.
  if (st.st_ino == 1) return Status::fail("--wire-cgroup " + path + " is the root cgroup: name a cgroup below it");
  return Status::ok();
}

}  // namespace skewscope
