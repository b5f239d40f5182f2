// The HTTP listening socket, opened by the agent itself (not by the server library) so that
// a port conflict or a bad address fails before anything is attached, with the real reason.
#pragma once

#include <string>

#include "skewscope/result.hpp"

namespace skewscope {

// Where the HTTP server listens (--listen): a name or a literal address without brackets, and
// the port (0: any free port). Here, beside the socket it opens, so that the run's plan holds it
// without knowing the flag's parser (cli/listen_address.hpp).
struct ListenAddress {
  std::string host;
  int port = 0;
};

struct ListenSocket {
  int fd = -1;    // listening, non-blocking, close-on-exec
  int port = -1;  // the bound port (the kernel's choice when 0 was asked)
};

// host is a name or a literal address without brackets ("0.0.0.0", "::1", "localhost").
// SO_REUSEADDR only: SO_REUSEPORT would let a second agent share the port and split the scrapes.
Result<ListenSocket> open_listen_socket(const std::string& host, int port);

}  // namespace skewscope
