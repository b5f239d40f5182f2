#include "cli/listen_address.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace skewscope {

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const std::string original(text);
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return Result<ListenAddress>::fail("--listen '" + original + "' must be ADDR:PORT, e.g. 127.0.0.1:9477");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3)
      return Result<ListenAddress>::fail("--listen '" + original + "': unbalanced brackets around the IPv6 address");
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return Result<ListenAddress>::fail("--listen '" + original + "': port must be 0-65535");
  return Result<ListenAddress>::ok(ListenAddress{std::string(host), port});
}

Status resolve_listen_address(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
  if (rc == 0) {
    freeaddrinfo(found);
    return Status::ok();
  }
  // EAI_SYSTEM leaves the reason in errno; every other code has its own text.
  const std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc);
  return Status::fail("--listen: cannot resolve '" + address.host + "': " + why);
}

}  // namespace skewscope
