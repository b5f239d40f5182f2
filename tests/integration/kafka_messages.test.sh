#!/usr/bin/env bash
# Message-level Kafka spans (--payload-bytes): producer -> consumer across the broker, per record
# batch, with third-party clients. Lab: h1 producer (kcat -P), h2 consumer (kcat -C), h3 the test
# Kafka (loopback-only mock) reached through socat forwarders, the pipeline's recipe. The kcat
# processes run in their own cgroups, which are the agent's domains: the forwarders and the broker
# are outside every domain (their sockets would otherwise be a second producer/consumer).
#  - one clock: every produced batch pairs once with its fetch (records summed == messages
#    produced by kcat), zero negative spans, topic in /api/v1/spans;
#  - lz4-compressed batches, an idempotent producer and two partitions per request pair too;
#  - consumer 1 s behind: >= 95 % of the new kafka spans negative, health 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/kafka_lab.sh"
TOPIC=orders
trap 'rc_=$?; set +e; remove_test_cgroups; (exit $rc_); cleanup' EXIT INT TERM
make_client_cgroups

lab_up 3
start_pipeline_kafka $TOPIC:2:1
sleep 0.5

start_agent --domain producer=cgroup:"$CG/producer" --domain consumer=cgroup:"$CG/consumer" --only-domains \
  --window 5s --payload-bytes 8192 --enable-spans-api

kafka_field() {  # kafka_field SRC DST FIELD
  status_json | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="kafka")][0][$f] // 0'
}
KCAT_FAST=(-X fetch.wait.max.ms=5 -X fetch.error.backoff.ms=5 -X topic.metadata.refresh.interval.ms=60000)

# round COUNT KCAT_PRODUCER_ARGS...: a consumer waiting for COUNT messages, then a producer of
# COUNT keyed messages (keys spread them over both partitions).
round() {
  local count=$1; shift
  in_cgroup "$CG/consumer" ip netns exec "$LAB_NAME-h2" timeout 60 kcat -b 127.0.0.1:$PORT -C -t $TOPIC \
    -o end -q -c "$count" "${KCAT_FAST[@]}" >"$WORK/consumed" 2>"$WORK/consumer.err" &
  local consumer=$!
  sleep 2  # the consumer has its partitions and sits at their end
  seq 1 "$count" | sed 's/.*/k&:v&/' | in_cgroup "$CG/producer" ip netns exec "$LAB_NAME-h1" \
    kcat -b 127.0.0.1:$PORT -P -t $TOPIC -K: -X linger.ms=2 -X batch.num.messages=50 "$@" \
    2>"$WORK/producer.err" || fail "kcat -P failed: $(cat "$WORK/producer.err")"
  wait $consumer || fail "kcat -C did not get $count messages: $(wc -l <"$WORK/consumed") ($(cat "$WORK/consumer.err"))"
  [ "$(wc -l <"$WORK/consumed")" -eq "$count" ] || fail "consumed $(wc -l <"$WORK/consumed") of $count"
  sleep 0.5  # the agent reads payloads every 20 ms
}
payload() { status_json | jq -r ".payload.$1"; }
records_paired() { payload kafka.paired_records; }

# Phase 1: plain, lz4, idempotent.
round 2000
round 1000 -z lz4
round 1000 -X enable.idempotence=true
status_json >"$WORK/status1.json"
jq -c .payload "$WORK/status1.json"
produced=$(jq -r .payload.kafka.produced_batches "$WORK/status1.json")
fetched=$(jq -r .payload.kafka.fetched_batches "$WORK/status1.json")
pairs=$(jq -r .payload.kafka.pairs "$WORK/status1.json")
records=$(jq -r .payload.kafka.paired_records "$WORK/status1.json")
spans=$(kafka_field producer consumer spans)
note "kafka: 4000 messages in $produced produced batches, $fetched fetched, $pairs pairs ($records records), $spans spans"
[ "$produced" -gt 3 ] || fail "expected several produced batches, got $produced"
[ "$pairs" -eq "$produced" ] || fail "every produced batch should pair once: $pairs pairs of $produced batches"
[ "$fetched" -eq "$pairs" ] || fail "every fetched batch should pair: $fetched fetched, $pairs pairs"
[ "$records" -eq 4000 ] || fail "paired batches hold $records records, kcat produced 4000"
[ "$spans" -eq "$pairs" ] || fail "kafka spans $spans != pairs $pairs"
# With --only-domains the kernel side classifies and copies only the domains' sockets: the
# forwarders' and the broker's are outside (never classified, never copied), and other processes'
# traffic on this machine (ZMTP of other tests) is not counted as ours.
sockets=$(jq -c .payload.sockets "$WORK/status1.json")
[ "$(jq -r .payload.sockets.outside_domains "$WORK/status1.json")" -gt 0 ] || fail "no socket outside the domains: $sockets"
[ "$(jq -r .payload.sockets.zmtp "$WORK/status1.json")" -eq 0 ] || fail "ZMTP sockets in a Kafka-only lab: $sockets"
[ "$(jq -r .payload.outside_domains "$WORK/status1.json")" -eq 0 ] || fail "records outside the domains were copied"
# kcat's connections start after the agent: every one is classified from its first bytes.
[ "$(jq -r .payload.classified_mid_stream "$WORK/status1.json")" -eq 0 ] || fail "a socket classified mid-stream: $sockets"
[ "$(kafka_field producer consumer negative_spans)" -eq 0 ] || fail "negative kafka span with one shared clock"
min=$(kafka_field producer consumer min_span_seconds)
note "end-to-end min span (producer send -> consumer receive) $min s"
topic=$(curl -s "$AGENT_URL/api/v1/spans?limit=1000" | jq -r '[.spans[] | select(.transport=="kafka")][0].topic')
[ "$topic" = $TOPIC ] || fail "topic of a kafka span in /api/v1/spans: '$topic'"

# Phase 2: the consumer's clock 1 s behind: a fetched batch looks received before it was produced.
"$SKEWSCOPE" simulate consumer=-1s --control-socket "$CONTROL" >/dev/null
before=$(kafka_field producer consumer spans); neg_before=$(kafka_field producer consumer negative_spans)
round 2000
new=$(( $(kafka_field producer consumer spans) - before ))
neg=$(( $(kafka_field producer consumer negative_spans) - neg_before ))
note "consumer at -1s: $neg of $new kafka spans negative, health $(kafka_field producer consumer health)"
[ "$new" -gt 0 ] && [ $((neg * 100)) -ge $((new * 95)) ] || fail "expected >= 95 % of the kafka spans negative"
[ "$(kafka_field producer consumer health)" = 0 ] || fail "producer->consumer kafka health should be 0"
note "ok"
