#!/usr/bin/env bash
# Two lab hosts, one agent each, --exchange-sample 1/4, Kafka not there yet:
#  - Kafka unreachable at start: local pairing (loopback inside h1) works, the exchange says it is
#    disconnected, halves to ship are dropped and counted;
#  - Kafka appears (behind a forwarder on the configured port): the agents connect and join;
#  - 40 connections h1 -> h2 of 20 request/response each: the sampled ones pair 100 % (spans are
#    whole connections), the others are counted as sampled out and never shipped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
# A free port below the ephemeral range, so that no client's own ephemeral port can take it.
KPORT=$(python3 -c '
import random, socket
for _ in range(100):
    p = random.randint(20000, 30000)
    try:
        s = socket.socket(); s.bind(("127.0.0.1", p)); s.close(); print(p); break
    except OSError: pass')
for i in 1 2; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" --only-domains --window 3s \
    --send-max-age 2s --exchange "kafka:127.0.0.1:$KPORT" --exchange-group "$RUN_ID" --exchange-key-file "$EXCHANGE_KEY" --exchange-sample 1/4 \
    --exchange-config message.timeout.ms=3000
done

# Phase 1: no Kafka.
PORT=7500
session() {  # session HOST-INDEX ADDR PING-ARGS...: one connection from h1 (an echo server serves one client)
  local i=$1 a=$2; shift 2
  PORT=$((PORT + 1))
  in_host $i "$TRAFFIC" echo-server --listen $a:$PORT --duration 60 >/dev/null & BACKGROUND+=($!)
  sleep 0.2
  in_host 1 "$TRAFFIC" ping --connect $a:$PORT "$@" >/dev/null
}
session 1 127.0.0.1 --count 300
for c in $(seq 1 8); do session 2 10.77.0.2 --count 20; done
sleep 5  # past message.timeout.ms
[ "$(pair_from x1 h1 h1 spans)" -eq 600 ] || fail "local pairing without Kafka: $(pair_from x1 h1 h1 spans) of 600 (300 requests + 300 replies)"
[ "$(agent_status x1 | jq -r .exchange.connected)" = false ] || fail "x1 says connected with no Kafka"
dropped=$(agent_status x1 | jq -r '[.exchange.dropped[]] | add')
out1=$(agent_status x1 | jq -r .exchange.halves.sampled_out)
note "no Kafka: local h1->h1 $(pair_from x1 h1 h1 spans) spans, x1 dropped $dropped halves, sampled out $out1"
[ $((dropped + out1)) -eq 320 ] || fail "x1: 8 connections x 40 halves = 320 should be dropped or sampled out, got $dropped + $out1"

# Phase 2: Kafka appears on the configured port.
start_kafka 4
socat TCP-LISTEN:$KPORT,bind=127.0.0.1,reuseaddr,fork TCP:"${BOOTSTRAP%%,*}" 2>"$WORK/socat.log" & BACKGROUND+=($!)
sleep 0.5
kill -0 $! || fail "socat: $(cat "$WORK/socat.log")"
wait_until 60 exchange_settled 4 x1 x2 || {
  for a in x1 x2; do note "$a: $(agent_status $a | jq -c .exchange)"; done
  fail "agents did not join once Kafka appeared"
}
[ "$(agent_status x1 | jq -r .exchange.connected)" = true ] || fail "x1 not connected"
note "Kafka up: partitions $(agent_status x1 | jq -c .exchange.partitions) + $(agent_status x2 | jq -c .exchange.partitions)"

x_spans() { local s=0 a v; for a in x1 x2; do v=$(pair_from $a "$1" "$2" spans); [ "$v" != none ] && s=$((s + v)); done; echo $s; }
out_before=$(agent_status x1 | jq -r .exchange.halves.sampled_out)
s_before=$(x_spans h1 h2); r_before=$(x_spans h2 h1)
for c in $(seq 1 40); do session 2 10.77.0.2 --count 20; done
sleep 3
fwd=$(( $(x_spans h1 h2) - s_before )); rev=$(( $(x_spans h2 h1) - r_before ))
out=$(( $(agent_status x1 | jq -r .exchange.halves.sampled_out) - out_before ))
kept=$((fwd / 20))
note "1/4 sampling: $fwd spans h1->h2, $rev h2->h1 ($kept of 40 connections kept), x1 sampled out $out halves"
[ $((fwd % 20)) -eq 0 ] && [ "$rev" -eq "$fwd" ] || fail "kept connections did not pair completely ($fwd, $rev)"
[ "$kept" -ge 2 ] && [ "$kept" -le 25 ] || fail "$kept of 40 connections kept at 1/4"
[ "$out" -eq $(( (40 - kept) * 40 )) ] || fail "x1 sampled out $out halves, expected $(( (40 - kept) * 40 ))"
[ "$(agent_status x2 | jq -r .exchange.unpaired_sends)" -eq 0 ] && [ "$(agent_status x1 | jq -r .exchange.unpaired_sends)" -eq 0 ] ||
  fail "unpaired sends on the owners"
echo "exchange_sampling: 1 passed, 0 failed"
