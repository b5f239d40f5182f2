// The tc wire programs (bpf/wire_tc.bpf.c, bpf/wire_tc_ctx.bpf.c) run by the kernel on packet
// fixtures with BPF_PROG_TEST_RUN: no interface, namespace or traffic. Each program is loaded by
// the agent's own loader (WirePrograms) and never attached; a frame goes through the real program,
// its verdict and bytes out are checked (always TC_ACT_OK, unchanged), then the records it put in
// its ring buffer are read with the ABI header and decoded by capture/'s decoder, and its counters
// (a slice per CPU) are read as the agent reads them.
//
// Needs root (loading BPF) and a kernel that test-runs tc programs: otherwise the binary says why
// and exits 77, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "capture/counter_slices.hpp"
#include "capture/features.hpp"
#include "capture/wire_decode.hpp"
#include "capture/wire_programs.hpp"
#include "packet_fixtures.hpp"
#include "skewscope/abi/wire_event.h"

namespace skewscope {
namespace {

using namespace bpf_fixtures;

constexpr int kTcActOk = 0;
constexpr int kSkipped = 77;                   // CTest's SKIP_RETURN_CODE for this test
constexpr std::uint32_t kLoopbackIfindex = 1;  // test runs see the packet on the namespace's lo
constexpr int kKernelNotSupported = 524;       // the kernel's ENOTSUPP, not in the C library's errno.h

// The variants this kernel loads and test-runs (features.hpp's names), filled by main().
std::vector<std::string> g_variants;

std::uint32_t own_netns_inode() {
  struct stat st {};
  return ::stat("/proc/self/ns/net", &st) == 0 ? static_cast<std::uint32_t>(st.st_ino) : 0;
}

Status load(WirePrograms& programs, const std::string& variant, bool egress_data, bool ack_samples) {
  WireProgramSettings settings;
  settings.egress_data = egress_data;
  settings.ack_samples = ack_samples;
  settings.netns_inodes[""] = own_netns_inode();
  return programs.load_tc(variant, settings);
}

struct Run {
  int error = 0;  // errno of the test run, 0 when it ran
  int verdict = -1;
  Bytes out;
};

// One frame through one program, as tc would hand it over (with the context fields a device
// would set: its receive stamps).
Run test_run(int prog_fd, const Bytes& frame, std::uint64_t tstamp = 0, std::uint64_t hwtstamp = 0) {
  Run run;
  run.out.assign(frame.size() + 256, 0);
  __sk_buff ctx{};
  ctx.tstamp = tstamp;
  ctx.hwtstamp = hwtstamp;
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = run.out.data(),
              .data_size_in = static_cast<__u32>(frame.size()), .data_size_out = static_cast<__u32>(run.out.size()),
              .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
  if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) {
    run.error = errno;
    return run;
  }
  run.verdict = static_cast<int>(opts.retval);
  run.out.resize(opts.data_size_out);
  return run;
}

// Every record in the ring buffer, as the agent's reader sees it.
std::vector<skewscope_wire_event> drain(int ring_fd) {
  std::vector<skewscope_wire_event> records;
  auto on_record = [](void* ctx, void* data, size_t size) -> int {
    auto* into = static_cast<std::vector<skewscope_wire_event>*>(ctx);
    if (size < sizeof(skewscope_wire_event)) return -EINVAL;
    skewscope_wire_event e;
    std::memcpy(&e, data, sizeof(e));
    into->push_back(e);
    return 0;
  };
  ring_buffer* ring = ring_buffer__new(ring_fd, on_record, &records, nullptr);
  REQUIRE_MESSAGE(ring != nullptr, "ring_buffer__new: " << std::string(std::strerror(errno)));
  const int consumed = ring_buffer__consume(ring);
  ring_buffer__free(ring);
  REQUIRE_MESSAGE(consumed >= 0, "ring_buffer__consume: " << std::string(std::strerror(-consumed)));
  return records;
}

std::map<int, std::uint64_t> counters(int counters_fd) {
  auto slices = CounterSlices::map(counters_fd, SKEWSCOPE_WIRE_CNT__COUNT);
  REQUIRE_MESSAGE(slices, slices.error);
  const std::vector<std::uint64_t> read = slices->sums();
  std::map<int, std::uint64_t> sums;
  for (std::size_t key = 0; key < read.size(); ++key) sums[static_cast<int>(key)] = read[key];
  return sums;
}

// A frame through the program: it must pass unchanged; the records it emitted are returned.
std::vector<skewscope_wire_event> pass(const WirePrograms& programs, int prog_fd, const Bytes& frame,
                                       std::uint64_t tstamp = 0, std::uint64_t hwtstamp = 0) {
  const Run run = test_run(prog_fd, frame, tstamp, hwtstamp);
  REQUIRE_MESSAGE(run.error == 0, "BPF_PROG_TEST_RUN: " << std::string(std::strerror(run.error)));
  CHECK(run.verdict == kTcActOk);
  CHECK(run.out == frame);
  return drain(programs.ring_fd());
}

Address mapped_v4(Ipv4 a) {
  Address out{};
  out[10] = out[11] = 0xff;
  std::memcpy(out.data() + 12, a.data(), 4);
  return out;
}

Address v6(Ipv6 a) {
  Address out{};
  std::memcpy(out.data(), a.data(), 16);
  return out;
}

const Ipv4 kClient4 = {10, 77, 0, 1};
const Ipv4 kServer4 = {10, 77, 0, 2};
const Ipv6 kClient6 = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
const Ipv6 kServer6 = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

// The client's data segment: 40000 -> 9092, seq 1000, with `payload` bytes.
Segment data_segment(std::size_t payload) {
  Segment s;
  s.source_port = 40000;
  s.dest_port = 9092;
  s.seq = 1000;
  s.ack = 5000;
  s.flags = kTcpAck | kTcpPsh;
  s.payload = payload;
  return s;
}

void check_common(const WireHalf& w) {
  CHECK(w.netns_ino == own_netns_inode());
  CHECK(w.ifindex == kLoopbackIfindex);
  CHECK(w.half.capture_ns > 0);
  CHECK_FALSE(w.hardware_only);
}

void for_each_variant(void (*body)(const std::string& variant)) {
  for (const auto& variant : g_variants) {
    CAPTURE(variant);
    body(variant);
  }
}

TEST_CASE("an IPv4 data segment at ingress is one receive half with the kernel's stamps") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE_MESSAGE(load(programs, variant, true, false), "load " << variant);
    const std::uint64_t rx_realtime = 1'790'000'000'123'456'789ull, nic = 555'000'000'001ull;
    auto records =
        pass(programs, programs.ingress_fd(""), ipv4_tcp(kClient4, kServer4, data_segment(100)), rx_realtime, nic);
    REQUIRE(records.size() == 1);
    CHECK(records[0].direction == SKEWSCOPE_WIRE_INGRESS);
    CHECK(records[0].origin == SKEWSCOPE_WIRE_FROM_TC);
    CHECK(records[0].cgroup_id == 0);
    const WireDecoded decoded = decode_wire(records[0]);
    REQUIRE(decoded);
    const WireHalf& w = *decoded;
    check_common(w);
    CHECK(w.half.kind == HalfKind::recv);
    CHECK(w.half.flow.src_addr == mapped_v4(kClient4));  // directed client -> server, as the send
    CHECK(w.half.flow.dst_addr == mapped_v4(kServer4));
    CHECK(w.half.flow.src_port == 40000);
    CHECK(w.half.flow.dst_port == 9092);
    CHECK(w.half.seq == 1000);
    CHECK(w.half.bytes == 100);
    REQUIRE(w.skb_realtime_ns);
    CHECK(*w.skb_realtime_ns == static_cast<std::int64_t>(rx_realtime));
    REQUIRE(w.hardware_ns);
    CHECK(*w.hardware_ns == static_cast<std::int64_t>(nic));
    CHECK_FALSE(w.ack_sample);
    const auto count = counters(programs.counters_fd());
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_EMITTED) == 1);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED) == 1);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED) == 0);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_HW_STAMPED) == 1);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_NOT_PARSED) == 0);
  });
}

