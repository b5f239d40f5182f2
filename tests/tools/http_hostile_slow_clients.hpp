// http_hostile's slow clients: the many connections that hold the agent's HTTP server busy while
// /metrics is measured. They are one poll loop with its own reconnect rules, used both by the
// full run and by --hold-seconds, so they live apart from the driver.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace http_hostile {

// The slow clients, driven by one poll loop. Kinds, round robin: idle (sends nothing), partial
// (half a request, then nothing), trickle (one byte per second of a header line that never ends),
// slow reader (a whole request, never reads the reply). Whoever the server cuts reconnects at once,
// so the load stays at N connections for as long as it runs.
class SlowClients {
 public:
  enum Kind { idle, partial, trickle, slow_reader, kinds };

  // Sources are 127.0.1.1..127.0.1.`sources`, round robin.
  SlowClients(const sockaddr_in& target, int count, int sources);
  ~SlowClients();
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;

  std::atomic<int> connected{0};
  std::uint64_t cut_by_server = 0, connect_failures = 0;

  // Opens every client, then keeps them connected until `stop`.
  void run(const std::atomic<bool>& stop);

 private:
  struct Client {
    int fd;
    Kind kind;
    std::string source;
    bool connected;
    int failures;
  };

  void open(Client& c);
  void handle(Client& c, short revents);
  void reopen(Client& c, bool by_server);

  sockaddr_in target_;
  std::vector<Client> clients_;
};

}  // namespace http_hostile
