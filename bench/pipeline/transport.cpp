#include "transport.hpp"

#include "common.hpp"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>

namespace pipeline {

std::optional<Endpoint> parse_endpoint(const std::string& url) {
  static const std::regex zmq_re(R"(^tcp://[A-Za-z0-9_.\-\*]+:[0-9]{1,5}$)");
  static const std::regex kafka_re(R"(^kafka://([A-Za-z0-9_.\-:,]+)/([A-Za-z0-9_.\-]+)$)");
  std::smatch m;
  if (std::regex_match(url, zmq_re)) return Endpoint{Endpoint::Kind::zmq, url, ""};
  if (std::regex_match(url, m, kafka_re)) return Endpoint{Endpoint::Kind::kafka, m[1], m[2]};
  return std::nullopt;
}

namespace {

// ---- ZeroMQ --------------------------------------------------------------------------------
// Never destroyed implicitly: terminating a context blocks until every socket is closed, which
// an early exit() would never do. finish_transports() terminates it on the orderly path.
zmq::context_t*& zmq_context_ptr() {
  static zmq::context_t* ctx = new zmq::context_t(1);
  return ctx;
}
zmq::context_t& zmq_context() { return *zmq_context_ptr(); }

class ZmqReceiver final : public Receiver {
 public:
  explicit ZmqReceiver(const Endpoint& ep) : sock_(zmq_context(), zmq::socket_type::pull) {
    sock_.set(zmq::sockopt::linger, 0);
    sock_.bind(ep.address);
  }
  bool wait_ready(int) override { return true; }  // bound in the constructor
  bool receive(std::vector<std::byte>& out, int timeout_ms) override {
    sock_.set(zmq::sockopt::rcvtimeo, timeout_ms);
    zmq::message_t msg;
    try {
      if (!sock_.recv(msg, zmq::recv_flags::none)) return false;
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) return false;
      throw;
    }
    auto* p = static_cast<const std::byte*>(msg.data());
    out.assign(p, p + msg.size());
    return true;
  }

 private:
  zmq::socket_t sock_;
};

class ZmqSender final : public Sender {
 public:
  explicit ZmqSender(const Endpoint& ep) : sock_(zmq_context(), zmq::socket_type::push) {
    // Queue only on completed connections, so POLLOUT tells when the next stage is connected.
    sock_.set(zmq::sockopt::immediate, 1);
    sock_.set(zmq::sockopt::sndtimeo, 200);
    sock_.connect(ep.address);
  }
  bool wait_ready(int timeout_ms) override {
    zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLOUT, 0};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!g_stop.load() && std::chrono::steady_clock::now() < deadline) {
      try {
        if (zmq::poll(&item, 1, std::chrono::milliseconds(100)) > 0) return true;
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
      }
    }
    return false;
  }
  bool send(std::span<const std::byte> data, int64_t timeout_ms) override {
    const int64_t deadline = monotonic_ns() + timeout_ms * 1'000'000;
    while (true) {
      try {
        if (sock_.send(zmq::const_buffer(data.data(), data.size()), zmq::send_flags::none)) return true;
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
      }
      if (g_stop.load() || monotonic_ns() > deadline) return false;
    }
  }
  long close(int timeout_ms) override {
    sock_.set(zmq::sockopt::linger, timeout_ms);
    sock_.close();  // the context delivers what is queued, up to linger, when it terminates
    return 0;
  }

 private:
  zmq::socket_t sock_;
};

// ---- Kafka ---------------------------------------------------------------------------------
struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

void conf_set(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
    throw std::runtime_error("kafka option " + key + "=" + value + ": " + err);
}

rd_kafka_conf_t* make_conf(const Endpoint& ep, const TransportOptions& opts,
                           std::initializer_list<std::pair<const char*, const char*>> defaults) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    conf_set(conf, "bootstrap.servers", ep.address);
    conf_set(conf, "client.id", opts.client_id);
    for (auto& [k, v] : defaults) conf_set(conf, k, v);
    for (const auto& kv : opts.kafka_opts) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error("kafka option '" + kv + "' is not KEY=VALUE");
      conf_set(conf, kv.substr(0, eq), kv.substr(eq + 1));
    }
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  return conf;
}

KafkaHandle make_handle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);  // owns conf on success
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("kafka client: ") + err);
  }
  return KafkaHandle(rk);
}

