#!/usr/bin/env bash
# Two lab hosts, one agent each over a test Kafka (3 brokers), a reference agent over both:
#  - every broker down for 4 s, then up; then every partition's leader moved: no agent crashes,
#    pairing resumes, and every span the exchange missed against the reference is matched by a
#    counted loss (dropped halves, unpaired sends);
#  - garbage and foreign-version records produced to every partition with kcat: counted under
#    records_rejected by whoever owns the partition, ignored, pairing unaffected.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
start_kafka 4
for i in 1 2; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" --only-domains --window 3s \
    --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-key-file "$EXCHANGE_KEY"
done
start_named_agent ref --domain h1=netns:"$(netns_path 1)" --domain h2=netns:"$(netns_path 2)" --only-domains \
  --window 3s --send-max-age 2s
wait_exchange_settled 4 x1 x2

PORT=7400
session() {  # session PING-ARGS...: one connection h1 -> h2 (the echo server serves one client)
  PORT=$((PORT + 1))
  in_host 2 "$TRAFFIC" echo-server --listen 10.77.0.2:$PORT --duration 60 >/dev/null & BACKGROUND+=($!)
  sleep 0.3
  in_host 1 "$TRAFFIC" ping --connect 10.77.0.2:$PORT --size 64 "$@" >/dev/null
}
ping_for() { session --rate 200 --duration "$1"; }
x_spans() { local s=0 a v; for a in x1 x2; do v=$(pair_from $a "$1" "$2" spans); [ "$v" != none ] && s=$((s + v)); done; echo $s; }
# paired_total: spans the two owners paired, both directions, over every partition they have
# owned (a pair's own spans restart when a rebalance moves its partition; this total does not).
paired_total() { local s=0 a; for a in x1 x2; do s=$((s + $(agent_status $a | jq -r .exchange.spans_paired))); done; echo $s; }
losses() {  # halves counted as lost by the exchange, plus sends its owners saw go unpaired
  local s=0 a
  for a in x1 x2; do
    s=$((s + $(agent_status $a | jq -r '([.exchange.dropped[]] | add) + .exchange.unpaired_sends')))
  done
  echo $s
}
# agents_alive: every agent of this test still runs (lib.sh's alive PID asks about one process)
agents_alive() { local a; for a in x1 x2 ref; do kill -0 "${AGENT_PIDS[$a]}" || fail "agent $a died"; done; }

ping_for 3
# Brokers down while traffic goes on.
ping_for 12 & p=$!
sleep 3
note "$(kafka_cmd 'down all')"
sleep 4
connected_is() { test "$(agent_status x1 | jq -r .exchange.connected)" = "$1"; }
wait_until 10 connected_is false || fail "x1 still says connected with every broker down"
note "$(kafka_cmd 'up all')"
wait_until 20 connected_is true || fail "x1 did not reconnect"
# Leadership moves while traffic goes on.
for part in 0 1 2 3; do note "$(kafka_cmd "leader $TOPIC $part $(( (part + 1) % 3 + 1 ))")"; done
wait $p
sleep 3
agents_alive
for d in "h1 h2" "h2 h1"; do
  set -- $d
  xs=$(x_spans $1 $2); rs=$(pair_from ref $1 $2 spans)
  note "$1->$2 after faults: exchange $xs spans, reference $rs"
done
lost=$(losses)
missing=$(( $(pair_from ref h1 h2 spans) + $(pair_from ref h2 h1 spans) - $(paired_total) ))
note "spans missing against the reference: $missing; counted losses (dropped halves + unpaired sends): $lost"
[ "$missing" -le $((lost + 6)) ] || fail "$missing spans missing but only $lost losses counted"
# Resumes: a fresh round pairs completely (500 pings, 1000 spans: request and reply; more only if
# a rebalance made a new owner read again what another had paired).
before=$(paired_total)
session --count 500
sleep 2.5
[ $(( $(paired_total) - before )) -ge 1000 ] || fail "after the faults, 500 pings paired $(( $(paired_total) - before )) spans"

# Garbage and a foreign version on every partition.
printf 'hello, kafka' >"$WORK/garbage"
printf 'SK\011\000\004\000\000\000abcd' >"$WORK/foreign-version"
for part in 0 1 2 3; do
  kcat -b "$BOOTSTRAP" -P -t $TOPIC -p $part -k 10.77.0.1\|10.77.0.2 "$WORK/garbage"
  kcat -b "$BOOTSTRAP" -P -t $TOPIC -p $part -k 10.77.0.1\|10.77.0.2 "$WORK/foreign-version"
done
rejected() { local s=0 a; for a in x1 x2; do s=$((s + $(agent_status $a | jq -r ".exchange.records_rejected.$1"))); done; echo $s; }
at_least() { test "$(rejected "$1")" -ge "$2"; }
wait_until 15 at_least bad_magic 4 || fail "garbage records not counted ($(rejected bad_magic))"
wait_until 15 at_least unknown_version 4 || fail "foreign-version records not counted ($(rejected unknown_version))"
note "rejected: bad_magic $(rejected bad_magic), unknown_version $(rejected unknown_version)"
before=$(paired_total)
session --count 300
sleep 2.5
[ $(( $(paired_total) - before )) -ge 600 ] || fail "pairing disturbed by rejected records: $(( $(paired_total) - before )) spans of 600"
agents_alive
echo "exchange_faults: 1 passed, 0 failed"
