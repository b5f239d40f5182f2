#include "cli/listen_address.hpp"

#include <charconv>

namespace skewscope {

Parsed<ListenAddress> parse_listen_address(std::string_view text) {
  const std::string original(text);
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return Parsed<ListenAddress>::fail("--listen '" + original + "' must be ADDR:PORT, e.g. 127.0.0.1:9477");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3)
      return Parsed<ListenAddress>::fail("--listen '" + original + "': unbalanced brackets around the IPv6 address");
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return Parsed<ListenAddress>::fail("--listen '" + original + "': port must be 0-65535");
  return Parsed<ListenAddress>::ok(ListenAddress{std::string(host), port});
}

}  // namespace skewscope
