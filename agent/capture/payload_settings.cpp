#include "capture/payload_settings.hpp"

#include <bpf/libbpf.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "skewscope/abi/payload_event.h"

namespace skewscope {

Result<PayloadPort> parse_payload_port(const std::string& text) {
  using Parsed = Result<PayloadPort>;
  PayloadPort out;
  const auto eq = text.find('=');
  if (eq == std::string::npos) return Parsed::fail("'" + text + "' must be kafka=PORT or zmtp=PORT");
  const std::string name = text.substr(0, eq);
  if (name == "kafka") {
    out.protocol = SKEWSCOPE_PROTO_KAFKA;
  } else if (name == "zmtp") {
    out.protocol = SKEWSCOPE_PROTO_ZMTP;
  } else {
    return Parsed::fail("'" + name + "' is not a protocol (kafka or zmtp)");
  }
  const char* begin = text.data() + eq + 1;
  const char* end = text.data() + text.size();
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || port == 0 || port > 65535)
    return Parsed::fail("'" + text.substr(eq + 1) + "' is not a port (1-65535)");
  out.port = static_cast<std::uint16_t>(port);
  return Parsed::ok(out);
}

Result<bool> parse_payload_detect(const std::string& text) {
  if (text == "auto") return Result<bool>::ok(true);
  if (text == "ports") return Result<bool>::ok(false);
  return Result<bool>::fail("'" + text + "' must be auto or ports");
}

Status fill_payload_ports(bpf_map* map, const PayloadSettings& settings) {
  for (const auto& p : settings.ports) {
    if (bpf_map__update_elem(map, &p.port, sizeof p.port, &p.protocol, sizeof p.protocol, 0) != 0)
      return Status::fail("filling the payload port table (port " + std::to_string(p.port) +
                          "): " + std::strerror(errno));
  }
  return Status::ok();
}

Result<std::uint32_t> parse_payload_ring_mb(std::uint32_t mib) {
  if (mib < 1 || mib > 256 || (mib & (mib - 1)) != 0)
    return Result<std::uint32_t>::fail(std::to_string(mib) + " must be a power of two from 1 to 256");
  return Result<std::uint32_t>::ok(mib << 20);
}

Status fill_payload_scope(bpf_map* map, const PayloadSettings& settings) {
  if (!settings.scoped) return Status::ok();
  if (settings.scope_cgroups.size() + settings.scope_netns.size() > SKEWSCOPE_PAYLOAD_MAX_SCOPE)
    return Status::fail("the payload capture can be scoped to at most " + std::to_string(SKEWSCOPE_PAYLOAD_MAX_SCOPE) +
                        " domains");
  auto put = [&](std::uint64_t id, std::uint32_t kind) {
    const skewscope_payload_scope_key key{id, kind, 0};
    const std::uint8_t in = 1;
    return bpf_map__update_elem(map, &key, sizeof key, &in, sizeof in, 0) == 0;
  };
  for (std::uint64_t cgroup : settings.scope_cgroups)
    if (!put(cgroup, SKEWSCOPE_SCOPE_CGROUP))
      return Status::fail("filling the payload scope (cgroup " + std::to_string(cgroup) + "): " + std::strerror(errno));
  for (std::uint32_t netns : settings.scope_netns)
    if (!put(netns, SKEWSCOPE_SCOPE_NETNS))
      return Status::fail("filling the payload scope (netns " + std::to_string(netns) + "): " + std::strerror(errno));
  return Status::ok();
}

}  // namespace skewscope
