// How the client commands (status, top, whatif) reach an agent's HTTP API: one path from the
// connection flags and the agent URL to a configured client, so that TLS trust, client
// certificates and basic-auth credentials work the same for every command (docs/contract.md,
// "Reaching a secured agent").
#pragma once

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "skewscope/result.hpp"

namespace CLI {
class App;
}
namespace httplib {
class Client;
}

namespace skewscope {

// The connection flags as given; checked only when a client is made from them.
struct AgentConnectionOptions {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string basic_auth_user;
  std::string basic_auth_password_file;
  std::string tenant;  // --tenant: every request asks for this tenant's view (docs/tenants.md)
};

void add_agent_connection_options(CLI::App& command, AgentConnectionOptions& options);

// An agent URL with its userinfo taken out: `url` is what messages may show (never the password).
struct AgentUrl {
  std::string url;
  std::optional<std::string> user;
  std::optional<std::string> password;
};

// Splits [scheme://][user:password@]host[:port] (no scheme: http) and percent-decodes the user and
// password; a bad escape, a user without a password, or a scheme other than http/https is an error.
Result<AgentUrl> split_agent_url(const std::string& url);

// Which step failed, so each command can say it and pick its exit code.
enum class AgentFailure { unreachable, tls, auth, http };

struct AgentError {
  AgentFailure kind = AgentFailure::unreachable;
  std::string message;  // names the agent by its URL without userinfo
  int http_status = 0;  // for auth and http
  std::string body;     // for http: what the agent said
};

using EnvironmentLookup = std::function<const char*(const char*)>;

class AgentClient {
 public:
  // Checks the flags against the URL (files readable, credentials given once and completely, the
  // password file not open to other users) and builds the client; an error is a usage error.
  // Without --ca-file the CA comes from SSL_CERT_FILE / SSL_CERT_DIR, else the system's store.
  static Result<std::unique_ptr<AgentClient>> create(const std::string& url, const AgentConnectionOptions& options,
                                                     const EnvironmentLookup& environment = ::getenv);
  ~AgentClient();
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  const std::string& url() const { return url_; }
  // GET path?params; the body of a 200 answer, or which step failed.
  Result<std::string, AgentError> get(const std::string& path, const std::multimap<std::string, std::string>& params,
                                      int read_timeout_seconds);

 private:
  AgentClient(std::string url, std::unique_ptr<httplib::Client> client, std::string trust, bool sends_credentials);
  AgentError failure_without_answer(int error) const;

  std::string url_;
  std::unique_ptr<httplib::Client> client_;
  std::string trust_;  // where the trusted CAs came from, for a failed verification's message
  bool sends_credentials_;
  std::string tenant_;  // empty: the view the user is given
};

}  // namespace skewscope
