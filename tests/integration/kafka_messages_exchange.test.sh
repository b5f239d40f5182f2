#!/usr/bin/env bash
# Message-level Kafka spans across agents: the producer (kcat -P, lab host 1) and the consumer
# (kcat -C, lab host 2) are watched by two agents, one per host, joined by the exchange (a test
# Kafka on the root's loopback). The pipeline's Kafka runs in host 3, reached through socat
# forwarders (kafka_messages.test.sh's recipe). Each agent's domain is its kcat's cgroup
# (--only-domains), so neither agent sees the other's end: the produced batch halves leave the
# producer's agent, the fetched ones the consumer's, keyed by topic-partition, and the owner of
# that key's exchange partition pairs them.
#  - one clock: every produced batch pairs exactly once, summed over both agents (records summed
#    == messages produced by kcat), nothing pairs locally, zero negative kafka spans;
#  - a second consumer beside the producer (its cgroup, host 1): every batch pairs once per
#    consumer, locally or at an owner, never twice (local + exchange pairs == 2 x batches);
#  - the consumer's agent simulating a clock 1 s behind: >= 95 % of the new kafka spans negative
#    and health 0 for producer -> consumer on the agent(s) reporting it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
source "$(dirname "$0")/kafka_lab.sh"
PIPE_TOPIC=orders
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); remove_test_cgroups; cleanup' EXIT INT TERM
make_client_cgroups

lab_up 3
start_kafka 6  # the exchange's Kafka (root loopback)
start_pipeline_kafka $PIPE_TOPIC:2:1  # files $WORK/pipe.* (exchange_lib.sh uses bootstrap, kafka.fifo)

common=(--only-domains --window 5s --payload-bytes 8192 --enable-spans-api
  --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-config fetch.wait.max.ms=20
  --exchange-key-file "$EXCHANGE_KEY")
start_named_agent prod --host-name node1 --domain producer=cgroup:"$CG/producer" "${common[@]}"
start_named_agent cons --host-name node2 --domain consumer=cgroup:"$CG/consumer" "${common[@]}"
wait_exchange_settled 6 prod cons
for a in prod cons; do note "$a owns exchange partitions $(agent_status $a | jq -c '.exchange.partitions')"; done

KCAT_FAST=(-X fetch.wait.max.ms=5 -X fetch.error.backoff.ms=5 -X topic.metadata.refresh.interval.ms=60000)
round() {  # round COUNT KCAT_PRODUCER_ARGS...; LOCAL_CONSUMER=1: a second consumer in the producer's cgroup
  local count=$1; shift
  local local_consumer=
  if [ -n "${LOCAL_CONSUMER:-}" ]; then
    in_cgroup "$CG/producer" ip netns exec "$LAB_NAME-h1" timeout 60 kcat -b 127.0.0.1:$PORT -C -t $PIPE_TOPIC \
      -o end -q -c "$count" "${KCAT_FAST[@]}" >"$WORK/consumed.local" 2>"$WORK/consumer.local.err" &
    local_consumer=$!
  fi
  in_cgroup "$CG/consumer" ip netns exec "$LAB_NAME-h2" timeout 60 kcat -b 127.0.0.1:$PORT -C -t $PIPE_TOPIC \
    -o end -q -c "$count" "${KCAT_FAST[@]}" >"$WORK/consumed" 2>"$WORK/consumer.err" &
  local consumer=$!
  sleep 2  # the consumer has its partitions and sits at their end
  seq 1 "$count" | sed 's/.*/k&:v&/' | in_cgroup "$CG/producer" ip netns exec "$LAB_NAME-h1" \
    kcat -b 127.0.0.1:$PORT -P -t $PIPE_TOPIC -K: -X linger.ms=2 -X batch.num.messages=50 "$@" \
    2>"$WORK/producer.err" || fail "kcat -P failed: $(cat "$WORK/producer.err")"
  wait $consumer || fail "kcat -C did not get $count messages: $(wc -l <"$WORK/consumed") ($(cat "$WORK/consumer.err"))"
  [ "$(wc -l <"$WORK/consumed")" -eq "$count" ] || fail "consumed $(wc -l <"$WORK/consumed") of $count"
  if [ -n "$local_consumer" ]; then
    wait $local_consumer || fail "the local kcat -C did not get $count messages ($(cat "$WORK/consumer.local.err"))"
  fi
}
# sum FIELD_EXPR: a jq expression over each agent's status, summed over both agents
sum() {
  local a total=0 n
  for a in prod cons; do
    n=$(agent_status $a | jq -r "$1 // 0")
    total=$((total + n))
  done
  echo $total
}
kafka_pair() { echo "[.pairs[]? | select(.src==\"producer\" and .dst==\"consumer\" and .transport==\"kafka\")][0].$1"; }
produced() { agent_status prod | jq -r '.payload.kafka.produced_batches'; }
settled() {  # every produced batch the producer's agent saw has paired on some owner
  [ "$(sum '.exchange.kafka.pairs')" -ge "$1" ]
}

