// The capture's pure helpers for placing uprobes: /proc/PID/maps parsing and versioned exports.
#include "capture/rdma_maps.hpp"

#include <doctest/doctest.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <sstream>

using namespace skewscope::rdma;

TEST_CASE("maps: file-backed mappings with device, inode and offset; the rest skipped") {
  const char* text =
      "7f0000000000-7f0000010000 r--p 00000000 fe:00 14884880                   "
      "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0\n"
      "7f0000010000-7f0000030000 r-xp 00010000 fe:00 14884880                   "
      "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0\n"
      "7f0000040000-7f0000041000 rw-p 00000000 00:00 0 \n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
      "7f0000050000-7f0000051000 r-xp 00001000 fe:01 77                         /tmp/gone.so (deleted)\n"
      "garbage line\n"
      "7f0000060000-7f0000062000 r-xp 00001000 08:10 99                         /opt/lib with space/libx.so";
  auto maps = parse_maps(text);
  REQUIRE(maps.size() == 3);
  CHECK(maps[1].start == 0x7f0000010000);
  CHECK(maps[1].file_offset == 0x10000);
  CHECK(maps[1].dev == makedev(0xfe, 0));
  CHECK(maps[1].inode == 14884880);
  CHECK(maps[1].executable);
  CHECK_FALSE(maps[0].executable);
  CHECK(maps[2].path == "/opt/lib with space/libx.so");
  auto at = locate(maps, 0x7f0000011234);
  REQUIRE(at);
  CHECK(at->file_offset == 0x11234);
  CHECK(at->mapping == &maps[1]);
  CHECK_FALSE(locate(maps, 0x1000));
  CHECK(is_libibverbs(maps[0].path));
  CHECK_FALSE(is_libibverbs("/usr/lib/libmlx5.so.1"));
}

TEST_CASE("versioned export: bad input is an error, never a crash") {
  const auto empty = versioned_symbol_offset("", "ibv_create_qp", "IBVERBS_1.1");
  CHECK_FALSE(empty);
  CHECK_FALSE(empty.error.empty());
  std::string elf_header_only =
      "\x7f"
      "ELF\x02\x01\x01";
  elf_header_only.resize(64, '\0');
  CHECK_FALSE(versioned_symbol_offset(elf_header_only, "ibv_create_qp", "IBVERBS_1.1"));
  for (std::size_t cut = 0; cut < 64; cut += 7)
    CHECK_FALSE(versioned_symbol_offset(elf_header_only.substr(0, cut), "x", "V"));
}

TEST_CASE("versioned export: ibv_create_qp@IBVERBS_1.1 of the installed libibverbs, not its 1.0 copy") {
  std::ifstream in("/usr/lib/x86_64-linux-gnu/libibverbs.so.1", std::ios::binary);
  if (!in) return;  // no libibverbs here: nothing to read
  std::ostringstream s;
  s << in.rdbuf();
  const std::string elf = s.str();
  auto v11 = versioned_symbol_offset(elf, "ibv_create_qp", "IBVERBS_1.1");
  auto v10 = versioned_symbol_offset(elf, "ibv_create_qp", "IBVERBS_1.0");
  REQUIRE(v11);
  REQUIRE(v10);
  CHECK(*v11 != *v10);
  CHECK(*v11 < elf.size());
  CHECK_FALSE(versioned_symbol_offset(elf, "ibv_create_qp", "IBVERBS_9.9"));
  CHECK_FALSE(versioned_symbol_offset(elf, "no_such_function", "IBVERBS_1.1"));
}
