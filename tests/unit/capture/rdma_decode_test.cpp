// capture/rdma_decode: each kind of verbs record -> the fields the pairing reads, and only those.
#include <doctest/doctest.h>

#include <cstring>

#include "capture/rdma_decode.hpp"

using namespace skewscope;

namespace {

skewscope_rdma_event record(std::uint8_t kind) {
  skewscope_rdma_event e{};
  e.kind = kind;
  e.ts_ns = 123'456'789'000;
  e.cgroup_id = 4242;
  e.netns_ino = 4026531840u;
  e.pid = 310;
  e.tid = 311;
  e.qpn = 0x11;
  e.ordinal = 9;
  e.bytes = 4096;
  e.peer_qpn = 0x22;
  for (int i = 0; i < 16; ++i) e.gid[i] = static_cast<std::uint8_t>(0xa0 + i);
  for (int i = 0; i < 16; ++i) e.local_gid[i] = static_cast<std::uint8_t>(0xb0 + i);
  e.ts_source = SKEWSCOPE_RDMA_TS_PROBE;
  return e;
}

}  // namespace

TEST_CASE("a CONNECT record names the peer QP and GID, the local GID when resolved, and tracking") {
  skewscope_rdma_event e = record(SKEWSCOPE_RDMA_CONNECT);
  e.opcode = 1;
  e.local_gid_known = 1;
  const RdmaRecord r = decode_rdma(e);
  CHECK(r.kind == RdmaRecordKind::connect);
  CHECK(r.netns_ino == 4026531840u);
  CHECK(r.cgroup_id == 4242);
  CHECK(r.pid == 310);
  CHECK(r.qpn == 0x11);
  CHECK(r.peer_qpn == 0x22);
  CHECK(r.peer_gid[0] == 0xa0);
  CHECK(r.peer_gid[15] == 0xaf);
  REQUIRE(r.local_gid);
  CHECK((*r.local_gid)[0] == 0xb0);
  CHECK((*r.local_gid)[15] == 0xbf);
  CHECK(r.tracked);
  CHECK(r.capture_ns == 123'456'789'000);
  CHECK(r.bytes == 0);  // a connection moves no message
  CHECK(r.ordinal == 0);

  e.opcode = 0;
  e.local_gid_known = 0;
  const RdmaRecord untracked = decode_rdma(e);
  CHECK_FALSE(untracked.tracked);
  CHECK_FALSE(untracked.local_gid);  // the bytes are there, but the capture did not resolve them
}

TEST_CASE("SEND and RECV records are halves with their ordinal and bytes, and no connection") {
  for (auto [kind, expected] :
       {std::pair{SKEWSCOPE_RDMA_SEND, RdmaRecordKind::send}, std::pair{SKEWSCOPE_RDMA_RECV, RdmaRecordKind::recv}}) {
    const RdmaRecord r = decode_rdma(record(static_cast<std::uint8_t>(kind)));
    CHECK(r.kind == expected);
    CHECK(r.ordinal == 9);
    CHECK(r.bytes == 4096);
    CHECK(r.capture_ns == 123'456'789'000);
    CHECK(r.qpn == 0x11);
    CHECK(r.peer_qpn == 0);
    CHECK_FALSE(r.local_gid);
  }
}

TEST_CASE("QP_CREATED, the capture's discovery records and unknown kinds are told apart") {
  CHECK(decode_rdma(record(SKEWSCOPE_RDMA_QP_CREATED)).kind == RdmaRecordKind::qp_created);
  CHECK(decode_rdma(record(SKEWSCOPE_RDMA_CONTEXT)).kind == RdmaRecordKind::discovery);
  CHECK(decode_rdma(record(SKEWSCOPE_RDMA_CQ_EX)).kind == RdmaRecordKind::other);
  CHECK(decode_rdma(record(SKEWSCOPE_RDMA_CLOCK_SAMPLE)).kind == RdmaRecordKind::other);
  CHECK(decode_rdma(record(0)).kind == RdmaRecordKind::other);
  CHECK(decode_rdma(record(200)).kind == RdmaRecordKind::other);  // a newer kernel side's kind
}

TEST_CASE("a capture time past INT64_MAX is kept bit for bit (it is a connection's generation)") {
  skewscope_rdma_event e = record(SKEWSCOPE_RDMA_CONNECT);
  e.ts_ns = ~0ull;
  CHECK(static_cast<std::uint64_t>(decode_rdma(e).capture_ns) == ~0ull);
}