// True once the partition leader answered; also leaves the topic's metadata cached, so the
// first message does not wait for a metadata round.
bool broker_answers(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  struct Release {
    rd_kafka_topic_t* t;
    ~Release() {
      if (t) rd_kafka_topic_destroy(t);
    }
  } release{rkt};
  while (!g_stop.load() && std::chrono::steady_clock::now() < deadline) {
    int64_t lo = 0, hi = 0;
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const bool has_leader = md->topic_cnt == 1 && md->topics[0].err == 0 && md->topics[0].partition_cnt > 0 &&
                              md->topics[0].partitions[0].leader >= 0;
      rd_kafka_metadata_destroy(md);
      if (has_leader &&
          rd_kafka_query_watermark_offsets(rk, topic.c_str(), 0, &lo, &hi, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR)
        return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class KafkaReceiver final : public Receiver {
 public:
  KafkaReceiver(const Endpoint& ep, const TransportOptions& opts) : topic_(ep.topic) {
    std::string group = "pipeline-" + ep.topic;
    rk_ = make_handle(RD_KAFKA_CONSUMER, make_conf(ep, opts,
                                                   {{"group.id", group.c_str()},
                                                    {"enable.auto.commit", "false"},
                                                    {"enable.auto.offset.store", "false"},
                                                    // The mock broker holds an empty fetch for the full
                                                    // wait (~10 ms at least, its timer tick) and is not
                                                    // woken by new data as a real broker is: keep it short.
                                                    {"fetch.wait.max.ms", "2"}}));
    rd_kafka_poll_set_consumer(rk_.get());
  }
  ~KafkaReceiver() override { rd_kafka_consumer_close(rk_.get()); }
  // A fixed assignment at the partition's first offset, looked up here: no group rebalance, no
  // offset-reset round later (librdkafka delays that one by ~0.5 s), nothing produced before
  // this consumer started is skipped, and fetching is under way when this returns.
  bool wait_ready(int timeout_ms) override {
    if (!broker_answers(rk_.get(), topic_, timeout_ms)) return false;
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk_.get(), topic_.c_str(), 0, &lo, &hi, timeout_ms);
    if (err) throw std::runtime_error(std::string("kafka offsets: ") + rd_kafka_err2str(err));
    rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, topic_.c_str(), 0)->offset = lo;
    err = rd_kafka_assign(rk_.get(), parts);
    rd_kafka_topic_partition_list_destroy(parts);
    if (err) throw std::runtime_error(std::string("kafka assign: ") + rd_kafka_err2str(err));
    return true;
  }
  bool receive(std::vector<std::byte>& out, int timeout_ms) override {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_.get(), timeout_ms);
    if (!m) return false;
    struct Free {
      rd_kafka_message_t* m;
      ~Free() { rd_kafka_message_destroy(m); }
    } guard{m};
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return false;
    if (m->err) throw std::runtime_error(std::string("kafka consume: ") + rd_kafka_message_errstr(m));
    auto* p = static_cast<const std::byte*>(m->payload);
    out.assign(p, p + m->len);
    return true;
  }

 private:
  std::string topic_;
  KafkaHandle rk_;
};

class KafkaSender final : public Sender {
 public:
  KafkaSender(const Endpoint& ep, const TransportOptions& opts) : topic_(ep.topic) {
    // linger.ms 0: send each message as it comes, as a request/response pipeline would.
    rd_kafka_conf_t* conf = make_conf(ep, opts, {{"linger.ms", "0"}});
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* self) {
      if (m->err) static_cast<KafkaSender*>(self)->failed_++;
    });
    rk_ = make_handle(RD_KAFKA_PRODUCER, conf);
  }
  bool wait_ready(int timeout_ms) override { return broker_answers(rk_.get(), topic_, timeout_ms); }
  bool send(std::span<const std::byte> data, int64_t timeout_ms) override {
    const int64_t deadline = monotonic_ns() + timeout_ms * 1'000'000;
    while (true) {
      rd_kafka_resp_err_t err = rd_kafka_producev(rk_.get(), RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(0),
                                                  RD_KAFKA_V_VALUE(const_cast<std::byte*>(data.data()), data.size()),
                                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        throw std::runtime_error(std::string("kafka produce: ") + rd_kafka_err2str(err));
      if (g_stop.load() || monotonic_ns() > deadline) return false;
      rd_kafka_poll(rk_.get(), 10);
    }
    rd_kafka_poll(rk_.get(), 0);
    return true;
  }
  long close(int timeout_ms) override {
    rd_kafka_flush(rk_.get(), timeout_ms);
    return rd_kafka_outq_len(rk_.get()) + failed_;
  }

 private:
  std::string topic_;
  KafkaHandle rk_;
  long failed_ = 0;
};

}  // namespace

void finish_transports() {
  zmq::context_t*& ctx = zmq_context_ptr();
  if (ctx) {
    ctx->close();  // waits for queued messages of closed sockets, up to their linger
    delete ctx;
    ctx = nullptr;
  }
}

std::unique_ptr<Receiver> open_receiver(const Endpoint& ep, const TransportOptions& opts) {
  try {
    if (ep.kind == Endpoint::Kind::zmq) return std::make_unique<ZmqReceiver>(ep);
    return std::make_unique<KafkaReceiver>(ep, opts);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("zmq bind " + ep.address + ": " + e.what());
  }
}

std::unique_ptr<Sender> open_sender(const Endpoint& ep, const TransportOptions& opts) {
  try {
    if (ep.kind == Endpoint::Kind::zmq) return std::make_unique<ZmqSender>(ep);
    return std::make_unique<KafkaSender>(ep, opts);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("zmq connect " + ep.address + ": " + e.what());
  }
}

}  // namespace pipeline
