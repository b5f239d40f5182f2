#include "client/agent_client.hpp"

#include <httplib.h>
#include <netdb.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include <cctype>
#include <fstream>
#include <sstream>

namespace skewscope {
namespace {

Result<std::string> percent_decode(const std::string& text, const char* what) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      return Result<std::string>::fail(std::string("bad percent escape in the URL's ") + what);
    }
    out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return Result<std::string>::ok(out);
}

Result<std::string> read_file(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<std::string>::fail(flag + ": cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Result<std::string>::fail(flag + ": cannot read '" + path + "'");
  return Result<std::string>::ok(text.str());
}

// The file is checked here so that a wrong path or a DER file is a usage error naming the flag;
// OpenSSL parses it when the client connects.
Status check_pem(const std::string& path, const std::string& flag) {
  auto text = read_file(path, flag);
  if (!text) return Status::fail(text.error);
  if (text->find("-----BEGIN ") == std::string::npos) return Status::fail(flag + ": '" + path + "' holds no PEM block");
  return Status::ok();
}

// The password is the file's first line. A file other users may read or write is refused, like
// ssh refuses such a key: a password there is no longer a secret, and it would be used silently.
Result<std::string> read_password_file(const std::string& path) {
  const std::string flag = "--basic-auth-password-file";
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Result<std::string>::fail(flag + ": cannot read '" + path + "'");
  if (st.st_mode & (S_IROTH | S_IWOTH))
    return Result<std::string>::fail(flag + ": '" + path +
                                     "' is readable or writable by other users; chmod o-rw it (0600 or 0640)");
  auto text = read_file(path, flag);
  if (!text) return Result<std::string>::fail(text.error);
  std::string password = text->substr(0, text->find('\n'));
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) return Result<std::string>::fail(flag + ": '" + path + "' has an empty first line");
  return Result<std::string>::ok(password);
}

struct Credentials {
  std::string user;
  std::string password;
};

Result<std::optional<Credentials>> choose_credentials(const AgentUrl& url, const AgentConnectionOptions& options) {
  using R = Result<std::optional<Credentials>>;
  const bool from_flags = !options.basic_auth_user.empty() || !options.basic_auth_password_file.empty();
  if (url.user && from_flags)
    return R::fail("credentials given twice: in the URL and with --basic-auth-user/--basic-auth-password-file");
  if (url.user) return R::ok(Credentials{*url.user, *url.password});
  if (!from_flags) return R::ok(std::nullopt);
  if (options.basic_auth_user.empty()) return R::fail("--basic-auth-password-file needs --basic-auth-user");
  if (options.basic_auth_password_file.empty())
    return R::fail(
        "--basic-auth-user needs --basic-auth-password-file (a password is never taken on the command line)");
  auto password = read_password_file(options.basic_auth_password_file);
  if (!password) return R::fail(password.error);
  return R::ok(Credentials{options.basic_auth_user, *password});
}

// Where the client's trusted CAs come from: the flag, else the variables OpenSSL documents, else
// the system's default store (an empty file and directory).
struct TrustSource {
  std::string file;
  std::string dir;
  std::string described = "the system's CA store";  // for a failed verification's message
};

Result<TrustSource> choose_trust(const AgentConnectionOptions& options, const EnvironmentLookup& environment) {
  if (!options.ca_file.empty()) {
    if (auto pem = check_pem(options.ca_file, "--ca-file"); !pem) return Result<TrustSource>::fail(pem.error);
    return Result<TrustSource>::ok({options.ca_file, {}, "--ca-file " + options.ca_file});
  }
  TrustSource trust;
  if (const char* file = environment("SSL_CERT_FILE"); file && *file) {
    if (auto pem = check_pem(file, "SSL_CERT_FILE"); !pem) return Result<TrustSource>::fail(pem.error);
    trust.file = file;
    trust.described = std::string("SSL_CERT_FILE ") + file;
  }
  if (const char* dir = environment("SSL_CERT_DIR"); dir && *dir) {
    struct stat st {};
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
      return Result<TrustSource>::fail(std::string("SSL_CERT_DIR: '") + dir + "' is not a directory");
    trust.dir = dir;
    trust.described =
        trust.file.empty() ? std::string("SSL_CERT_DIR ") + dir : trust.described + " and SSL_CERT_DIR " + dir;
  }
  return Result<TrustSource>::ok(trust);
}

std::string host_of(const std::string& url) {
  std::string rest = url.substr(url.find("://") + 3);
  if (!rest.empty() && rest.front() == '[') return rest.substr(1, rest.find(']') - 1);
  return rest.substr(0, rest.find_first_of(":/"));
}

