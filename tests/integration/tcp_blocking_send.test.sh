#!/usr/bin/env bash
# Sends that block for more than a second. Each write() of 8 MiB waits behind
# a 64 KiB send buffer for a reader that drains a 64 KiB receive buffer slowly; its first bytes
# are read long before the call returns. On every capture variant, each of those sends pairs
# exactly once, with no negative span; a third, cut short by SO_SNDTIMEO, pairs and is counted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tcp_shapes_lib.sh"

lab_up 2
B=10.77.0.2
WRITES=2

port=7400
for variant in "${TCP_VARIANTS[@]}"; do
  start_variant_agent "$variant" --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" \
    --only-domains --window 60s
  port=$((port + 1))
  in_host 2 "$TRAFFIC" slow-sink --listen $B:$port --size 65536 --rcvbuf 65536 --delay-ms 15 --duration 60 \
    >"$WORK/sink.out" &
  sink=$!
  in_host 1 "$TRAFFIC" blocking-source --connect $B:$port --bytes 8388608 --sndbuf 65536 --count $WRITES \
    >"$WORK/source.out"
  wait $sink
  note "$variant: $(cat "$WORK/source.out") / $(cat "$WORK/sink.out")"
  read -r writes whole shortest < <(sed -n 's/^blocking-source: \([0-9]*\) writes, \([0-9]*\) whole, blocked \([0-9.e-]*\) s.*/\1 \2 \3/p' \
    "$WORK/source.out")
  [ "$writes" = $WRITES ] && [ "$whole" = $WRITES ] || fail "$variant: expected $WRITES whole writes"
  approx_ge "$shortest" 1.0 || fail "$variant: the shortest write blocked only $shortest s: the shape needs > 1 s"
  expect_spans "$variant" "8 MiB sends that blocked > 1 s" a b $WRITES
  # One more, cut short by SO_SNDTIMEO after 300 ms: its half (sent at its start) claimed 8 MiB,
  # so it is counted; its first byte was still read, so it still pairs.
  port=$((port + 1))
  in_host 2 "$TRAFFIC" slow-sink --listen $B:$port --size 65536 --rcvbuf 65536 --delay-ms 15 --duration 60 \
    >"$WORK/sink.out" &
  sink=$!
  in_host 1 "$TRAFFIC" blocking-source --connect $B:$port --bytes 8388608 --sndbuf 65536 --count 1 \
    --timeout-ms 300 >"$WORK/source.out"
  wait $sink
  grep -q "^blocking-source: 1 writes, 0 whole" "$WORK/source.out" || fail "$variant: the write was not cut short"
  expect_spans "$variant" "with a send cut short" a b $((WRITES + 1))
  cut=$(status_json | jq -r '.capture.sends_cut_short')
  note "$variant: sends cut short: $cut"
  [ "$cut" = 1 ] || fail "$variant: expected 1 send counted as cut short, got $cut"
  agent_stop
done
echo "tcp_blocking_send: 1 passed, 0 failed"
