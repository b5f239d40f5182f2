# Sourced after lib.sh by the message-level Kafka tests: the Kafka clients' cgroups (the agent's
# domains) and the pipeline's Kafka in lab host 3, reached from hosts 1 and 2 through socat
# forwarders on 127.0.0.1 (the pipeline's recipe). The forwarders and the broker are outside
# every domain: their sockets would otherwise be a second producer or consumer.
KAFKA_TOOL=$BUILD/tests/tools/test_kafka
command -v kcat >/dev/null || fail "kcat is not installed (scripts/setup installs it)"
command -v socat >/dev/null || fail "socat is not installed"
# The clients' cgroups, under lib.sh's CG (remove_test_cgroups removes them).
make_client_cgroups() { make_test_cgroups producer consumer; }

# start_pipeline_kafka TOPIC:PARTITIONS:RF: one broker in host 3 (files $WORK/pipe.*), its port
# forwarded; sets BROKER (host 3's address) and PORT (127.0.0.1:PORT in hosts 1 and 2).
start_pipeline_kafka() {
  BROKER=10.77.0.3
  in_host 3 "$KAFKA_TOOL" --brokers 1 --topic "$1" --bootstrap-file "$WORK/pipe.bootstrap" \
    --fifo "$WORK/pipe.fifo" >"$WORK/pipe.out" 2>"$WORK/pipe.err" &
  BACKGROUND+=($!)
  wait_until 10 test -s "$WORK/pipe.bootstrap" || fail "the pipeline's test_kafka printed no bootstrap"
  PORT=$(sed 's/.*://' "$WORK/pipe.bootstrap")
  in_host 3 socat "TCP-LISTEN:$PORT,bind=$BROKER,fork,reuseaddr,nodelay" "TCP:127.0.0.1:$PORT,nodelay" 2>/dev/null &
  BACKGROUND+=($!)
  local h
  for h in 1 2; do
    in_host $h socat "TCP-LISTEN:$PORT,bind=127.0.0.1,fork,reuseaddr,nodelay" "TCP:$BROKER:$PORT,nodelay" 2>/dev/null &
    BACKGROUND+=($!)
  done
}