AgentError no_answer(AgentFailure kind, std::string message) {
  AgentError error;
  error.kind = kind;
  error.message = std::move(message);
  return error;
}

}  // namespace

void add_agent_connection_options(CLI::App& command, AgentConnectionOptions& options) {
  command.add_option("--ca-file", options.ca_file, "CA certificates (PEM) that sign an https agent's certificate")
      ->check(CLI::ExistingFile);
  command.add_option("--cert", options.cert_file, "client certificate (PEM) for an agent that asks for one")
      ->check(CLI::ExistingFile);
  command.add_option("--key", options.key_file, "private key (PEM) of --cert")->check(CLI::ExistingFile);
  command.add_option("--basic-auth-user", options.basic_auth_user, "basic-auth user (or https://USER:PASS@HOST:PORT)");
  command.add_option("--basic-auth-password-file", options.basic_auth_password_file,
                     "file whose first line is the basic-auth password (not readable by other users)");
  command.add_option("--tenant", options.tenant,
                     "only this tenant's pairs and hosts (?tenant=NAME; a tenant's user gets its own without it)");
}

Result<AgentUrl> split_agent_url(const std::string& given) {
  // Without a scheme the URL is http, as the client library has always read it.
  const std::string url = given.find("://") == std::string::npos ? "http://" + given : given;
  const auto scheme_end = url.find("://");
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return Result<AgentUrl>::fail("agent URL scheme '" + scheme + "' is neither http nor https");
  const auto authority_begin = scheme_end + 3;
  const auto authority_end = url.find_first_of("/?#", authority_begin);
  const std::string authority = url.substr(authority_begin, authority_end - authority_begin);
  const auto at = authority.rfind('@');
  AgentUrl out;
  out.url = scheme + "://" + (at == std::string::npos ? authority : authority.substr(at + 1)) +
            (authority_end == std::string::npos ? "" : url.substr(authority_end));
  if (at == std::string::npos) return Result<AgentUrl>::ok(out);
  const std::string userinfo = authority.substr(0, at);
  const auto colon = userinfo.find(':');
  if (colon == std::string::npos)
    return Result<AgentUrl>::fail("agent URL " + out.url + " names a user but no password (USER:PASSWORD@)");
  auto user = percent_decode(userinfo.substr(0, colon), "user");
  if (!user) return Result<AgentUrl>::fail(user.error + " (" + out.url + ")");
  auto password = percent_decode(userinfo.substr(colon + 1), "password");
  if (!password) return Result<AgentUrl>::fail(password.error + " (" + out.url + ")");
  if (user->empty()) return Result<AgentUrl>::fail("agent URL " + out.url + " has an empty user name");
  out.user = *user;
  out.password = *password;
  return Result<AgentUrl>::ok(out);
}

Result<std::unique_ptr<AgentClient>> AgentClient::create(const std::string& url, const AgentConnectionOptions& options,
                                                         const EnvironmentLookup& environment) {
  using R = Result<std::unique_ptr<AgentClient>>;
  auto split = split_agent_url(url);
  if (!split) return R::fail(split.error);
  auto credentials = choose_credentials(*split, options);
  if (!credentials) return R::fail(credentials.error);
  if (options.cert_file.empty() != options.key_file.empty()) return R::fail("--cert and --key go together");
  if (!options.cert_file.empty()) {
    if (auto pem = check_pem(options.cert_file, "--cert"); !pem) return R::fail(pem.error);
    if (auto pem = check_pem(options.key_file, "--key"); !pem) return R::fail(pem.error);
  }
  auto trust = choose_trust(options, environment);
  if (!trust) return R::fail(trust.error);

  auto client = options.cert_file.empty()
                    ? std::make_unique<httplib::Client>(split->url)
                    : std::make_unique<httplib::Client>(split->url, options.cert_file, options.key_file);
  if (!client->is_valid()) {
    if (!options.cert_file.empty() && split->url.rfind("https://", 0) == 0)
      return R::fail("cannot load --cert '" + options.cert_file + "' with --key '" + options.key_file +
                     "' (not PEM, or the key does not match the certificate)");
    return R::fail("invalid agent URL '" + split->url + "'");
  }
  if (!trust->file.empty() || !trust->dir.empty()) {
    client->set_ca_cert_path(trust->file, trust->dir);
  } else if (split->url.rfind("https://", 0) == 0) {
    X509_STORE* system_store = X509_STORE_new();  // owned by the client's SSL context from here on
    if (system_store) X509_STORE_set_default_paths(system_store);
    client->set_ca_cert_store(system_store);
  }
  client->enable_server_certificate_verification(true);
  client->set_connection_timeout(2);
  if (*credentials) client->set_basic_auth((*credentials)->user, (*credentials)->password);
  std::unique_ptr<AgentClient> made(
      new AgentClient(split->url, std::move(client), trust->described, credentials->has_value()));
  made->tenant_ = options.tenant;
  return R::ok(std::move(made));
}

