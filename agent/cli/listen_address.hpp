// ADDR:PORT for --listen, and the agent URL for the client commands.
#pragma once

#include <string>
#include <string_view>

#include "api/listen_socket.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// "0.0.0.0:9477", "127.0.0.1:0", "[::1]:9477"
Result<ListenAddress> parse_listen_address(std::string_view text);

// Resolves the host part as a listening TCP server does (getaddrinfo, passive). When it does
// not resolve, an error naming the resolver's reason (gai_strerror, e.g. "Name or service
// not known"), so that a bad --listen is reported clearly before any server starts.
Status resolve_listen_address(const ListenAddress& address);

}  // namespace skewscope
