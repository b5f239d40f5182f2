// Records real protocol bytes for the parser tests (tests/data/protocols): librdkafka clients
// against librdkafka's mock cluster, and libzmq sockets, each connection through a recording relay
// on 127.0.0.1 (recording_relay.hpp). Writes the .cap files and a manifest of what was sent.
//
//   protocol_recorder kafka|zmtp --out DIR [--read-size N] [--seed S]
//   protocol_recorder zmtp2 --out DIR --jeromq-classes DIR   (ZMTP/2.0: JeroMQ, see record_zmtp2)
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <sys/wait.h>
#include <zmq.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "recording_relay.hpp"

namespace {

using skewscope::tools::RecordingRelay;

std::uint16_t g_relay_port = 0;

// librdkafka's connect hook: every broker connection goes through the relay (the mock cluster
// advertises its own port, so without this only the bootstrap connection would be recorded).
int connect_via_relay(int fd, const sockaddr*, int, const char*, void*) {
  sockaddr_in a = RecordingRelay::loopback(g_relay_port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) return errno;
  return 0;
}

void set(rd_kafka_conf_t* c, const char* k, const std::string& v) {
  char err[256];
  if (rd_kafka_conf_set(c, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
    throw std::runtime_error(std::string(k) + ": " + err);
}

int g_delivered = 0;
int g_failed = 0;
void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) { ++(m->err ? g_failed : g_delivered); }

struct ProducerRun {
  std::string topic;
  int partitions;
  int messages;
  bool idempotent;
  std::string compression;
  std::string acks;
};

void produce(const std::string& bootstrap, const ProducerRun& run, std::mt19937& rng) {
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  set(c, "bootstrap.servers", bootstrap);
  set(c, "enable.idempotence", run.idempotent ? "true" : "false");
  set(c, "compression.codec", run.compression);
  set(c, "acks", run.acks);
  set(c, "linger.ms", "20");  // several partitions' batches per Produce request
  rd_kafka_conf_set_connect_cb(c, connect_via_relay);
  rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
  char err[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  g_delivered = g_failed = 0;
  std::uniform_int_distribution<int> size(10, 400);
  for (int i = 0; i < run.messages; ++i) {
    // Mostly small values, a few larger than a relay read so batches span reads.
    std::string value(i % 97 == 5 ? 6000 : static_cast<std::size_t>(size(rng)), 'a' + static_cast<char>(i % 26));
    const std::string key = "k" + std::to_string(i);
    for (;;) {
      const auto e =
          rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(run.topic.c_str()), RD_KAFKA_V_PARTITION(i % run.partitions),
                            RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(value.data(), value.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) throw std::runtime_error(rd_kafka_err2str(e));
      rd_kafka_poll(rk, 10);
    }
    if (i % 50 == 49) rd_kafka_poll(rk, 30);  // spread the messages over several requests
  }
  rd_kafka_flush(rk, 15000);
  rd_kafka_destroy(rk);
  if (g_delivered != run.messages || g_failed != 0)
    throw std::runtime_error(run.topic + ": delivered " + std::to_string(g_delivered) + " of " +
                             std::to_string(run.messages));
}

int consume(const std::string& bootstrap, const std::vector<ProducerRun>& runs, int expected) {
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  set(c, "bootstrap.servers", bootstrap);
  set(c, "group.id", "skewscope.recorder");
  set(c, "enable.auto.commit", "false");
  // Small fetches: many Fetch responses, some ending in a batch cut short by the size limit.
  set(c, "message.max.bytes", "10000");
  set(c, "fetch.max.bytes", "20000");
  set(c, "max.partition.fetch.bytes", "8192");
  rd_kafka_conf_set_connect_cb(c, connect_via_relay);
  char err[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(16);
  for (const auto& r : runs)
    for (int p = 0; p < r.partitions; ++p)
      rd_kafka_topic_partition_list_add(parts, r.topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  int got = 0;
  for (int idle = 0; got < expected && idle < 100;) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (!m) {
      ++idle;
      continue;
    }
    if (!m->err) ++got;
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got;
}

int record_kafka(const std::string& out, std::size_t read_size, unsigned seed) {
  std::mt19937 rng(seed);
  char err[256];
  rd_kafka_t* mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), err, sizeof err);
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(mock_rk, 1);
  const std::vector<ProducerRun> runs = {
      {"rec.idempotent", 3, 300, true, "none", "all"},
      {"rec.lz4", 3, 300, false, "lz4", "all"},
      {"rec.acks1", 2, 120, false, "none", "1"},
  };
  for (const auto& r : runs) rd_kafka_mock_topic_create(mc, r.topic.c_str(), r.partitions, 1);
  const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mc);
  const auto port = static_cast<std::uint16_t>(std::stoi(bootstrap.substr(bootstrap.rfind(':') + 1)));
  RecordingRelay relay(port, out + "/kafka-produce-idempotent", read_size);
  g_relay_port = relay.port();
  std::ofstream manifest(out + "/kafka-manifest.txt");
  manifest << "# topic partitions messages idempotent compression acks (librdkafka " << rd_kafka_version_str()
           << ", mock cluster)\n";
  int total = 0;
  for (const auto& r : runs) {
    relay.set_prefix(out + "/kafka-produce-" + r.topic.substr(4));
    produce(bootstrap, r, rng);
    manifest << "produce " << r.topic << ' ' << r.partitions << ' ' << r.messages << ' ' << r.idempotent << ' '
             << r.compression << ' ' << r.acks << '\n';
    total += r.messages;
  }
  relay.set_prefix(out + "/kafka-consume");
  const int consumed = consume(bootstrap, runs, total);
  manifest << "consume " << consumed << '\n';
  relay.stop();
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(mock_rk);
  std::printf("kafka: produced %d, consumed %d\n", total, consumed);
  return consumed == total ? 0 : 1;
}

std::uint16_t bound_port(void* socket) {
  char endpoint[256];
  size_t len = sizeof endpoint;
  zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, endpoint, &len);
  const std::string e(endpoint);
  return static_cast<std::uint16_t>(std::stoi(e.substr(e.rfind(':') + 1)));
}

void zsend(void* s, const std::string& body, int flags) {
  if (zmq_send(s, body.data(), body.size(), flags) < 0) throw std::runtime_error(zmq_strerror(zmq_errno()));
}

// Receives one message; returns its frame count.
int zrecv(void* s) {
  int frames = 0;
  int more = 0;
  do {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, s, 0) < 0) throw std::runtime_error(zmq_strerror(zmq_errno()));
    ++frames;
    more = zmq_msg_more(&m);
    zmq_msg_close(&m);
  } while (more);
  return frames;
}

