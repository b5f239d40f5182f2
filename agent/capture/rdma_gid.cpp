#include "capture/rdma_gid.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

namespace skewscope {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<Address> parse_sysfs_gid(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  // Exactly "xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:xxxx": the kernel prints every digit.
  if (text.size() != 39) return std::nullopt;
  Address gid{};
  for (std::size_t group = 0; group < 8; ++group) {
    const std::size_t at = group * 5;
    if (group < 7 && text[at + 4] != ':') return std::nullopt;
    int value = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const int d = hex_digit(text[at + i]);
      if (d < 0) return std::nullopt;
      value = value * 16 + d;
    }
    gid[group * 2] = static_cast<std::uint8_t>(value >> 8);
    gid[group * 2 + 1] = static_cast<std::uint8_t>(value & 0xff);
  }
  return gid;
}

std::string gid_table_path(std::uint32_t pid, std::string_view device, unsigned port, unsigned index) {
  if (device.empty() || device == "." || device == ".." || device.find('/') != std::string_view::npos ||
      device.find('\0') != std::string_view::npos)
    return {};
  return "/proc/" + std::to_string(pid) + "/root/sys/class/infiniband/" + std::string(device) + "/ports/" +
         std::to_string(port) + "/gids/" + std::to_string(index);
}

namespace {

// An unused table entry reads as all zeros: no address to key by.
std::optional<Address> usable_gid(std::string_view text) {
  auto gid = parse_sysfs_gid(text);
  if (!gid || *gid == Address{}) return std::nullopt;
  return gid;
}

}  // namespace

std::optional<Address> read_local_gid(std::uint32_t pid, std::string_view device, unsigned port, unsigned index) {
  const std::string path = gid_table_path(pid, device, port, index);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  return usable_gid(std::string(std::istreambuf_iterator<char>(in), {}));
}

GidTableDirs::~GidTableDirs() {
  for (auto& [pid, held] : dirs_) close(held.fd);
}

bool GidTableDirs::hold(std::uint32_t pid) {
  auto it = dirs_.find(pid);
  if (it == dirs_.end() && dirs_.size() >= kMaxHeld) {
    ++not_held_;
    return false;
  }
  const std::string path = "/proc/" + std::to_string(pid) + "/root/sys/class/infiniband";
  const int fd = open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;  // gone already, or no RDMA class in its sysfs: read by path later
  if (it != dirs_.end()) {
    close(it->second.fd);  // a reused pid, or a second device: its current view wins
    it->second = Held{fd, false};
  } else {
    dirs_.emplace(pid, Held{fd, false});
  }
  return true;
}

std::optional<Address> GidTableDirs::read(std::uint32_t pid, std::string_view device, unsigned port,
                                          unsigned index) const {
  auto it = dirs_.find(pid);
  if (it == dirs_.end()) return read_local_gid(pid, device, port, index);
  const std::string full = gid_table_path(pid, device, port, index);
  if (full.empty()) return std::nullopt;
  // The same file, relative to the held directory: "DEV/ports/PORT/gids/INDEX".
  const std::string relative = full.substr(full.find("/infiniband/") + std::string_view("/infiniband/").size());
  const int fd = openat(it->second.fd, relative.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[64];
  const ssize_t n = ::read(fd, text, sizeof text);
  close(fd);
  if (n <= 0) return std::nullopt;
  return usable_gid(std::string_view(text, static_cast<std::size_t>(n)));
}

void GidTableDirs::forget_gone(const std::set<std::uint32_t>& alive) {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (alive.contains(it->first)) {
      it->second.missing_once = false;
      ++it;
    } else if (!it->second.missing_once) {
      it->second.missing_once = true;
      ++it;
    } else {
      close(it->second.fd);
      it = dirs_.erase(it);
    }
  }
}

}  // namespace skewscope