TEST_CASE("an IPv4 data segment at egress is one send half, with no receive stamp") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE(load(programs, variant, true, false));
    Segment s = data_segment(1448);
    s.tcp_options = 12;  // timestamps option, as Linux sends it: the payload starts later
    auto records =
        pass(programs, programs.egress_fd(""), ipv4_tcp(kClient4, kServer4, s), 1'790'000'000'000'000'000ull);
    REQUIRE(records.size() == 1);
    CHECK(records[0].direction == SKEWSCOPE_WIRE_EGRESS);
    const WireDecoded decoded = decode_wire(records[0]);
    REQUIRE(decoded);
    const WireHalf& w = *decoded;
    check_common(w);
    CHECK(w.half.kind == HalfKind::send);
    CHECK(w.half.flow.src_addr == mapped_v4(kClient4));
    CHECK(w.half.flow.dst_addr == mapped_v4(kServer4));
    CHECK(w.half.flow.src_port == 40000);
    CHECK(w.half.flow.dst_port == 9092);
    CHECK(w.half.bytes == 1448);
    CHECK_FALSE(w.skb_realtime_ns);  // a departure, not a receive: the stamp is not read
    CHECK_FALSE(w.hardware_ns);
    const auto count = counters(programs.counters_fd());
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_EMITTED) == 1);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED) == 0);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED) == 0);
  });
}

