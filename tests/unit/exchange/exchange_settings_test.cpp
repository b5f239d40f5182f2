#include "exchange/exchange_settings.hpp"

#include <doctest/doctest.h>

namespace skewscope::exchange {

TEST_CASE("exchange options: valid ones pass through, librdkafka judges every property") {
  auto parsed = parse_exchange_settings("kafka:a:9092,10.0.0.1:9093", {"security.protocol=ssl", "linger.ms=5"},
                                        kDefaultTopic, kDefaultGroup, "1/4");
  REQUIRE(parsed);
  const ExchangeSettings& s = *parsed;
  CHECK(s.brokers == "a:9092,10.0.0.1:9093");
  CHECK(s.sample_one_in == 4);
  CHECK(s.properties.size() == 2);
}

TEST_CASE("exchange options: every bad value is a one-line error naming the option") {
  auto error = [](std::string exchange, std::vector<std::string> config, std::string topic, std::string sample) {
    return parse_exchange_settings(exchange, config, topic, "g", sample).error;
  };
  CHECK(error("a:1", {}, "t", "1/1").find("--exchange 'a:1'") == 0);
  CHECK(error("kafka:a", {}, "t", "1/1").find("is not HOST:PORT") != std::string::npos);
  CHECK(error("kafka:a:0", {}, "t", "1/1") != "");
  CHECK(error("kafka:a:1,", {}, "t", "1/1") != "");
  CHECK(error("kafka:a:1", {"no.such.property=1"}, "t", "1/1").find("--exchange-config no.such.property") == 0);
  CHECK(error("kafka:a:1", {"linger.ms=abc"}, "t", "1/1") != "");
  CHECK(error("kafka:a:1", {"novalue"}, "t", "1/1").find("KEY=VALUE") != std::string::npos);
  for (const char* fixed :
       {"partitioner=random", "partition.assignment.strategy=range", "group.id=x", "bootstrap.servers=b:1"})
    CHECK(error("kafka:a:1", {fixed}, "t", "1/1").find("set by skewscope") != std::string::npos);
  CHECK(error("kafka:a:1", {}, "bad topic", "1/1").find("--exchange-topic") == 0);
  for (const char* sample : {"1/0", "2/4", "1/", "1/x", "1/1000001", "4"})
    CHECK(error("kafka:a:1", {}, "t", sample).find("--exchange-sample") == 0);
}

}  // namespace skewscope::exchange
