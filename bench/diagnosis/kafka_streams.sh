# Sourced by corpus.sh (after bench/lib.sh and lab_up): Kafka traffic between lab hosts 1 and 2,
# one stream each way through a broker in lab host 5, which is no domain of any agent.
#
# The test broker (tests/tools/test_kafka, librdkafka's mock cluster) listens on 127.0.0.1 of its
# namespace and names 127.0.0.1:PORT in its metadata. A socat in host 5 forwards host 5's address to
# it; in hosts 1 and 2, a DNAT rule sends their clients' connections to 127.0.0.1:PORT on to
# host 5 (route_localnet lets a 127.0.0.1-sourced packet leave, SNAT gives it the host's address).
# No forwarder runs inside a domain: its sockets would be a second producer or consumer there.
# The agent pairs a record batch by its content (KafkaBatchMatcher), not by the socket's
# addresses, so the translated connections need no --nat-conntrack.
#
# kafka_streams_up RATE: RATE messages/s each way (kcat, one message per batch: linger.ms=2);
# host 1 produces to partition 0, which host 2 consumes, and host 2 to partition 1, for host 1.
# Sets KAFKA_PORT (for --payload-port kafka=PORT).
kafka_streams_up() {
  local rate=$1 tool=$BUILD/tests/tools/test_kafka h
  command -v kcat >/dev/null || die "kcat is not installed (scripts/setup installs it)"
  [ -x "$tool" ] || die "no $tool"
  in_host 5 "$tool" --brokers 1 --topic corpus:2:1 --bootstrap-file "$WORK/corpus-kafka.bootstrap" \
    --fifo "$WORK/corpus-kafka.fifo" >"$WORK/corpus-kafka.out" 2>"$WORK/corpus-kafka.err" &
  BACKGROUND+=("$!")
  wait_until 10 test -s "$WORK/corpus-kafka.bootstrap" || die "the test broker printed no bootstrap"
  KAFKA_PORT=$(sed 's/.*://' "$WORK/corpus-kafka.bootstrap")
  in_host 5 socat "TCP-LISTEN:$KAFKA_PORT,bind=10.77.0.5,fork,reuseaddr,nodelay" "TCP:127.0.0.1:$KAFKA_PORT,nodelay" \
    2>/dev/null &
  BACKGROUND+=("$!")
  for h in 1 2; do
    in_host "$h" sysctl -qw net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.eth0.route_localnet=1 ||
      die "route_localnet in host $h"
    in_host "$h" iptables -t nat -A OUTPUT -p tcp -d 127.0.0.1 --dport "$KAFKA_PORT" \
      -j DNAT --to-destination "10.77.0.5:$KAFKA_PORT" || die "DNAT rule in host $h"
    in_host "$h" iptables -t nat -A POSTROUTING -p tcp -d 10.77.0.5 --dport "$KAFKA_PORT" \
      -j SNAT --to-source "10.77.0.$h" || die "SNAT rule in host $h"
  done
  local fast=(-X fetch.wait.max.ms=5 -X fetch.error.backoff.ms=5 -X topic.metadata.refresh.interval.ms=60000)
  for pc in "1 0 2" "2 1 1"; do
    local producer partition consumer
    read -r producer partition consumer <<<"$pc"
    in_host "$consumer" kcat -b "127.0.0.1:$KAFKA_PORT" -C -t corpus -p "$partition" -o end -q "${fast[@]}" \
      >/dev/null 2>"$WORK/corpus-kafka-consumer-$consumer.err" &
    BACKGROUND+=("$!")
    # One message every 1/RATE s, paced against the monotonic clock by one process.
    in_host "$producer" python3 -u -c '
import sys, time
period, due, n = 1 / float(sys.argv[1]), time.monotonic(), 0
while True:
    n += 1
    print(f"m {n}", flush=True)
    due += period
    time.sleep(max(0.0, due - time.monotonic()))' "$rate" |
      in_host "$producer" kcat -b "127.0.0.1:$KAFKA_PORT" -P -t corpus -p "$partition" -X linger.ms=2 -q \
        2>"$WORK/corpus-kafka-producer-$producer.err" &
    BACKGROUND+=("$!")
  done
}

# kafka_spans: the spans of every Kafka pair in the agent's status now (0 without any).
kafka_spans() {
  curl -sf --max-time 2 "$AGENT_URL/api/v1/status" |
    jq '[.pairs[] | select(.transport == "kafka") | .spans // 0] | add // 0' 2>/dev/null || echo 0
}