int record_zmtp(const std::string& out, std::size_t read_size, unsigned seed) {
  std::mt19937 rng(seed);
  void* ctx = zmq_ctx_new();
  std::ofstream manifest(out + "/zmtp-manifest.txt");
  manifest << "# pattern messages frames (libzmq " << ZMQ_VERSION_MAJOR << '.' << ZMQ_VERSION_MINOR << '.'
           << ZMQ_VERSION_PATCH << ")\n";
  {  // PUSH → PULL: many small messages in a tight loop (coalesced per write), some multipart,
     // some long frames (> 255 bytes), one larger than a relay read.
    void* pull = zmq_socket(ctx, ZMQ_PULL);
    zmq_bind(pull, "tcp://127.0.0.1:*");
    RecordingRelay relay(bound_port(pull), out + "/zmtp-pushpull", read_size);
    void* push = zmq_socket(ctx, ZMQ_PUSH);
    zmq_connect(push, ("tcp://127.0.0.1:" + std::to_string(relay.port())).c_str());
    const int messages = 1500;
    int frames_sent = 0;
    std::uniform_int_distribution<int> size(0, 120);
    std::thread sender([&] {
      for (int i = 0; i < messages; ++i) {
        const int parts = i % 10 == 3 ? 3 : 1;
        for (int p = 0; p < parts; ++p) {
          std::size_t n = static_cast<std::size_t>(size(rng));
          if (i % 250 == 7) n = 300;
          if (i == 700) n = 9000;
          zsend(push, std::string(n, 'x'), p + 1 < parts ? ZMQ_SNDMORE : 0);
          ++frames_sent;
        }
      }
    });
    int frames_got = 0;
    for (int i = 0; i < messages; ++i) frames_got += zrecv(pull);
    sender.join();
    manifest << "pushpull " << messages << ' ' << frames_got << '\n';
    int zero = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(push);
    zmq_close(pull);
    relay.stop();
    if (frames_got != frames_sent) return 1;
  }
  {  // REQ → REP: round trips; REQ puts an empty delimiter frame before each request.
    void* rep = zmq_socket(ctx, ZMQ_REP);
    zmq_bind(rep, "tcp://127.0.0.1:*");
    RecordingRelay relay(bound_port(rep), out + "/zmtp-reqrep", read_size);
    void* req = zmq_socket(ctx, ZMQ_REQ);
    zmq_connect(req, ("tcp://127.0.0.1:" + std::to_string(relay.port())).c_str());
    const int rounds = 300;
    std::uniform_int_distribution<int> size(1, 80);
    std::thread server([&] {
      for (int i = 0; i < rounds; ++i) {
        zrecv(rep);
        zsend(rep, std::string(static_cast<std::size_t>(i % 40), 'r'), 0);
      }
    });
    for (int i = 0; i < rounds; ++i) {
      zsend(req, std::string(static_cast<std::size_t>(size(rng)), 'q'), 0);
      zrecv(req);
    }
    server.join();
    manifest << "reqrep " << rounds << " -\n";
    zmq_close(req);
    zmq_close(rep);
    relay.stop();
  }
  zmq_ctx_term(ctx);
  std::printf("zmtp: recorded\n");
  return 0;
}