TEST_CASE("an ingress segment without the kernel's receive stamp is counted as unstamped") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE(load(programs, variant, true, false));
    auto records = pass(programs, programs.ingress_fd(""), ipv4_tcp(kServer4, kClient4, data_segment(7)));
    REQUIRE(records.size() == 1);
    const WireDecoded decoded = decode_wire(records[0]);
    REQUIRE(decoded);
    CHECK_FALSE(decoded->skb_realtime_ns);
    CHECK(decoded->half.bytes == 7);
    const auto count = counters(programs.counters_fd());
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED) == 1);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED) == 0);
  });
}

TEST_CASE("IPv6 data segments, also behind a hop-by-hop header, are halves with their addresses") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE(load(programs, variant, true, false));
    for (bool hop_by_hop : {false, true}) {
      CAPTURE(hop_by_hop);
      Segment s = data_segment(512);
      s.seq = 0xfffffff0u;  // near the wrap: the sequence number is carried as it is
      auto records = pass(programs, programs.ingress_fd(""), ipv6_tcp(kClient6, kServer6, s, hop_by_hop));
      REQUIRE(records.size() == 1);
      const WireDecoded decoded = decode_wire(records[0]);
      REQUIRE(decoded);
      const WireHalf& w = *decoded;
      check_common(w);
      CHECK(w.half.kind == HalfKind::recv);
      CHECK(w.half.flow.src_addr == v6(kClient6));
      CHECK(w.half.flow.dst_addr == v6(kServer6));
      CHECK(w.half.seq == 0xfffffff0u);
      CHECK(w.half.bytes == 512);
    }
    CHECK(counters(programs.counters_fd()).at(SKEWSCOPE_WIRE_CNT_EMITTED) == 2);
  });
}

TEST_CASE("segments without payload are no half, unless pure ACKs are samples") {
  for_each_variant([](const std::string& variant) {
    Segment ack = data_segment(0);
    ack.flags = kTcpAck;
    ack.ack = 123456;
    Segment syn = data_segment(0);
    syn.flags = kTcpSyn;
    Segment fin = data_segment(0);
    fin.flags = kTcpFin | kTcpAck;
    {
      WirePrograms programs;
      REQUIRE(load(programs, variant, true, false));
      for (const Segment& s : {ack, syn, fin}) {
        CHECK(pass(programs, programs.ingress_fd(""), ipv4_tcp(kServer4, kClient4, s)).empty());
        CHECK(pass(programs, programs.egress_fd(""), ipv6_tcp(kClient6, kServer6, s)).empty());
      }
      CHECK(counters(programs.counters_fd()).at(SKEWSCOPE_WIRE_CNT_EMITTED) == 0);
    }
    WirePrograms programs;
    REQUIRE(load(programs, variant, true, true));
    CHECK(pass(programs, programs.ingress_fd(""), ipv4_tcp(kServer4, kClient4, syn)).empty());
    CHECK(pass(programs, programs.ingress_fd(""), ipv4_tcp(kServer4, kClient4, fin)).empty());
    auto records = pass(programs, programs.egress_fd(""), ipv4_tcp(kServer4, kClient4, ack));
    REQUIRE(records.size() == 1);
    const WireDecoded decoded = decode_wire(records[0]);
    REQUIRE(decoded);
    CHECK(decoded->ack_sample);
    CHECK(decoded->half.kind == HalfKind::send);
    CHECK(decoded->half.seq == 123456);  // keyed by the acknowledgement number
    CHECK(decoded->half.bytes == 1);
    CHECK(decoded->half.flow.src_addr == mapped_v4(kServer4));
  });
}

