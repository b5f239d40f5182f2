// The reader's trust checks: keys and their files (exchange_keys), the replay window
// (replay_guard), who may speak for which domain (domain_claims), and their order (record_intake).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "exchange/domain_claims.hpp"
#include "exchange/exchange_keys.hpp"
#include "exchange/record_intake.hpp"
#include "exchange/record_signing.hpp"
#include "exchange/replay_guard.hpp"

namespace skewscope::exchange {
namespace {

constexpr std::int64_t kSec = 1'000'000'000;
const std::string kKeyA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const std::string kKeyB = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A scratch directory, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/skewscope-keys-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    const auto p = path / name;
    std::ofstream(p) << text << "\n";
    chmod(p.c_str(), mode);
    return p.string();
  }
};

SignedFields at(std::uint64_t seq, std::int64_t signed_at, std::string signer = "node1", std::uint64_t epoch = 1) {
  SignedFields f;
  f.epoch = epoch;
  f.sequence = seq;
  f.signed_at_ns = signed_at;
  f.signer = std::move(signer);
  return f;
}

}  // namespace

TEST_CASE("key text: hex of 32 to 128 bytes, whitespace ignored; anything else named") {
  auto k = parse_key_text(kKeyA + "\n", "a.key");
  REQUIRE(k);
  CHECK(k->secret.size() == 32);
  CHECK(key_id_hex(k->id) == "ee4ab4dbd677f8a3");
  CHECK(!parse_key_text("00ff", "short.key"));
  CHECK(parse_key_text("00ff", "short.key").error.find("short.key") != std::string::npos);
  CHECK(!parse_key_text(kKeyA.substr(0, 63), "odd.key"));
  CHECK(!parse_key_text("zz" + kKeyA.substr(2), "nothex.key"));
}

TEST_CASE("key files: owner-only, a directory in name order, the first key signs") {
  TempDir dir;
  const std::string a = dir.write("20-a.key", kKeyA, 0600);
  auto loaded = load_exchange_keys({a});
  REQUIRE(loaded);
  CHECK(loaded->keys.size() == 1);

  const std::string open_key = dir.write("open.key", kKeyB, 0644);
  auto refused = load_exchange_keys({open_key});
  REQUIRE(!refused);
  CHECK(refused.error.find("chmod 600") != std::string::npos);
  CHECK(refused.error.find("644") != std::string::npos);
  chmod(open_key.c_str(), 0640);
  CHECK(!load_exchange_keys({open_key}));

  TempDir keys;
  chmod(keys.path.c_str(), 0700);
  keys.write("20-a.key", kKeyA, 0600);
  keys.write("10-b.key", kKeyB, 0600);
  keys.write(".hidden", "not a key", 0600);
  auto both = load_exchange_keys({keys.path.string()});
  REQUIRE(both);
  REQUIRE(both->keys.size() == 2);
  CHECK(both->keys[0].source.ends_with("10-b.key"));  // name order: 10-b signs
  CHECK(both->find(both->keys[1].id) == &both->keys[1]);

  CHECK(!load_exchange_keys({a, keys.path.string()}));  // key A twice
  CHECK(!load_exchange_keys({(dir.path / "missing.key").string()}));
  TempDir empty;
  chmod(empty.path.c_str(), 0700);
  CHECK(!load_exchange_keys({empty.path.string()}));
  chmod(keys.path.c_str(), 0777);
  CHECK(!load_exchange_keys({keys.path.string()}));  // others could add a key
}

TEST_CASE("replay guard: fresh within the window either way, each sequence once per partition") {
  ReplayGuard guard(60 * kSec);
  const std::int64_t now = 1'790'000'000 * kSec;
  CHECK((guard.take(at(1, now - 61 * kSec), 0, now).error == RecordReject::stale));
  CHECK((guard.take(at(1, now + 61 * kSec), 0, now).error == RecordReject::stale));
  CHECK((guard.take(at(1, INT64_MIN), 0, now).error == RecordReject::stale));
  CHECK(guard.take(at(10, now), 0, now));
  CHECK((guard.take(at(10, now), 0, now).error == RecordReject::replayed));
  CHECK(guard.take(at(8, now), 0, now));  // late, not seen: taken
  CHECK((guard.take(at(8, now), 0, now).error == RecordReject::replayed));
  CHECK(guard.take(at(10, now), 1, now));              // another partition keeps its own
  CHECK(guard.take(at(10, now, "node1", 2), 0, now));  // another run of the signer
  CHECK(guard.take(at(10, now, "node2"), 0, now));     // another signer
  CHECK(guard.take(at(10 + kReplayBits + 5, now), 0, now));
  CHECK((guard.take(at(11, now), 0, now).error == RecordReject::replayed));  // beyond the bitmap: refused
  CHECK(guard.take(at(10 + kReplayBits + 4, now), 0, now));
}

