// One agent's exchange under synthetic load, against a test Kafka: the real agent core and Kafka
// thread, fed with synthetic halves instead of the ring buffer.
//
//   exchange_bench --bootstrap B --topic T --group G --role produce --rate HALVES_PER_S --seconds S
//   exchange_bench --bootstrap B --topic T --group G2 --role consume --seconds S
//
// `produce` generates messages (a send and a receive half each, 20 us apart) between 16 host
// pairs; none is local, so every half is shipped. Its Kafka thread also consumes the topic (every
// agent does). `consume` generates nothing and only pairs what it reads, in its own group. So
// CPU(produce) - CPU(consume) is the cost of producing, CPU(consume) the cost of consuming.
// Prints one JSON line with what it measured.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/shared_core.hpp"
#include "runtime/kafka_exchange.hpp"
#include "synthetic_halves.hpp"

using namespace skewscope;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// A half of a message a -> b between the hosts of pair `pair` (10.1.PAIR.1 -> 10.1.PAIR.2:7000).
skewscope_half_event half(int pair, std::uint16_t port, bool send, std::uint32_t seq, std::int64_t ts) {
  const std::array<std::uint8_t, 3> net{10, 1, static_cast<std::uint8_t>(pair)};
  const test::Endpoint a{1, port, 1, net}, b{2, 7000, 1, net};
  return send ? test::make_half(a, b, true, seq, 64, ts) : test::make_half(b, a, false, seq, 64, ts);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"exchange benchmark: one agent core + Kafka thread under synthetic halves"};
  std::string bootstrap, topic = "skewscope.halves.v1", group = "bench", role = "produce";
  double rate = 100000, seconds = 5, drain = 4;
  app.add_option("--bootstrap", bootstrap)->required();
  app.add_option("--topic", topic);
  app.add_option("--group", group);
  app.add_option("--role", role)->check(CLI::IsMember({"produce", "consume"}));
  app.add_option("--rate", rate, "halves per second (produce)");
  app.add_option("--seconds", seconds);
  app.add_option("--drain", drain, "seconds to wait for the last records after the load");
  std::vector<std::string> properties;
  app.add_option("--config", properties, "KEY=VALUE librdkafka property, as --exchange-config");
  CLI11_PARSE(app, argc, argv);

  AgentCoreConfig config;
  config.window_ns = 30'000'000'000;
  SharedCore core(AgentCore(DomainRegistry(role == "produce" ? "bench-p" : "bench-c", false), config));
  core.lock()->clock_mapping().sample_now();
  core.lock()->enable_exchange(exchange::CoreExchangeConfig{1});
  auto parsed = exchange::parse_exchange_settings("kafka:" + bootstrap, properties, topic, group, "1/1");
  if (!parsed) {
    std::cerr << parsed.error << "\n";
    return 2;
  }
  exchange::ExchangeSettings settings = std::move(*parsed);
  // Signed and verified like the agent's records (docs/security.md): the MAC's cost is measured too.
  settings.keys = exchange::ExchangeKeys{{*exchange::parse_key_text(std::string(64, 'b'), "bench key")}};
  settings.host_name = role;
  // No namespace: this agent owns no address, every half leaves.
  auto created = exchange::KafkaExchange::create(settings, core);
  if (!created) {
    std::cerr << created.error << "\n";
    return 1;
  }
  auto kafka = std::move(*created);
  kafka->start();
  auto owned = [&] { return core.lock()->report(monotonic_now_ns(), {}).exchange->partitions.size(); };
  for (int i = 0; i < 200 && owned() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));

  const double cpu0 = cpu_seconds();
  const std::int64_t t0 = monotonic_now_ns();
  std::uint64_t generated = 0;
  if (role == "produce") {
    std::vector<skewscope_half_event> batch;
    // One TCP stream per port: its sequence number moves on by the 64 bytes each message moves.
    std::array<std::uint32_t, 64> seq;
    seq.fill(1);
    const auto total = static_cast<std::uint64_t>(rate * seconds);
    while (generated < total) {
      const std::int64_t now = monotonic_now_ns();
      const auto due =
          std::min<std::uint64_t>(total, static_cast<std::uint64_t>(static_cast<double>(now - t0) * 1e-9 * rate));
      batch.clear();
      for (; generated + 2 <= due; generated += 2) {
        const int pair = static_cast<int>((generated / 2) % 16);
        const auto stream = static_cast<std::size_t>((generated / 2) % 64);
        const auto port = static_cast<std::uint16_t>(40000 + stream);
        batch.push_back(half(pair, port, true, seq[stream], now - 20'000));
        batch.push_back(half(pair, port, false, seq[stream], now));
        seq[stream] += 64;
      }
      {
        auto locked = core.lock();
        locked->ingest(batch);
        locked->tick(now);
        locked->clock_mapping().sample_now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } else {
    // The agent's capture loop ticks the core every 100 ms (runtime/capture_loop.cpp): the tick
    // ages halves that will find no other half out of the pairing tables, so a consumer must too.
    while (monotonic_now_ns() - t0 < static_cast<std::int64_t>(seconds * 1e9)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto locked = core.lock();
      locked->clock_mapping().sample_now();
      locked->tick(monotonic_now_ns());
    }
  }
  const std::int64_t load_end = monotonic_now_ns();
  for (int i = 0; i < static_cast<int>(drain * 10); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    core.lock()->tick(monotonic_now_ns());
  }
  const double cpu = cpu_seconds() - cpu0;
  AgentReport r = core.lock()->report(monotonic_now_ns(), {});
  kafka->fill(*r.exchange);
  std::uint64_t spans = 0;
  for (const auto& p : r.health.pairs) spans += p.spans;
  const auto& x = *r.exchange;
  std::uint64_t dropped = 0;
  nlohmann::json reasons = nlohmann::json::object();
  for (std::size_t i = 0; i < x.dropped.size(); ++i) {
    dropped += x.dropped[i];
    if (x.dropped[i]) reasons[exchange::drop_reason_name(static_cast<exchange::DropReason>(i))] = x.dropped[i];
  }
  nlohmann::json out = {{"role", role},
                        {"rate", rate},
                        {"seconds", static_cast<double>(load_end - t0) * 1e-9},
                        {"generated", generated},
                        {"produced", x.halves_produced},
                        {"consumed", x.halves_consumed},
                        {"records_produced", x.records_produced},
                        {"bytes_produced", x.bytes_produced},
                        {"dropped", dropped},
                        {"dropped_by_reason", reasons},
                        {"spans", spans},
                        {"unpaired_sends", x.unpaired_sends},
                        {"cpu_seconds", cpu},
                        {"pairing_delay_p50", x.pairing_delay_p50_seconds ? nlohmann::json(*x.pairing_delay_p50_seconds)
                                                                          : nlohmann::json(nullptr)},
                        {"pairing_delay_p99", x.pairing_delay_p99_seconds ? nlohmann::json(*x.pairing_delay_p99_seconds)
                                                                          : nlohmann::json(nullptr)}};
  std::cout << out.dump() << std::endl;
  kafka->stop();
  return 0;
}