TEST_CASE("with the sock_ops send side, data at egress is no half while ingress still is") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE(load(programs, variant, false, false));
    const Bytes frame = ipv4_tcp(kClient4, kServer4, data_segment(64));
    CHECK(pass(programs, programs.egress_fd(""), frame).empty());
    CHECK(pass(programs, programs.ingress_fd(""), frame).size() == 1);
  });
}

TEST_CASE("other protocols pass without a half or a count") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE(load(programs, variant, true, false));
    Bytes arp = ethernet(kEthArp);
    arp.insert(arp.end(), 28, 0);
    Bytes fragment = ipv4_tcp(kClient4, kServer4, data_segment(32));
    fragment[14 + 6] = 0x20;  // more fragments
    for (const Bytes& frame : {ipv4_udp(kClient4, kServer4, 64), arp, fragment}) {
      CHECK(pass(programs, programs.ingress_fd(""), frame).empty());
      CHECK(pass(programs, programs.egress_fd(""), frame).empty());
    }
    const auto count = counters(programs.counters_fd());
    for (const auto& [counter, value] : count) {
      CAPTURE(counter);
      CHECK(value == 0);
    }
  });
}

TEST_CASE("headers cut short pass unchanged and are counted as not parsed") {
  for_each_variant([](const std::string& variant) {
    WirePrograms programs;
    REQUIRE(load(programs, variant, true, false));
    const Bytes v4 = ipv4_tcp(kClient4, kServer4, data_segment(100));
    const Bytes v6 = ipv6_tcp(kClient6, kServer6, data_segment(100), true);
    // Cut inside the TCP header or the IPv6 extension header: the program must find out itself.
    const std::vector<Bytes> frames = {
        cut(v4, 14 + 20 + 12),      // inside the TCP header
        cut(v6, 14 + 40 + 1),       // inside the extension header
        cut(v6, 14 + 40 + 8 + 10),  // inside the TCP header behind it
    };
    for (const Bytes& frame : frames) {
      CAPTURE(frame.size());
      CHECK(pass(programs, programs.ingress_fd(""), frame).empty());
    }
    // Cut inside the IP header itself: this kernel's test run may refuse such a frame before any
    // program sees it (EINVAL, it reads the addresses for its socket); when it does run one, the
    // program must count it like the others.
    std::size_t ran = frames.size();
    for (const Bytes& frame : {cut(v4, 14 + 10), cut(v6, 14 + 30)}) {
      CAPTURE(frame.size());
      const Run run = test_run(programs.ingress_fd(""), frame);
      if (run.error == EINVAL) continue;
      REQUIRE_MESSAGE(run.error == 0, "BPF_PROG_TEST_RUN: " << std::string(std::strerror(run.error)));
      CHECK(run.verdict == kTcActOk);
      CHECK(run.out == frame);
      CHECK(drain(programs.ring_fd()).empty());
      ++ran;
    }
    const auto count = counters(programs.counters_fd());
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_NOT_PARSED) == ran);
    CHECK(count.at(SKEWSCOPE_WIRE_CNT_EMITTED) == 0);
  });
}

// Whether `variant` loads here and the kernel test-runs its program; the reason when not.
Status usable(const std::string& variant) {
  WirePrograms programs;
  if (Status loaded = load(programs, variant, true, false); !loaded) return loaded;
  Bytes frame = ethernet(kEthArp);
  frame.insert(frame.end(), 28, 0);
  const Run run = test_run(programs.ingress_fd(""), frame);
  if (run.error != 0) {
    return Status::fail(
        "BPF_PROG_TEST_RUN of a tc program: " + std::string(std::strerror(run.error)) +
        (run.error == kKernelNotSupported || run.error == EOPNOTSUPP ? " (not supported by this kernel)" : ""));
  }
  return Status::ok();
}

}  // namespace
}  // namespace skewscope

int main(int argc, char** argv) {
  using namespace skewscope;
  if (::geteuid() != 0) {
    std::cout << "SKIP: loading BPF programs needs root\n";
    return kSkipped;
  }
  for (const char* variant : {kWireVariantKernCtx, kWireVariantCtx}) {
    if (Status ok = usable(variant)) {
      g_variants.emplace_back(variant);
    } else {
      std::cout << "variant " << variant << " not tested: " << ok.error << "\n";
    }
  }
  if (g_variants.empty()) {
    std::cout << "SKIP: no tc wire variant loads and test-runs on this kernel\n";
    return kSkipped;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
