#!/usr/bin/env bash
# A Kafka consumer connected before the agent started, its broker's port named (--payload-port
# kafka=PORT): the agent first sees it *receive* (it waits on a long-poll Fetch), and the port, not
# that first direction, makes it a client's end, followed. Lab as kafka_messages.test.sh (kcat in
# the agent's cgroup domains, the test Kafka in h3 behind socat forwarders outside every domain).
#  - the consumer's end is `kafka` (no `kafka_broker_side` socket inside the domains);
#  - every produced batch pairs with its fetch by that consumer: records paired == messages.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/kafka_lab.sh"
TOPIC=early
COUNT=600
trap 'rc_=$?; set +e; remove_test_cgroups; (exit $rc_); cleanup' EXIT INT TERM
make_client_cgroups

lab_up 3
start_pipeline_kafka $TOPIC:1:1
sleep 0.5

# The consumer first: at the partition's end, each Fetch held by the broker up to 500 ms, so
# that most of its time is spent waiting to receive.
in_cgroup "$CG/consumer" ip netns exec "$LAB_NAME-h2" timeout 90 kcat -b 127.0.0.1:$PORT -C -t $TOPIC \
  -o end -q -c $COUNT -X fetch.wait.max.ms=500 -X topic.metadata.refresh.interval.ms=60000 \
  >"$WORK/consumed" 2>"$WORK/consumer.err" &
consumer=$!
sleep 3  # it has its partition and sits at its end

start_agent --domain producer=cgroup:"$CG/producer" --domain consumer=cgroup:"$CG/consumer" --only-domains \
  --window 5s --payload-bytes 8192 --payload-port "kafka=$PORT"
sleep 1.5  # several of the consumer's Fetch round trips seen by the agent

seq 1 $COUNT | sed 's/.*/k&:v&/' | in_cgroup "$CG/producer" ip netns exec "$LAB_NAME-h1" \
  kcat -b 127.0.0.1:$PORT -P -t $TOPIC -K: -X linger.ms=2 -X batch.num.messages=50 \
  2>"$WORK/producer.err" || fail "kcat -P failed: $(cat "$WORK/producer.err")"
wait $consumer || fail "kcat -C did not get $COUNT messages: $(wc -l <"$WORK/consumed") ($(cat "$WORK/consumer.err"))"
records() { status_json | jq -r '.payload.kafka.paired_records // 0'; }
wait_until 10 eval '[ "$(records)" -ge $COUNT ]' || true

status_json >"$WORK/status.json"
jq -c '{sockets: .payload.sockets, kafka: .payload.kafka}' "$WORK/status.json"
sockets=$(jq -c .payload.sockets "$WORK/status.json")
[ "$(jq -r .payload.sockets.kafka_broker_side "$WORK/status.json")" -eq 0 ] ||
  fail "a Kafka client's socket inside the domains taken for a broker's end: $sockets"
[ "$(jq -r .payload.sockets.kafka "$WORK/status.json")" -ge 2 ] || fail "expected the producer's and the consumer's ends: $sockets"
fetched=$(jq -r .payload.kafka.fetched_batches "$WORK/status.json")
records=$(jq -r .payload.kafka.paired_records "$WORK/status.json")
note "consumer connected before the agent: $fetched fetched batches, $records of $COUNT records paired"
[ "$fetched" -gt 0 ] || fail "the early consumer's fetches were not followed: $(jq -c .payload.kafka "$WORK/status.json")"
[ "$records" -eq $COUNT ] || fail "records paired $records, messages $COUNT"
note "ok"
