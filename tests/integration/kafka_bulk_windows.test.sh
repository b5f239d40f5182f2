#!/usr/bin/env bash
# Bulk Kafka: calls far beyond one payload record (a produce request from librdkafka is two iovec
# segments per record and tens of KiB; a fetch response of a consumer that is behind, hundreds of
# KiB in one receive) are copied whole in records of 8 KiB when --payload-bytes allows it, by the
# socket-layer variant (bpf_loop). Lab as kafka_messages: kcat producer and consumer in their own
# cgroups (the domains), the test broker behind socat forwarders.
#  - with --payload-bytes 8192 the same traffic has calls copied in part (else this test could not
#    show anything) and batches that do not pair;
#  - with --payload-bytes 524288 every produced batch pairs once with its fetch, the records summed
#    are the messages produced, no call is copied in part;
#  - in both, payload capture runs the variant the halves run (it never forces another one).
# On a kernel without the socket-layer tracepoints the syscall variants copy one record's worth
# per call: the second half is then skipped (said so).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/kafka_lab.sh"
trap 'rc_=$?; set +e; remove_test_cgroups; (exit $rc_); cleanup' EXIT INT TERM
make_client_cgroups

lab_up 3
start_pipeline_kafka warmup:1:1
MESSAGES=20000
# The consumer starts once every record is in: its fetches are as large as the limits below allow
# (max.partition.fetch.bytes per partition, fetch.max.bytes per response), well beyond 8 KiB and
# within 512 KiB.
KCAT_CONSUMER=(-X fetch.wait.max.ms=5 -X fetch.error.backoff.ms=5 -X topic.metadata.refresh.interval.ms=60000
  -X max.partition.fetch.bytes=65536)

# bulk TOPIC: MESSAGES keyed 64 B values produced over 4 partitions in batches of at most 200
# (about 15 KiB: a request holds several, so that some lie beyond its first 8 KiB however the
# producer's timing groups them), then consumed from the start.
bulk() {
  local topic=$1
  echo "topic $topic:4:1" >"$WORK/pipe.fifo"
  sleep 0.3
  seq 1 "$MESSAGES" | awk '{ printf "k%d:%064d\n", $1 % 64, $1 }' | in_cgroup "$CG/producer" \
    ip netns exec "$LAB_NAME-h1" kcat -b 127.0.0.1:$PORT -P -t "$topic" -K: -X linger.ms=5 -X batch.num.messages=200 \
    2>"$WORK/producer.err" || fail "kcat -P failed: $(cat "$WORK/producer.err")"
  in_cgroup "$CG/consumer" ip netns exec "$LAB_NAME-h2" timeout 60 kcat -b 127.0.0.1:$PORT -C -t "$topic" \
    -o beginning -q -c "$MESSAGES" "${KCAT_CONSUMER[@]}" >"$WORK/consumed" 2>"$WORK/consumer.err" ||
    fail "kcat -C got $(wc -l <"$WORK/consumed") of $MESSAGES: $(cat "$WORK/consumer.err")"
  [ "$(wc -l <"$WORK/consumed")" -eq "$MESSAGES" ] || fail "consumed $(wc -l <"$WORK/consumed") of $MESSAGES"
  sleep 1  # the agent reads payloads every 20 ms; a fetched batch waits for its producer's half
  status_json >"$WORK/$topic.json"
  jq -c '.payload | {records, truncated, iov_truncated, lost, kafka}' "$WORK/$topic.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }
same_variant() {  # same_variant TOPIC
  local tcp payload
  tcp=$(field "$1" .capture_families.tcp.variant)
  payload=$(field "$1" .capture_families.payload.variant)
  [ "$payload" = "$tcp" ] || fail "payload capture runs $payload, the halves $tcp: $(field "$1" .capture_families.payload.detail)"
  echo "$tcp"
}

start_agent --domain producer=cgroup:"$CG/producer" --domain consumer=cgroup:"$CG/consumer" --only-domains \
  --window 5s --payload-bytes 8192
bulk one_record
variant=$(same_variant one_record)
truncated=$(field one_record .payload.truncated)
pairs=$(field one_record .payload.kafka.pairs)
produced=$(field one_record .payload.kafka.produced_batches)
note "variant $variant, --payload-bytes 8192: $truncated calls copied in part, $pairs pairs of $produced produced batches"
[ "$truncated" -gt 0 ] || fail "no call beyond 8 KiB: this traffic cannot show the copy in windows"
[ "$pairs" -lt "$produced" ] || fail "every batch paired with 8 KiB per call: this traffic cannot show the windows"
agent_stop

if [ "$variant" != sock_tp ]; then
  note "variant $variant copies one record's worth per call: the windows are the socket-layer variant's (skipped)"
  note "ok"; exit 0
fi
start_agent --domain producer=cgroup:"$CG/producer" --domain consumer=cgroup:"$CG/consumer" --only-domains \
  --window 5s --payload-bytes 524288
bulk windows
same_variant windows >/dev/null
produced=$(field windows .payload.kafka.produced_batches)
fetched=$(field windows .payload.kafka.fetched_batches)
pairs=$(field windows .payload.kafka.pairs)
records=$(field windows .payload.kafka.paired_records)
note "--payload-bytes 524288: $pairs pairs of $produced produced, $fetched fetched batches, $records records"
[ "$(field windows .payload.truncated)" -eq 0 ] || fail "calls copied in part with 512 KiB per call"
[ "$(field windows .payload.lost.ring_buffer_full)" -eq 0 ] || fail "payload records lost: the ring was full"
[ "$produced" -ge 100 ] || fail "expected at least $((MESSAGES / 200)) produced batches, got $produced"
[ "$pairs" -eq "$produced" ] || fail "every produced batch should pair once: $pairs pairs of $produced"
[ "$fetched" -eq "$pairs" ] || fail "every fetched batch should pair: $fetched fetched, $pairs pairs"
[ "$records" -eq "$MESSAGES" ] || fail "paired batches hold $records records, kcat produced $MESSAGES"
note "ok"
