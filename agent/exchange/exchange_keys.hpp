// The exchange's shared secrets (--exchange-key-file): HMAC-SHA256 keys read from files that only
// their owner may read. Every key listed verifies; the first one signs. Why HMAC with a cluster
// key, not per-agent signatures: docs/security.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope::exchange {

inline constexpr std::size_t kKeyIdBytes = 8;
inline constexpr std::size_t kMinKeyBytes = 32;  // HMAC-SHA256: a shorter secret is weaker than the hash
inline constexpr std::size_t kMaxKeyBytes = 128;
inline constexpr std::size_t kMaxKeys = 16;

using KeyId = std::array<std::uint8_t, kKeyIdBytes>;

struct ExchangeKey {
  KeyId id{};          // names the key in a signed record without revealing it
  std::string secret;  // raw bytes
  std::string source;  // the file it came from, for messages
};

struct ExchangeKeys {
  std::vector<ExchangeKey> keys;  // keys[0] signs; every one verifies
  const ExchangeKey* find(const KeyId& id) const {
    for (const auto& k : keys)
      if (k.id == id) return &k;
    return nullptr;
  }
};

// The key's id: the first 8 bytes of SHA-256("skewscope exchange key id" || secret).
KeyId key_id_of(const std::string& secret);
std::string key_id_hex(const KeyId& id);

// A key file holds one line of hex (64-256 digits: 32-128 bytes, e.g. `openssl rand -hex 32`).
// Pure: the file's text to the key, or a one-line error naming `source`.
Result<ExchangeKey> parse_key_text(const std::string& text, const std::string& source);

// Each path is a key file or a directory of key files (its regular files not starting with '.',
// in name order). Refused: a missing or unreadable path, a key file group or others may read
// (or, for a directory, write), a malformed key, no key at all, more than kMaxKeys, one key twice.
Result<ExchangeKeys> load_exchange_keys(const std::vector<std::string>& paths);

}  // namespace skewscope::exchange