AgentClient::AgentClient(std::string url, std::unique_ptr<httplib::Client> client, std::string trust,
                         bool sends_credentials)
    : url_(std::move(url)),
      client_(std::move(client)),
      trust_(std::move(trust)),
      sends_credentials_(sends_credentials) {}

AgentClient::~AgentClient() = default;

AgentError AgentClient::failure_without_answer(int error_code) const {
  const auto error = static_cast<httplib::Error>(error_code);
  const bool https = url_.rfind("https://", 0) == 0;
  switch (error) {
    case httplib::Error::SSLServerVerification:
    case httplib::Error::SSLLoadingCerts: {
      const long verify = client_->get_openssl_verify_result();
      std::string reason = verify != X509_V_OK                        ? X509_verify_cert_error_string(verify)
                           : error == httplib::Error::SSLLoadingCerts ? "cannot load the trusted CA certificates"
                                                                      : "the certificate does not name this host";
      return no_answer(AgentFailure::tls, "TLS: cannot verify the certificate of the agent at " + url_ + ": " + reason +
                                              " (trusting " + trust_ + ")");
    }
    case httplib::Error::SSLConnection:
      return no_answer(AgentFailure::tls,
                       "TLS: handshake with the agent at " + url_ +
                           " failed (does it serve plain HTTP? then use http://; or it wants --cert/--key)");
    case httplib::Error::ConnectionTimeout:
      return no_answer(AgentFailure::unreachable, "cannot reach the agent at " + url_ + ": connection timed out");
    case httplib::Error::Connection: {
      const std::string host = host_of(url_);
      addrinfo* found = nullptr;
      if (int rc = getaddrinfo(host.c_str(), nullptr, nullptr, &found); rc != 0)
        return no_answer(AgentFailure::unreachable,
                         "cannot reach the agent at " + url_ + ": cannot resolve '" + host + "': " + gai_strerror(rc));
      freeaddrinfo(found);
      return no_answer(AgentFailure::unreachable,
                       "cannot reach the agent at " + url_ + ": connection refused or no route");
    }
    case httplib::Error::Read:
    case httplib::Error::Write: {
      if (!https)
        return no_answer(AgentFailure::unreachable, "the agent at " + url_ +
                                                        " closed the connection without an HTTP answer "
                                                        "(if it serves HTTPS, use https://)");
      // With TLS 1.3 the server checks a client certificate after the handshake, so a refused one
      // shows only as a connection closed on the first read (OpenSSL's own reason then names the
      // client's shutdown, not the server's refusal, so it is not shown).
      return no_answer(AgentFailure::tls, "TLS: the agent at " + url_ +
                                              " closed the connection without an HTTP answer "
                                              "(does it want a client certificate? --cert/--key)");
    }
    default:
      return no_answer(AgentFailure::unreachable,
                       "cannot reach the agent at " + url_ + ": " + httplib::to_string(error));
  }
}

Result<std::string, AgentError> AgentClient::get(const std::string& path,
                                                 const std::multimap<std::string, std::string>& params,
                                                 int read_timeout_seconds) {
  using R = Result<std::string, AgentError>;
  client_->set_read_timeout(read_timeout_seconds);
  httplib::Params query(params.begin(), params.end());
  if (!tenant_.empty()) query.emplace("tenant", tenant_);
  auto res = client_->Get(path, query, httplib::Headers{});
  if (!res) return R::fail(failure_without_answer(static_cast<int>(res.error())));
  if (res->status == 401) {
    return R::fail({AgentFailure::auth,
                    sends_credentials_ ? "the agent at " + url_ + " refused the credentials (HTTP 401)"
                                       : "the agent at " + url_ +
                                             " needs credentials (HTTP 401): --basic-auth-user with "
                                             "--basic-auth-password-file, or https://USER:PASSWORD@HOST:PORT",
                    401, res->body});
  }
  if (res->status == 403)
    return R::fail({AgentFailure::auth, "the agent at " + url_ + " forbids this request (HTTP 403)", 403, res->body});
  if (res->status != 200)
    return R::fail({AgentFailure::http, "the agent at " + url_ + " answered HTTP " + std::to_string(res->status),
                    res->status, res->body});
  return R::ok(std::move(res->body));
}

}  // namespace skewscope
