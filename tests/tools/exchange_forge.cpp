// Writes one exchange record to a file, as an outsider or a misbehaving agent would produce it
// (kcat then puts it on the topic): the exchange_trust root tests' forgeries.
//
//   exchange_forge --out FILE --host H --domain D --kind send|recv --src A:P --dst A:P
//                  [--count N] [--offset-ms MS] [--extra-domains N] [--pad BYTES]
//                  [--key-file K [--signer NAME] [--kafka-key KEY] [--sequence S]]
//
// The record holds `count` halves of one kind on the directed flow src -> dst, 1 ms apart from
// now + offset-ms (wall clock), 64 bytes each, in domain D of host H; `extra-domains` adds that
// many unused domain names (a registry flood), `pad` an unknown protobuf field of that size (a
// well-formed but oversized record). With --key-file it is signed (record_signing.hpp) as
// `signer` (default H) for the Kafka key `kafka-key` (default: the flow's host pair); without it,
// it is an unsigned version-1 record.
#include <arpa/inet.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>

#include "exchange/exchange_keys.hpp"
#include "exchange/flow_keys.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/record_signing.hpp"

namespace {

using namespace skewscope;

bool parse_endpoint(const std::string& text, Address& addr, std::uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  in_addr v4{};
  if (inet_pton(AF_INET, text.substr(0, colon).c_str(), &v4) != 1) return false;
  addr = Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  std::memcpy(&addr[12], &v4, 4);
  port = static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1)));
  return port != 0;
}

std::int64_t realtime_now_ns() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

// An unknown field (number 1000, length-delimited) appended to the protobuf: parsers skip it, so
// the record stays well-formed while growing to any size.
std::string padded(const std::string& record, std::size_t pad) {
  if (pad == 0) return record;
  std::string field = {static_cast<char>(0xc2), static_cast<char>(0x3e)};  // tag: field 1000, wire type 2
  for (std::size_t n = pad;; n >>= 7) {
    if (n < 0x80) {
      field += static_cast<char>(n);
      break;
    }
    field += static_cast<char>((n & 0x7f) | 0x80);
  }
  field.append(pad, 'x');
  std::string out = record + field;
  const auto n = static_cast<std::uint32_t>(out.size() - exchange::kEnvelopeBytes);
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"exchange_forge: one exchange record, forged for the trust tests"};
  std::string out, host, domain, kind = "send", src, dst, key_file, signer, kafka_key;
  int count = 1, extra_domains = 0;
  std::int64_t offset_ms = 0;
  std::size_t pad = 0;
  std::uint64_t sequence = 1;
  app.add_option("--out", out)->required();
  app.add_option("--host", host)->required();
  app.add_option("--domain", domain)->required();
  app.add_option("--kind", kind)->check(CLI::IsMember({"send", "recv"}));
  app.add_option("--src", src)->required();
  app.add_option("--dst", dst)->required();
  app.add_option("--count", count)->check(CLI::Range(0, 60000));
  app.add_option("--offset-ms", offset_ms);
  app.add_option("--extra-domains", extra_domains)->check(CLI::Range(0, 255));
  app.add_option("--pad", pad)->check(CLI::Range(0, 4 << 20));
  app.add_option("--key-file", key_file);
  app.add_option("--signer", signer);
  app.add_option("--kafka-key", kafka_key);
  app.add_option("--sequence", sequence);
  CLI11_PARSE(app, argc, argv);

  FlowKey flow;
  if (!parse_endpoint(src, flow.src_addr, flow.src_port) || !parse_endpoint(dst, flow.dst_addr, flow.dst_port)) {
    std::cerr << "exchange_forge: --src/--dst must be IPv4:PORT\n";
    return 2;
  }
  exchange::WireBatch batch;
  batch.host = host;
  batch.domains.push_back(domain);
  for (int i = 0; i < extra_domains; ++i) batch.domains.push_back(domain + "-x" + std::to_string(i));
  const std::int64_t t0 = realtime_now_ns() + offset_ms * 1'000'000;
  for (int i = 0; i < count; ++i) {
    exchange::WireHalf h;
    h.kind = kind == "send" ? HalfKind::send : HalfKind::recv;
    h.flow = flow;
    h.seq = 1000 + 64 * static_cast<std::uint32_t>(i);
    h.bytes = 64;
    h.realtime_ns = t0 + i * 1'000'000LL;
    batch.halves.push_back(h);
  }
  std::string record = padded(exchange::encode_record(batch), pad);
  if (!key_file.empty()) {
    auto keys = exchange::load_exchange_keys({key_file});
    if (!keys) {
      std::cerr << "exchange_forge: " << keys.error << "\n";
      return 2;
    }
    exchange::SignedFields fields;
    fields.epoch = static_cast<std::uint64_t>(realtime_now_ns());
    fields.sequence = sequence;
    fields.signed_at_ns = realtime_now_ns();
    fields.signer = signer.empty() ? host : signer;
    record = exchange::sign_record(keys->keys.front(), fields,
                                   kafka_key.empty() ? exchange::host_pair_key(flow) : kafka_key, record);
  }
  std::ofstream file(out, std::ios::binary);
  file << record;
  if (!file.flush()) {
    std::cerr << "exchange_forge: cannot write " << out << "\n";
    return 1;
  }
  return 0;
}
