#include "exchange/exchange_keys.hpp"

#include <openssl/sha.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace skewscope::exchange {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string octal_mode(mode_t mode) {
  std::ostringstream out;
  out << std::oct << (mode & 07777);
  return out.str();
}

// A secret readable by others is no longer a secret: refuse it rather than sign with it.
Result<ExchangeKey> read_key_file(const std::string& path) {
  using Read = Result<ExchangeKey>;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Read::fail("--exchange-key-file " + path + ": cannot be read");
  if (!S_ISREG(st.st_mode)) return Read::fail("--exchange-key-file " + path + ": not a regular file");
  if (st.st_mode & 077)
    return Read::fail("--exchange-key-file " + path + ": mode " + octal_mode(st.st_mode) +
                      " lets group or others read it; chmod 600 it");
  std::ifstream in(path);
  if (!in) return Read::fail("--exchange-key-file " + path + ": cannot be read");
  std::string text;
  std::getline(in, text, '\0');
  if (text.size() > 4096) return Read::fail("--exchange-key-file " + path + ": larger than a key");
  return parse_key_text(text, path);
}

}  // namespace

KeyId key_id_of(const std::string& secret) {
  static const std::string label = "skewscope exchange key id";
  std::string input = label;
  input += secret;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  KeyId id{};
  std::copy_n(digest, id.size(), id.begin());
  return id;
}

std::string key_id_hex(const KeyId& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto b : id) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

Result<ExchangeKey> parse_key_text(const std::string& text, const std::string& source) {
  using Parsed = Result<ExchangeKey>;
  std::string hex;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (hex_value(c) < 0) return Parsed::fail("--exchange-key-file " + source + ": not hex (openssl rand -hex 32)");
    hex += c;
  }
  if (hex.size() % 2 != 0 || hex.size() < 2 * kMinKeyBytes || hex.size() > 2 * kMaxKeyBytes)
    return Parsed::fail("--exchange-key-file " + source + ": " + std::to_string(hex.size()) +
                        " hex digits, expected an even number from 64 to 256");
  ExchangeKey key;
  key.source = source;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    key.secret += static_cast<char>(hex_value(hex[i]) * 16 + hex_value(hex[i + 1]));
  key.id = key_id_of(key.secret);
  return Parsed::ok(std::move(key));
}

Result<ExchangeKeys> load_exchange_keys(const std::vector<std::string>& paths) {
  using Loaded = Result<ExchangeKeys>;
  ExchangeKeys out;
  auto add = [&out](const std::string& file) -> Status {
    auto key = read_key_file(file);
    if (!key) return Status::fail(key.error);
    for (const auto& k : out.keys)
      if (k.id == key->id) return Status::fail("--exchange-key-file " + file + ": same key as " + k.source);
    if (out.keys.size() >= kMaxKeys)
      return Status::fail("--exchange-key-file: more than " + std::to_string(kMaxKeys) + " keys");
    out.keys.push_back(std::move(*key));
    return Status::ok();
  };
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      if (Status s = add(path); !s) return Loaded::fail(s.error);
      continue;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 022))
      return Loaded::fail("--exchange-key-file " + path + ": directory mode " + octal_mode(st.st_mode) +
                          " lets group or others add keys");
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name[0] == '.' || !entry.is_regular_file(ec)) continue;
      files.push_back(entry.path().string());
    }
    if (ec) return Loaded::fail("--exchange-key-file " + path + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& file : files)
      if (Status s = add(file); !s) return Loaded::fail(s.error);
  }
  if (out.keys.empty()) return Loaded::fail("--exchange-key-file: no key found");
  return Loaded::ok(std::move(out));
}

}  // namespace skewscope::exchange