# Phase 1: one clock; plain, lz4, idempotent.
round 2000
round 1000 -z lz4
round 1000 -X enable.idempotence=true
sleep 0.5
batches=$(produced)
wait_until 15 settled "$batches" || true
for a in prod cons; do note "$a: payload $(agent_status $a | jq -c '.payload.kafka') exchange $(agent_status $a | jq -c '.exchange.kafka')"; done
fetched=$(agent_status cons | jq -r '.payload.kafka.fetched_batches')
local_pairs=$(sum '.payload.kafka.pairs')
pairs=$(sum '.exchange.kafka.pairs')
records=$(sum '.exchange.kafka.paired_records')
spans=$(sum "$(kafka_pair spans)")
negative=$(sum "$(kafka_pair negative_spans)")
note "4000 messages: $batches produced batches, $fetched fetched, $pairs pairs across hosts ($records records), $spans spans, $negative negative"
note "pairing rate $pairs/$batches; pairing delay (owner) p50/p99: $(for a in prod cons; do agent_status $a | jq -c '.exchange.pairing_delay_seconds'; done | tr '\n' ' ')"
[ "$batches" -gt 3 ] || fail "expected several produced batches, got $batches"
[ "$local_pairs" -eq 0 ] || fail "$local_pairs batches paired locally: neither agent sees both ends"
[ "$(agent_status prod | jq -r '.exchange.kafka.halves_shipped')" -eq "$batches" ] || fail "the producer's agent did not ship every produced half"
[ "$(agent_status cons | jq -r '.exchange.kafka.halves_shipped')" -eq "$fetched" ] || fail "the consumer's agent did not ship every fetched half"
[ "$pairs" -eq "$batches" ] || fail "every produced batch should pair once: $pairs pairs of $batches batches"
[ "$fetched" -eq "$pairs" ] || fail "every fetched batch should pair: $fetched fetched, $pairs pairs"
[ "$records" -eq 4000 ] || fail "paired batches hold $records records, kcat produced 4000"
[ "$spans" -eq "$pairs" ] || fail "kafka spans $spans != pairs $pairs"
[ "$negative" -eq 0 ] || fail "$negative negative kafka spans with one shared clock"
[ "$(sum '.exchange.kafka.unkeyed')" -eq 0 ] || fail "unkeyed batch halves"
topics=$(for a in prod cons; do curl -s "${AGENT_URLS[$a]}/api/v1/spans?limit=1000" | jq -r '.spans[] | select(.transport=="kafka") | .topic'; done | sort -u)
[ "$topics" = $PIPE_TOPIC ] || fail "topics of the kafka spans in /api/v1/spans: '$topics'"

# Phase 2: the batches are also read by a consumer beside the producer. Its fetches pair on the
# producer's agent (producer -> producer) when the produced half is already there, else they are
# shipped and pair at an owner: once per consumer either way.
b0=$(produced); local0=$(sum '.payload.kafka.pairs'); remote0=$(sum '.exchange.kafka.pairs')
records0=$(( $(sum '.payload.kafka.paired_records') + $(sum '.exchange.kafka.paired_records') ))
LOCAL_CONSUMER=1 round 1000
sleep 0.5
new_batches=$(( $(produced) - b0 ))
both() { [ $(( $(sum '.payload.kafka.pairs') - local0 + $(sum '.exchange.kafka.pairs') - remote0 )) -ge $((2 * new_batches)) ]; }
wait_until 15 both || true
local_new=$(( $(sum '.payload.kafka.pairs') - local0 )); remote_new=$(( $(sum '.exchange.kafka.pairs') - remote0 ))
records_new=$(( $(sum '.payload.kafka.paired_records') + $(sum '.exchange.kafka.paired_records') - records0 ))
note "two consumers (h1 beside the producer, h2): $new_batches batches, $local_new paired locally, $remote_new at owners, $records_new records"
[ $((local_new + remote_new)) -eq $((2 * new_batches)) ] || fail "each batch should pair once per consumer: $local_new + $remote_new for $new_batches batches"
[ "$records_new" -eq 2000 ] || fail "paired records $records_new, expected 2 x 1000"
spans=$(sum "$(kafka_pair spans)"); negative=$(sum "$(kafka_pair negative_spans)"); pairs=$(sum '.exchange.kafka.pairs')

# Phase 3: the consumer's agent simulates its clock 1 s behind.
"$SKEWSCOPE" simulate consumer=-1s --control-socket "$WORK/cons.sock" >/dev/null
before=$spans; neg_before=$negative; pairs_before=$pairs
batches_before=$(produced)
round 2000
sleep 0.5
wait_until 15 settled $((pairs_before + $(produced) - batches_before)) || true
new=$(( $(sum "$(kafka_pair spans)") - before ))
neg=$(( $(sum "$(kafka_pair negative_spans)") - neg_before ))
note "consumer at -1s: $neg of $new new kafka spans negative ($(( $(produced) - batches_before )) batches produced)"
[ "$new" -eq $(( $(produced) - batches_before )) ] || fail "every new batch should pair once: $new spans"
[ "$new" -gt 0 ] && [ $((neg * 100)) -ge $((new * 95)) ] || fail "expected >= 95 % of the kafka spans negative"
judged=0
for a in prod cons; do
  # The agents whose window holds this phase's spans of the pair judge it; one that paired only
  # earlier phases' (cumulative spans, an empty window on a slow machine) has no health to give.
  [ "$(agent_status $a | jq -r "$(kafka_pair window_spans) // 0")" -gt 0 ] || continue
  judged=$((judged + 1))
  h=$(agent_status $a | jq -r "$(kafka_pair health)")
  note "$a reports producer->consumer kafka health $h, state $(agent_status $a | jq -r "$(kafka_pair state)")"
  [ "$h" = 0 ] || fail "$a: producer->consumer kafka health should be 0, is $h"
done
[ "$judged" -ge 1 ] || fail "no agent holds the producer->consumer kafka spans in its window"
note "ok"
