// The payload detector's verdict (bpf/lib/payload_classify.h, the code the BPF programs run) over
// the first bytes of real librdkafka and libzmq connections (tests/data/protocols): which end of a
// Kafka connection is followed, ZMTP from either end, and bytes that are neither.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "capture_file.hpp"

extern "C" {
#include "payload_classify.h"
}

namespace {

using namespace skewscope::protocols::testing;

const std::string kData = SKEWSCOPE_PROTOCOL_DATA;

// The first chunk each direction of a recorded connection moved.
std::vector<Record> first_of_each_direction(const std::filesystem::path& file) {
  std::vector<Record> out;
  bool seen[2] = {false, false};
  for (const auto& r : load_capture(file)) {
    if (seen[r.direction]) continue;
    seen[r.direction] = true;
    out.push_back(r);
  }
  return out;
}

std::uint8_t classify(const std::vector<std::uint8_t>& bytes, std::uint8_t kind) {
  return payload_classify(bytes.data(), static_cast<std::uint32_t>(bytes.size()), kind);
}

}  // namespace

TEST_CASE("a Kafka request sent first is a client's end; received first, the broker's") {
  const auto files = captures(kData, "kafka-");
  REQUIRE(files.size() >= 3);
  for (const auto& file : files) {
    CAPTURE(file.filename().string());
    const auto first = first_of_each_direction(file);
    REQUIRE(!first.empty());
    REQUIRE(first[0].direction == 0);  // the client speaks first (ApiVersions)
    // The client's end sent these bytes: followed, copied.
    CHECK(classify(first[0].bytes, SKEWSCOPE_HALF_SEND) == SKEWSCOPE_PROTO_KAFKA);
    // The same bytes as the broker's end (or a forwarder's listening end) reads them: the agent
    // follows client ends only, so this end must not be copied (it was KAFKA before, every one of
    // its records a wasted ring-buffer slot).
    CHECK(classify(first[0].bytes, SKEWSCOPE_HALF_RECV) == SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE);
  }
}

TEST_CASE("a ZMTP greeting is ZMTP from either end") {
  const auto files = captures(kData, "zmtp-");
  REQUIRE(files.size() >= 2);
  for (const auto& file : files) {
    CAPTURE(file.filename().string());
    for (const auto& r : first_of_each_direction(file)) {
      CHECK(classify(r.bytes, SKEWSCOPE_HALF_SEND) == SKEWSCOPE_PROTO_ZMTP);
      CHECK(classify(r.bytes, SKEWSCOPE_HALF_RECV) == SKEWSCOPE_PROTO_ZMTP);
    }
  }
}

TEST_CASE("no chunk of a Kafka connection, taken as a first chunk, looks like ZMTP") {
  // A socket first seen mid-stream is classified from whatever its first traced call moved.
  for (const auto& file : captures(kData, "kafka-")) {
    CAPTURE(file.filename().string());
    for (const auto& r : load_capture(file)) {
      CHECK(classify(r.bytes, SKEWSCOPE_HALF_SEND) != SKEWSCOPE_PROTO_ZMTP);
      CHECK(classify(r.bytes, SKEWSCOPE_HALF_RECV) != SKEWSCOPE_PROTO_ZMTP);
    }
  }
}

TEST_CASE("too few bytes, or neither protocol, is other") {
  const auto kafka = first_of_each_direction(captures(kData, "kafka-")[0])[0].bytes;
  const std::vector<std::uint8_t> short_request(kafka.begin(), kafka.begin() + 13);
  CHECK(classify(short_request, SKEWSCOPE_HALF_SEND) == SKEWSCOPE_PROTO_OTHER);
  const std::vector<std::uint8_t> http = {'G', 'E', 'T', ' ', '/', 'm', 'e', 't', 'r', 'i', 'c', 's', ' ', 'H'};
  CHECK(classify(http, SKEWSCOPE_HALF_SEND) == SKEWSCOPE_PROTO_OTHER);
  const std::vector<std::uint8_t> nine = {0xff, 0, 0, 0, 0, 0, 0, 0, 1};
  CHECK(classify(nine, SKEWSCOPE_HALF_RECV) == SKEWSCOPE_PROTO_OTHER);
}

TEST_CASE("a port-named Kafka socket's end is the side of the named port") {
  // Connected to the broker's port: a client's end, whatever its first call seen (a consumer
  // older than the agent is first seen receiving a Fetch response).
  CHECK(payload_kafka_port_end(0, 1) == SKEWSCOPE_PROTO_KAFKA);
  // Bound to it: the broker's end, or a forwarder's listening end.
  CHECK(payload_kafka_port_end(1, 0) == SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE);
  // Both ports named: the port cannot tell; the first bytes' direction will.
  CHECK(payload_kafka_port_end(1, 1) == SKEWSCOPE_PROTO_KAFKA_PORT);
  CHECK(payload_kafka_role(SKEWSCOPE_HALF_SEND) == SKEWSCOPE_PROTO_KAFKA);
  CHECK(payload_kafka_role(SKEWSCOPE_HALF_RECV) == SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE);
}
