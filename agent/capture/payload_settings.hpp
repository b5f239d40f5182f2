// What the payload capture copies and from which sockets (flags --payload-bytes, --payload-port,
// --payload-detect); parsed here, applied to the BPF object before it is attached.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "skewscope/result.hpp"

struct bpf_map;

namespace skewscope {

struct PayloadPort {
  std::uint16_t port = 0;
  std::uint8_t protocol = 0;  // enum skewscope_payload_protocol: KAFKA or ZMTP
};

struct PayloadSettings {
  std::uint32_t max_bytes = 0;     // bytes copied per call; 0: payload capture off
  bool detect = true;              // classify sockets from their first bytes (else ports only)
  std::vector<PayloadPort> ports;  // sockets with this local or remote port are that protocol
  // --only-domains: only calls inside a declared domain (these cgroup ids, these network
  // namespace inodes: what the agent's domain registry matches) are classified and copied; the
  // agent would drop every other record. Unscoped otherwise: everything is the host's domain.
  bool scoped = false;
  std::uint32_t ring_bytes = 8u << 20;  // the payload ring buffer (--payload-ring-mb)
  std::vector<std::uint64_t> scope_cgroups;
  std::vector<std::uint32_t> scope_netns;
};

// "kafka=9092" / "zmtp=5555" -> port.
Result<PayloadPort> parse_payload_port(const std::string& text);
// "auto" (true: detect by content) or "ports" (false).
Result<bool> parse_payload_detect(const std::string& text);
// --payload-ring-mb -> bytes: a power of two from 1 to 256 MiB (a ring buffer is a power-of-two
// number of pages).
Result<std::uint32_t> parse_payload_ring_mb(std::uint32_t mib);
// Writes the operator-named ports into the loaded object's payload_ports map.
Status fill_payload_ports(bpf_map* map, const PayloadSettings& settings);
// Writes the scope (scoped settings) into the loaded object's payload_scope map.
Status fill_payload_scope(bpf_map* map, const PayloadSettings& settings);

}  // namespace skewscope