// ZMTP/2.0 with JeroMQ (tests/tools/jeromq/JeromqPeer.java, compiled into `classes`): JeroMQ
// 0.3.6 speaks only ZMTP/2.0, and libzmq 4 downgrades to it. The JeroMQ end runs as a child
// process; its messages follow JeromqPeer's --varied sizes, and so do libzmq's here.
class JeromqProcess {
 public:
  JeromqProcess(const std::string& classes, const std::string& args) {
    const std::string cmd = "exec java -cp /usr/share/java/jeromq.jar:" + classes + " JeromqPeer " + args;
    pipe_ = popen(cmd.c_str(), "r");
    if (!pipe_) throw std::runtime_error("cannot start " + cmd);
  }
  ~JeromqProcess() {
    if (pipe_) pclose(pipe_);
  }
  JeromqProcess(const JeromqProcess&) = delete;
  JeromqProcess& operator=(const JeromqProcess&) = delete;
  // The next line it prints ("port P", then its summary).
  std::string line() {
    char buf[256];
    if (!fgets(buf, sizeof buf, pipe_)) throw std::runtime_error("JeromqPeer ended without a word");
    std::string l(buf);
    while (!l.empty() && l.back() == '\n') l.pop_back();
    return l;
  }
  std::uint16_t port() {
    const std::string l = line();
    if (l.rfind("port ", 0) != 0) throw std::runtime_error("JeromqPeer: expected its port, got: " + l);
    return static_cast<std::uint16_t>(std::stoi(l.substr(5)));
  }
  // Its exit status (0: it moved every message).
  int wait() {
    std::string rest;
    while (fgets(buf_, sizeof buf_, pipe_)) rest += buf_;
    const int st = pclose(pipe_);
    pipe_ = nullptr;
    std::printf("  jeromq: %s", rest.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }

 private:
  FILE* pipe_ = nullptr;
  char buf_[256];
};

int varied_frames(int i) { return i % 10 == 3 ? 3 : 1; }
std::size_t varied_size(int i) {
  if (i == 700) return 9000;
  if (i % 250 == 7) return 300;
  return static_cast<std::size_t>((i * 37) % 121);
}
int varied_total_frames(int messages) {
  int n = 0;
  for (int i = 0; i < messages; ++i) n += varied_frames(i);
  return n;
}

int record_zmtp2(const std::string& out, const std::string& classes, std::size_t read_size) {
  if (classes.empty()) throw std::runtime_error("zmtp2 needs --jeromq-classes (JeromqPeer.class)");
  const int messages = 1500;
  const std::string count = " --count " + std::to_string(messages) + " --varied";
  std::ofstream manifest(out + "/zmtp-v2-manifest.txt");
  manifest << "# pattern messages frames (JeroMQ 0.3.6, libzmq " << ZMQ_VERSION_MAJOR << '.' << ZMQ_VERSION_MINOR << '.'
           << ZMQ_VERSION_PATCH << "): sender -> receiver, PUSH -> PULL\n";
  int failures = 0;
  {  // JeroMQ -> JeroMQ: ZMTP/2.0 both ways.
    JeromqProcess pull(classes, "pull --bind tcp://127.0.0.1:*" + count);
    RecordingRelay relay(pull.port(), out + "/zmtp-v2-jeromq", read_size);
    JeromqProcess push(classes, "push --connect tcp://127.0.0.1:" + std::to_string(relay.port()) + count);
    failures += push.wait() != 0;
    failures += pull.wait() != 0;
    relay.stop();
    manifest << "jeromq " << messages << ' ' << varied_total_frames(messages) << '\n';
  }
  void* ctx = zmq_ctx_new();
  {  // libzmq PUSH -> JeroMQ PULL: libzmq announces 3, reads 1, and continues in 2.0.
    JeromqProcess pull(classes, "pull --bind tcp://127.0.0.1:*" + count);
    RecordingRelay relay(pull.port(), out + "/zmtp-v2-downgrade-push", read_size);
    void* push = zmq_socket(ctx, ZMQ_PUSH);
    zmq_connect(push, ("tcp://127.0.0.1:" + std::to_string(relay.port())).c_str());
    for (int i = 0; i < messages; ++i)
      for (int p = 0; p < varied_frames(i); ++p)
        zsend(push, std::string(varied_size(i), 'x'), p + 1 < varied_frames(i) ? ZMQ_SNDMORE : 0);
    failures += pull.wait() != 0;
    zmq_close(push);
    relay.stop();
    manifest << "downgrade-push " << messages << ' ' << varied_total_frames(messages) << '\n';
  }
  {  // JeroMQ PUSH -> libzmq PULL: the downgrade is on the receiver's greeting (direction 1).
    void* pull = zmq_socket(ctx, ZMQ_PULL);
    zmq_bind(pull, "tcp://127.0.0.1:*");
    RecordingRelay relay(bound_port(pull), out + "/zmtp-v2-downgrade-pull", read_size);
    JeromqProcess push(classes, "push --connect tcp://127.0.0.1:" + std::to_string(relay.port()) + count);
    int frames_got = 0;
    for (int i = 0; i < messages; ++i) frames_got += zrecv(pull);
    failures += push.wait() != 0;
    failures += frames_got != varied_total_frames(messages);
    zmq_close(pull);
    relay.stop();
    manifest << "downgrade-pull " << messages << ' ' << frames_got << '\n';
  }
  zmq_ctx_term(ctx);
  std::printf("zmtp2: recorded, %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Records Kafka (librdkafka mock cluster) and ZMTP (libzmq) bytes through a relay"};
  std::string what;
  std::string out;
  std::size_t read_size = 4096;
  unsigned seed = 1;
  std::string jeromq_classes;
  app.add_option("what", what, "kafka | zmtp | zmtp2 (JeroMQ)")
      ->required()
      ->check(CLI::IsMember({"kafka", "zmtp", "zmtp2"}));
  app.add_option("--out", out, "directory for the .cap files and the manifest")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--read-size", read_size, "bytes per relay read (one recorded chunk at most)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--seed", seed, "message sizes");
  app.add_option("--jeromq-classes", jeromq_classes, "zmtp2: directory holding JeromqPeer.class")
      ->check(CLI::ExistingDirectory);
  CLI11_PARSE(app, argc, argv);
  try {
    if (what == "zmtp2") return record_zmtp2(out, jeromq_classes, read_size);
    return what == "kafka" ? record_kafka(out, read_size, seed) : record_zmtp(out, read_size, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "protocol_recorder: %s\n", e.what());
    return 1;
  }
}
