#!/usr/bin/env bash
# Message-level ZeroMQ spans across agents: lab host 1 and lab host 2 each watched by their own
# agent (the production layout), joined by the exchange (a test Kafka on the root's loopback).
# Neither agent sees both ends of a connection: each ships its ZMTP message halves keyed by the
# host pair, like TCP halves, and the owner of that key's exchange partition pairs them.
#  - libzmq PUSH (h1) -> PULL (h2): zmtp spans a->b, summed over both agents, == messages sent;
#    none paired locally; zero negative spans with one clock;
#  - libzmq PUSH (h1) -> JeroMQ PULL (h2), the downgrade to ZMTP/2.0, across hosts: exact too;
#  - REQ (h1) / REP (h2): requests a->b and replies b->a, exact;
#  - agent b simulating a clock 100 ms behind: every new a->b zmtp span negative, health 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zmtp_lib.sh"
jeromq_setup
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
start_kafka 6
common=(--only-domains --window 5s --payload-bytes 8192
  --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-config fetch.wait.max.ms=20
  --exchange-key-file "$EXCHANGE_KEY")
start_named_agent a --host-name node1 --domain a=netns:"$(netns_path 1)" "${common[@]}"
start_named_agent b --host-name node2 --domain b=netns:"$(netns_path 2)" "${common[@]}"
wait_exchange_settled 6 a b
sleep 2  # both agents have read their namespaces' addresses (every 2 s): nothing looks local
B=10.77.0.2

# sum JQ: a jq expression over each agent's status, summed over both agents
sum() {
  local x total=0 n
  for x in a b; do
    n=$(agent_status $x | jq -r "$1 // 0")
    total=$((total + n))
  done
  echo $total
}
zmtp_pair() { echo "[.pairs[]? | select(.src==\"$1\" and .dst==\"$2\" and .transport==\"zmtp\")][0].$3"; }
spans() { sum "$(zmtp_pair "$1" "$2" spans)"; }
spans_reach() { [ "$(spans "$1" "$2")" -ge "$3" ]; }
# expect SRC DST WHAT SENT BEFORE: exactly SENT more SRC->DST zmtp spans than BEFORE, over both agents
expect() {
  wait_until 20 spans_reach "$1" "$2" $(($5 + $4)) || true
  sleep 1
  local got=$(($(spans "$1" "$2") - $5))
  note "$3: $4 messages, $got zmtp spans $1->$2 (over both agents)"
  [ "$got" -eq "$4" ] ||
    fail "$3: expected $4 zmtp spans $1->$2, got $got; exchange.zmtp: $(for x in a b; do agent_status $x | jq -c '.exchange.zmtp'; done | tr '\n' ' ')"
}

# libzmq PUSH -> PULL, 5000 messages, then 1000 of 3 frames.
in_host 2 "$ZMQ_TOOL" pull --bind tcp://$B:7301 --count 6000 >"$WORK/pull.out" &
pull=$!
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7301 --count 5000 --size 8 >/dev/null
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7301 --count 1000 --size 5 --parts 3 >/dev/null
wait $pull || fail "PULL did not receive every message: $(cat "$WORK/pull.out")"
expect a b "libzmq push/pull across hosts" 6000 0
local_pairs=$(sum '.payload.zmtp.pairs')
diverted=$(sum '.payload.zmtp.diverted_to_exchange')
note "paired locally: $local_pairs; halves diverted to the exchange: $diverted; owners: $(for x in a b; do agent_status $x | jq -c '.exchange.zmtp'; done | tr '\n' ' ')"
[ "$local_pairs" -eq 0 ] || fail "$local_pairs zmtp messages paired locally: neither agent sees both ends"
[ "$diverted" -eq 12000 ] || fail "expected 12000 halves shipped (6000 sends on a, 6000 receives on b), got $diverted"
[ "$(sum "$(zmtp_pair a b negative_spans)")" -eq 0 ] || fail "negative zmtp span with one shared clock"
before=$(spans a b)

# libzmq PUSH -> JeroMQ PULL: downgraded to ZMTP/2.0, each direction parsed on its own host with
# the version its socket's other direction announced. (The sender holds its socket until JeroMQ
# has read everything: see zmtp_jeromq.test.sh.)
jeromq 2 pull --bind tcp://$B:7302 --count 2000 --timeout-ms 60000 >"$WORK/jpull.out" &
pull=$!
sleep 1
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7302 --count 2000 --size 16 --hold-ms 3000 >/dev/null &
push=$!
wait $pull || fail "JeroMQ PULL did not receive every message: $(cat "$WORK/jpull.out")"
wait $push || fail "libzmq PUSH to JeroMQ failed"
expect a b "libzmq -> JeroMQ (downgraded) across hosts" 2000 "$before"
before=$(spans a b)

# REQ/REP: requests a->b, replies b->a.
in_host 2 "$ZMQ_TOOL" rep --bind tcp://$B:7303 --count 1000 >/dev/null &
rep=$!
in_host 1 "$ZMQ_TOOL" req --connect tcp://$B:7303 --count 1000 --size 16 >/dev/null
wait $rep || fail "REP did not answer every request"
expect a b "req/rep requests" 1000 "$before"
expect b a "req/rep replies" 1000 0
before=$(spans a b)
neg_before=$(sum "$(zmtp_pair a b negative_spans)")

# b's clock 100 ms behind: every a->b message now looks received before it was sent.
"$SKEWSCOPE" simulate b=-100ms --control-socket "$WORK/b.sock" >/dev/null
in_host 2 "$ZMQ_TOOL" pull --bind tcp://$B:7304 --count 3000 >/dev/null &
pull=$!
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7304 --count 3000 --size 8 >/dev/null
wait $pull || fail "PULL (skewed phase) did not receive every message"
expect a b "b at -100ms" 3000 "$before"
neg=$(($(sum "$(zmtp_pair a b negative_spans)") - neg_before))
note "b at -100ms: $neg of 3000 new a->b zmtp spans negative"
[ "$neg" -eq 3000 ] || fail "expected every new a->b zmtp span negative, got $neg"
for x in a b; do
  [ "$(agent_status $x | jq -r "$(zmtp_pair a b spans) // 0")" -gt 0 ] || continue  # owns no key of it
  h=$(agent_status $x | jq -r "$(zmtp_pair a b health)")
  note "agent $x reports a->b zmtp health $h"
  [ "$h" = 0 ] || fail "agent $x: a->b zmtp health should be 0, is $h"
done
note "ok"
