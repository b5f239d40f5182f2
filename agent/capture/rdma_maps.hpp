// Where a process's verbs code lives on disk: /proc/PID/maps lines, and the file offset of a
// versioned ELF export. A uprobe sits on (file, offset), so every address the kernel side reports
// (a provider's post_send, read from a verbs context) is turned into one with these.
// Pure: parsing takes text and bytes, so tests need no process and no privileges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope::rdma {

// One file-backed mapping of /proc/PID/maps.
struct Mapping {
  std::uint64_t start = 0, end = 0, file_offset = 0;
  std::uint64_t dev = 0;  // makedev(major, minor)
  std::uint64_t inode = 0;
  bool executable = false;
  std::string path;  // as the process sees it (its own mount namespace)
};

// File-backed mappings only (anonymous, [heap], [vdso] and unparsable lines are skipped).
std::vector<Mapping> parse_maps(std::string_view text);

// The mapping holding `address`, and the address's offset in that file.
struct Located {
  const Mapping* mapping = nullptr;
  std::uint64_t file_offset = 0;
};
std::optional<Located> locate(const std::vector<Mapping>& maps, std::uint64_t address);

// Is this path the verbs core library (libibverbs.so*)?
bool is_libibverbs(std::string_view path);

// File offset of the definition of `name` with symbol version `version` (e.g. "IBVERBS_1.1"),
// from an ELF64 shared object's bytes: .dynsym + .gnu.version + .gnu.version_d, then the PT_LOAD
// that holds the address. Several libibverbs exports keep an older compat copy first in .dynsym,
// which attaching by name would pick (and never fire).
Result<std::uint64_t> versioned_symbol_offset(std::string_view elf, std::string_view name, std::string_view version);

}  // namespace skewscope::rdma
