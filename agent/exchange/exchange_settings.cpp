#include "exchange/exchange_settings.hpp"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <memory>
#include <set>

namespace skewscope::exchange {
namespace {

bool parse_uint(std::string_view text, std::uint64_t max, std::uint64_t& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && out <= max;
}

Result<std::string> check_brokers(const std::string& spec) {
  const std::string prefix = "kafka:";
  if (spec.rfind(prefix, 0) != 0)
    return Result<std::string>::fail("--exchange '" + spec + "': expected kafka:HOST:PORT[,HOST:PORT...]");
  const std::string brokers = spec.substr(prefix.size());
  std::size_t start = 0;
  while (true) {
    std::size_t comma = brokers.find(',', start);
    std::string one = brokers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t colon = one.rfind(':');
    std::uint64_t port = 0;
    if (colon == std::string::npos || colon == 0 || !parse_uint(one.substr(colon + 1), 65535, port) || port == 0)
      return Result<std::string>::fail("--exchange '" + spec + "': '" + one + "' is not HOST:PORT");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Result<std::string>::ok(brokers);
}

bool valid_topic(const std::string& t) {
  if (t.empty() || t.size() > 249 || t == "." || t == "..") return false;
  for (char c : t)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace

Result<ExchangeSettings> parse_exchange_settings(const std::string& exchange, const std::vector<std::string>& config,
                                                 const std::string& topic, const std::string& group,
                                                 const std::string& sample) {
  using SettingsResult = Result<ExchangeSettings>;
  ExchangeSettings out;
  auto brokers = check_brokers(exchange);
  if (!brokers) return SettingsResult::fail(brokers.error);
  out.brokers = *brokers;
  if (!valid_topic(topic))
    return SettingsResult::fail("--exchange-topic '" + topic + "': 1-249 letters, digits, '.', '_' or '-'");
  if (group.empty()) return SettingsResult::fail("--exchange-group must not be empty");
  out.topic = topic;
  out.group = group;
  std::uint64_t n = 0;
  if (sample.rfind("1/", 0) != 0 || !parse_uint(sample.substr(2), 1'000'000, n) || n == 0)
    return SettingsResult::fail("--exchange-sample '" + sample + "': expected 1/N with N from 1 to 1000000");
  out.sample_one_in = static_cast<std::uint32_t>(n);

  // What the exchange decides itself: set by its own option, or fixed so that all agents agree.
  static const std::set<std::string> reserved = {"bootstrap.servers", "metadata.broker.list", "group.id", "partitioner",
                                                 "partition.assignment.strategy"};
  std::unique_ptr<rd_kafka_conf_t, decltype(&rd_kafka_conf_destroy)> conf(rd_kafka_conf_new(), rd_kafka_conf_destroy);
  for (const auto& text : config) {
    std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      return SettingsResult::fail("--exchange-config '" + text + "': expected KEY=VALUE");
    std::string key = text.substr(0, eq), value = text.substr(eq + 1);
    if (reserved.contains(key))
      return SettingsResult::fail(
          "--exchange-config " + key +
          ": set by skewscope (--exchange, --exchange-group, or fixed so that all agents agree)");
    char err[512] = {};
    if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
      return SettingsResult::fail("--exchange-config " + key + ": " + err);
    out.properties.emplace_back(key, value);
  }
  return SettingsResult::ok(std::move(out));
}

Status apply_trust_options(ExchangeSettings& settings, const std::vector<std::string>& key_files, bool insecure) {
  if (insecure && !key_files.empty())
    return Status::fail("--exchange-insecure and --exchange-key-file exclude each other");
  if (insecure) {
    settings.insecure = true;
    return Status::ok();
  }
  if (key_files.empty())
    return Status::fail(
        "--exchange needs --exchange-key-file (records are signed and verified), or --exchange-insecure to let "
        "anyone who can write to the topic speak for the agents");
  auto keys = load_exchange_keys(key_files);
  if (!keys) return Status::fail(keys.error);
  settings.key_files = key_files;
  settings.keys = std::move(*keys);
  return Status::ok();
}

}  // namespace skewscope::exchange
