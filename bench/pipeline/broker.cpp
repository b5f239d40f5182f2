// The Kafka broker of the pipeline: librdkafka's mock cluster (a Kafka-protocol broker over
// real TCP) with the pipeline's topics. It binds 127.0.0.1 of its own network namespace; the
// run script forwards it to the other hosts. Prints its bootstrap address, runs until SIGTERM.
#include "common.hpp"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <thread>

using namespace pipeline;

int main(int argc, char** argv) {
  std::vector<std::string> topics = {"requests", "prompts", "generations", "results"};
  int partitions = 1;
  std::string bootstrap_file;
  CLI::App app("Pipeline Kafka broker: librdkafka mock cluster with the pipeline topics", "pipeline_broker");
  app.add_option("--topics", topics, "topics to create")->delimiter(',');
  app.add_option("--partitions", partitions, "partitions per topic")->check(CLI::Range(1, 64));
  app.add_option("--bootstrap-file", bootstrap_file, "write the bootstrap address here once the topics exist");
  parse_or_exit(app, argc, argv);
  install_signal_handlers();

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "client.id", "pipeline-broker", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) fatal(std::string("kafka handle: ") + err);
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(rk, 1);
  if (!cluster) fatal("cannot start the mock cluster");
  for (const auto& t : topics) {
    rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(cluster, t.c_str(), partitions, 1);
    if (e) fatal("create topic " + t + ": " + rd_kafka_err2str(e));
  }
  const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(cluster);
  if (!bootstrap_file.empty()) write_text_file(bootstrap_file, bootstrap + "\n");
  std::cout << bootstrap << std::endl;

  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(rk);
  return 0;
}
