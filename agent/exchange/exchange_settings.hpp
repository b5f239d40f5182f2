// The --exchange* options, parsed and validated before anything starts: a bad broker list, a
// property librdkafka does not know or a value it refuses is a usage error (exit 2), not a
// surprise at the first produce.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "domains/tenant_map.hpp"
#include "exchange/domain_claims.hpp"
#include "exchange/exchange_keys.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

inline constexpr const char* kDefaultTopic = "skewscope.halves.v1";
inline constexpr const char* kDefaultGroup = "skewscope";
// Fixed in code so that every agent maps a key to the same partition and every member of the
// group speaks the same assignor (members listing different assignors break the group).
inline constexpr const char* kPartitioner = "murmur2_random";
inline constexpr const char* kAssignor = "cooperative-sticky";

struct ExchangeSettings {
  std::string brokers;                                          // librdkafka bootstrap.servers: "host:port,host:port"
  std::vector<std::pair<std::string, std::string>> properties;  // --exchange-config, in order
  std::string topic = kDefaultTopic;
  std::string group = kDefaultGroup;
  std::uint32_t sample_one_in = 1;
  TenantMap tenants;                     // --tenant or the policy file's: each record says its domains' tenants
  std::string host_name;                 // sender's name in every batch
  std::vector<std::string> netns_paths;  // namespaces whose addresses are this agent's ("" = own)
  // Trust (docs/security.md): the key files, re-read while running (rotation), and the keys they
  // held at start; or insecure mode, where nothing is signed or verified.
  std::vector<std::string> key_files;
  std::optional<ExchangeKeys> keys;
  bool insecure = false;
  std::size_t domains_per_signer = kDefaultDomainsPerSigner;  // --exchange-domains-per-agent
};

// The settings (host_name and netns_paths left for the caller), or an error naming the option.
Result<ExchangeSettings> parse_exchange_settings(const std::string& exchange, const std::vector<std::string>& config,
                                                 const std::string& topic, const std::string& group,
                                                 const std::string& sample);

// --exchange-key-file / --exchange-insecure: exactly one of the two, and the keys must load
// (strict permissions, well-formed); the keys and files are stored in `settings`.
Status apply_trust_options(ExchangeSettings& settings, const std::vector<std::string>& key_files, bool insecure);

}  // namespace skewscope::exchange