TEST_CASE("domain claims: own names stay own, a signer keeps its names, caps and idle expiry") {
  DomainClaims claims(3, 100 * kSec);
  claims.bind_own("node1", {"h1"});
  CHECK((claims.claim("node2", {"h1"}, 0).error == RecordReject::domain_claimed));
  CHECK(claims.claim("node2", {"h2", "h2b"}, 0));
  CHECK((claims.claim("node3", {"h3", "h2"}, 1).error == RecordReject::domain_claimed));
  CHECK(claims.bound() == 3);  // the refused record bound nothing (h3 is free)
  CHECK((claims.claim("node2", {"x", "y"}, 2).error == RecordReject::signer_domains_full));
  CHECK(claims.claim("node2", {"x", "h2"}, 2));  // 3 names: at the cap
  // node2's h2b idles past 100 s and is freed; h1 (own) never expires.
  CHECK(claims.claim("node2", {"x", "h2"}, 95 * kSec));
  CHECK(claims.claim("node3", {"h2b"}, 150 * kSec));
  CHECK((claims.claim("node3", {"h1"}, 1000 * kSec).error == RecordReject::domain_claimed));
  // 4 x 256 names from one signer fill nothing.
  DomainClaims flood;
  for (int r = 0; r < 4; ++r) {
    std::vector<std::string> names;
    for (int i = 0; i < 256; ++i) names.push_back("phantom-" + std::to_string(r) + "-" + std::to_string(i));
    CHECK((flood.claim("evil", names, r).error == RecordReject::signer_domains_full));
  }
  CHECK(flood.bound() == 0);
}

TEST_CASE("intake: a signed batch is taken once; unsigned, mismatched and foreign-domain records are not") {
  auto key = parse_key_text(kKeyA, "a");
  REQUIRE(key);
  ExchangeKeys keys{{*key}};
  const std::int64_t now = 1'790'000'000 * kSec;
  RecordIntake intake("node2", {"h2"});
  WireBatch b;
  b.host = "node1";
  b.domains = {"h1"};
  const std::string inner = encode_record(b);
  const std::string rec = sign_record(keys.keys[0], at(1, now), "k", inner);
  auto taken = intake.take(bytes_of(rec), "k", 0, &keys, now, 0);
  REQUIRE(taken);
  CHECK(*taken.value == b);
  CHECK((intake.take(bytes_of(rec), "k", 0, &keys, now, 0).error == RecordReject::replayed));
  CHECK((intake.take(bytes_of(inner), "k", 0, &keys, now, 0).error == RecordReject::unsigned_record));
  // Signed by "node3", the batch says node1.
  CHECK(
      (intake.take(bytes_of(sign_record(keys.keys[0], at(1, now, "node3"), "k", inner)), "k", 0, &keys, now, 0).error ==
       RecordReject::signer_mismatch));
  // node3 speaking for h2 (this agent's own) or h1 (node1's).
  WireBatch claim = b;
  claim.host = "node3";
  claim.domains = {"h2"};
  CHECK((intake
             .take(bytes_of(sign_record(keys.keys[0], at(2, now, "node3"), "k", encode_record(claim))), "k", 0, &keys,
                   now, 0)
             .error == RecordReject::domain_claimed));
  claim.domains = {"h1"};
  CHECK((intake
             .take(bytes_of(sign_record(keys.keys[0], at(3, now, "node3"), "k", encode_record(claim))), "k", 0, &keys,
                   now, 0)
             .error == RecordReject::domain_claimed));
  // Insecure: the unsigned batch is taken, the domain rules still hold.
  RecordIntake open_intake("node2", {"h2"});
  CHECK(open_intake.take(bytes_of(inner), "k", 0, nullptr, now, 0));
  CHECK((open_intake.take(bytes_of(encode_record(claim)), "k", 0, nullptr, now, 0).error ==
         RecordReject::domain_claimed));
  CHECK((open_intake.take(bytes_of(std::string(kMaxRecordBytes + 1, 'S')), "k", 0, nullptr, now, 0).error ==
         RecordReject::oversized));
}

}  // namespace skewscope::exchange
