// Ethernet frames for BPF_PROG_TEST_RUN, built byte by byte as they appear on a wire: IPv4 and
// IPv6 TCP segments (with or without payload, with an IPv6 extension header), other protocols,
// and frames cut short inside a header. Checksums are left zero: the tc programs never read them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace skewscope::bpf_fixtures {

using Bytes = std::vector<std::uint8_t>;
using Ipv4 = std::array<std::uint8_t, 4>;
using Ipv6 = std::array<std::uint8_t, 16>;

inline constexpr std::uint16_t kEthIpv4 = 0x0800;
inline constexpr std::uint16_t kEthIpv6 = 0x86dd;
inline constexpr std::uint16_t kEthArp = 0x0806;
inline constexpr std::uint8_t kProtoTcp = 6;
inline constexpr std::uint8_t kProtoUdp = 17;
inline constexpr std::uint8_t kIpv6HopByHop = 0;

inline constexpr std::uint8_t kTcpFin = 0x01;
inline constexpr std::uint8_t kTcpSyn = 0x02;
inline constexpr std::uint8_t kTcpPsh = 0x08;
inline constexpr std::uint8_t kTcpAck = 0x10;

struct Segment {
  std::uint16_t source_port = 0;
  std::uint16_t dest_port = 0;
  std::uint32_t seq = 0;
  std::uint32_t ack = 0;
  std::uint8_t flags = kTcpAck;
  std::size_t payload = 0;      // bytes of payload after the TCP header
  std::size_t tcp_options = 0;  // bytes of options (a multiple of 4), so the data offset grows
};

inline void put16(Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}

inline void put32(Bytes& b, std::uint32_t v) {
  put16(b, static_cast<std::uint16_t>(v >> 16));
  put16(b, static_cast<std::uint16_t>(v));
}

inline Bytes ethernet(std::uint16_t ethertype) {
  Bytes b = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};  // dst, src: locally administered
  put16(b, ethertype);
  return b;
}

inline Bytes tcp_bytes(const Segment& s) {
  Bytes b;
  put16(b, s.source_port);
  put16(b, s.dest_port);
  put32(b, s.seq);
  put32(b, s.ack);
  b.push_back(static_cast<std::uint8_t>(((20 + s.tcp_options) / 4) << 4));
  b.push_back(s.flags);
  put16(b, 65535);                      // window
  put16(b, 0);                          // checksum
  put16(b, 0);                          // urgent pointer
  b.insert(b.end(), s.tcp_options, 1);  // NOP options
  for (std::size_t i = 0; i < s.payload; ++i) b.push_back(static_cast<std::uint8_t>('a' + i % 26));
  return b;
}

inline Bytes ipv4_header(Ipv4 src, Ipv4 dst, std::uint8_t protocol, std::size_t l4_bytes) {
  Bytes b = {0x45, 0};
  put16(b, static_cast<std::uint16_t>(20 + l4_bytes));
  put16(b, 1);       // id
  put16(b, 0x4000);  // don't fragment
  b.push_back(64);
  b.push_back(protocol);
  put16(b, 0);
  b.insert(b.end(), src.begin(), src.end());
  b.insert(b.end(), dst.begin(), dst.end());
  return b;
}

inline Bytes ipv4_tcp(Ipv4 src, Ipv4 dst, const Segment& s) {
  Bytes frame = ethernet(kEthIpv4);
  Bytes tcp = tcp_bytes(s);
  Bytes ip = ipv4_header(src, dst, kProtoTcp, tcp.size());
  frame.insert(frame.end(), ip.begin(), ip.end());
  frame.insert(frame.end(), tcp.begin(), tcp.end());
  return frame;
}

inline Bytes ipv4_udp(Ipv4 src, Ipv4 dst, std::size_t payload) {
  Bytes frame = ethernet(kEthIpv4);
  Bytes ip = ipv4_header(src, dst, kProtoUdp, 8 + payload);
  frame.insert(frame.end(), ip.begin(), ip.end());
  put16(frame, 5353);
  put16(frame, 5353);
  put16(frame, static_cast<std::uint16_t>(8 + payload));
  put16(frame, 0);
  frame.insert(frame.end(), payload, 0x55);
  return frame;
}

// An IPv6 TCP segment, behind one hop-by-hop options header (8 bytes: PadN) when asked.
inline Bytes ipv6_tcp(Ipv6 src, Ipv6 dst, const Segment& s, bool hop_by_hop = false) {
  Bytes frame = ethernet(kEthIpv6);
  Bytes tcp = tcp_bytes(s);
  const std::size_t extension = hop_by_hop ? 8 : 0;
  put32(frame, 0x60000000);
  put16(frame, static_cast<std::uint16_t>(extension + tcp.size()));
  frame.push_back(hop_by_hop ? kIpv6HopByHop : kProtoTcp);
  frame.push_back(64);
  frame.insert(frame.end(), src.begin(), src.end());
  frame.insert(frame.end(), dst.begin(), dst.end());
  if (hop_by_hop) frame.insert(frame.end(), {kProtoTcp, 0, 1, 4, 0, 0, 0, 0});  // next, len 0, PadN(4)
  frame.insert(frame.end(), tcp.begin(), tcp.end());
  return frame;
}

// The first `bytes` bytes of a frame: a header cut short as a broken sender or a snap length would.
inline Bytes cut(Bytes frame, std::size_t bytes) {
  frame.resize(bytes);
  return frame;
}

}  // namespace skewscope::bpf_fixtures
