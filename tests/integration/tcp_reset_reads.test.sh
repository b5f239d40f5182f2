#!/usr/bin/env bash
# A reply read after its connection was reset. The server reads the request, sends the reply and
# closes with a reset (SO_LINGER 0); the client reads after a pause, when the reset has already
# arrived: the read still returns the reply (it was queued first), but the reset gave the
# client's unbound port back, so the socket's own port field (skc_num) reads 0. On every capture
# variant every request and every reply pairs, exactly, and no half is rejected for a zero port
# (before, each such reply was dropped as rejected_zero_port and its send aged out unpaired).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tcp_shapes_lib.sh"

lab_up 2
B=10.77.0.2
COUNT=200

port=7400
for variant in "${TCP_VARIANTS[@]}"; do
  start_variant_agent "$variant" --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" \
    --only-domains --window 60s --send-max-age 1s
  port=$((port + 1))
  in_host 2 "$TRAFFIC" reply-close-server --reset --listen $B:$port --size 100 --count "$COUNT" --duration 60 \
    >"$WORK/server.out" &
  server=$!
  in_host 1 "$TRAFFIC" reply-close-client --connect $B:$port --size 100 --count "$COUNT" --delay-ms 20 \
    >"$WORK/client.out"
  wait $server
  note "$variant: $(cat "$WORK/client.out") / $(cat "$WORK/server.out")"
  grep -q "^reply-close-client: $COUNT connections, $COUNT complete replies$" "$WORK/client.out" ||
    fail "$variant: the client did not read every reply before the reset"
  expect_spans "$variant" "after $COUNT reset connections" a b "$COUNT"
  expect_spans "$variant" "after $COUNT reset connections" b a "$COUNT"
  sleep 1.5  # --send-max-age: a send that never paired would be counted by now
  unpaired=$(status_json | jq -r '.capture.unpaired_sends')
  [ "$unpaired" = 0 ] || fail "$variant: $unpaired unpaired sends"
  zero=$(curl -sf "$AGENT_URL/metrics" | sed -n 's/^skewscope_events_lost_total{reason="rejected_zero_port"} //p')
  [ "$zero" = 0 ] || fail "$variant: $zero halves rejected for a zero port"
  agent_stop
done
echo "tcp_reset_reads: 1 passed, 0 failed"
