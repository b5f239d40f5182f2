// Message transports between stages, chosen by the endpoint URL:
//   tcp://HOST:PORT              ZeroMQ: the receiving stage binds a PULL socket, the sender PUSHes
//   kafka://BOOTSTRAP/TOPIC      Kafka via librdkafka: partition 0 of TOPIC, read from the beginning
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pipeline {

struct Endpoint {
  enum class Kind { zmq, kafka } kind;
  std::string address;  // zmq: tcp://HOST:PORT; kafka: bootstrap servers
  std::string topic;    // kafka only
  std::string transport_name() const { return kind == Kind::zmq ? "zmq" : "kafka"; }
};

// nullopt when the URL is not one of the two forms above.
std::optional<Endpoint> parse_endpoint(const std::string& url);

struct TransportOptions {
  std::vector<std::string> kafka_opts;  // KEY=VALUE passed to librdkafka, applied last
  std::string client_id = "pipeline";
};

class Receiver {
 public:
  virtual ~Receiver() = default;
  // Waits until the transport can deliver (bound / broker answered). False on timeout.
  virtual bool wait_ready(int timeout_ms) = 0;
  // One message into out; false on timeout (nothing received).
  virtual bool receive(std::vector<std::byte>& out, int timeout_ms) = 0;
};

class Sender {
 public:
  virtual ~Sender() = default;
  // Waits until a peer is connected (zmq) or the broker answered (kafka). False on timeout.
  virtual bool wait_ready(int timeout_ms) = 0;
  // Queues one message; blocks while the transport is full, at most timeout_ms. False when it
  // could not be queued by then or a signal stopped the program.
  virtual bool send(std::span<const std::byte> data, int64_t timeout_ms) = 0;
  // Delivers everything queued, waiting at most timeout_ms. Returns messages not delivered.
  virtual long close(int timeout_ms) = 0;
};

// Both throw std::runtime_error when the transport cannot be set up.
std::unique_ptr<Receiver> open_receiver(const Endpoint& ep, const TransportOptions& opts);
std::unique_ptr<Sender> open_sender(const Endpoint& ep, const TransportOptions& opts);

// After every Sender and Receiver is destroyed: waits for ZeroMQ to deliver what closed senders
// still hold (bounded by the timeout given to Sender::close).
void finish_transports();

}  // namespace pipeline
