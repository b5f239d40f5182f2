#include "capture/rdma_gid.hpp"

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

std::optional<Address> read_local_gid(std::uint32_t pid, std::string_view device, unsigned port, unsigned index) {
  const std::string path = gid_table_path(pid, device, port, index);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto gid = parse_sysfs_gid(text);
  // An unused table entry reads as all zeros: no address to key by.
  if (!gid || *gid == Address{}) return std::nullopt;
  return gid;
}

}  // namespace skewscope
