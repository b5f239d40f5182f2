#include "capture/rdma_gid.hpp"

#include <doctest/doctest.h>

namespace skewscope {

TEST_CASE("a RoCEv2 GID from sysfs is the host's IPv4-mapped address") {
  // As /sys/class/infiniband/DEV/ports/1/gids/N prints it, newline included.
  auto gid = parse_sysfs_gid("0000:0000:0000:0000:0000:ffff:0a4d:0001\n");
  REQUIRE(gid);
  CHECK(*gid == Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1});
  auto ib = parse_sysfs_gid("fe80:0000:0000:0000:0202:C9FF:fe00:0001");
  REQUIRE(ib);
  CHECK((*ib)[0] == 0xfe);
  CHECK((*ib)[10] == 0xc9);
}

TEST_CASE("malformed GID text is refused, every truncated prefix included") {
  const std::string good = "0000:0000:0000:0000:0000:ffff:0a4d:0001";
  for (std::size_t n = 0; n < good.size(); ++n) CHECK_FALSE(parse_sysfs_gid(good.substr(0, n)));
  CHECK_FALSE(parse_sysfs_gid(good + "0"));
  CHECK_FALSE(parse_sysfs_gid("0000-0000:0000:0000:0000:ffff:0a4d:0001"));
  CHECK_FALSE(parse_sysfs_gid("0000:0000:0000:0000:0000:ffff:0a4d:000g"));
  CHECK_FALSE(parse_sysfs_gid("::ffff:10.77.0.1"));
  CHECK_FALSE(parse_sysfs_gid(good + "\n\n"));
}

TEST_CASE("the GID table path stays inside the device's directory") {
  CHECK(gid_table_path(42, "mlx5_0", 1, 3) == "/proc/42/root/sys/class/infiniband/mlx5_0/ports/1/gids/3");
  CHECK(gid_table_path(42, "", 1, 0).empty());
  CHECK(gid_table_path(42, "..", 1, 0).empty());
  CHECK(gid_table_path(42, "a/../../etc", 1, 0).empty());
  CHECK_FALSE(read_local_gid(0xfffffff0u, "lab0", 1, 0));  // no such process: unknown, not an error
}

}  // namespace skewscope
