#!/usr/bin/env bash
# Sends that block for more than a second, made with every send call (tcp_blocking_send covers
# write): one writev, one sendto and one sendmsg of 8 MiB each (the vector calls over two iovecs)
# behind a 64 KiB send buffer and a slow reader. The syscall variants must know at the call's
# entry that it will wait (for writev and sendmsg by summing its iovecs) and emit its half then,
# since the reader's first receive comes more than a second before the call returns. On every
# capture variant each send pairs exactly once, with no negative span, and none is cut short.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tcp_shapes_lib.sh"

lab_up 2
B=10.77.0.2

port=7500
for variant in "${TCP_VARIANTS[@]}"; do
  start_variant_agent "$variant" --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" \
    --only-domains --window 60s
  sent=0
  for call in writev sendto sendmsg; do
    port=$((port + 1))
    # 32 KiB per 15 ms: about 4 s for the 8 MiB. At 64 KiB (about 2 s) a sendmsg under CI load once
    # returned after 0.98 s, below the shape's 1 s, while its reader still took 128 reads.
    in_host 2 "$TRAFFIC" slow-sink --listen $B:$port --size 32768 --rcvbuf 65536 --delay-ms 15 --duration 60 \
      >"$WORK/sink.out" &
    sink=$!
    in_host 1 "$TRAFFIC" blocking-source --call $call --connect $B:$port --bytes 8388608 --sndbuf 65536 --count 1 \
      >"$WORK/source.out"
    wait $sink
    note "$variant $call: $(cat "$WORK/source.out") / $(cat "$WORK/sink.out")"
    read -r whole shortest < <(sed -n 's/^blocking-source: 1 writes, \([0-9]*\) whole, blocked \([0-9.e-]*\) s.*/\1 \2/p' \
      "$WORK/source.out")
    [ "$whole" = 1 ] || fail "$variant $call: expected one whole send"
    approx_ge "$shortest" 1.0 || fail "$variant $call: the send blocked only $shortest s: the shape needs > 1 s"
    sent=$((sent + 1))
    expect_spans "$variant" "$call of 8 MiB that blocked > 1 s" a b $sent
  done
  cut=$(status_json | jq -r '.capture.sends_cut_short')
  [ "$cut" = 0 ] || fail "$variant: $cut sends counted as cut short, none was"
  agent_stop
done
echo "tcp_blocking_send_calls: 1 passed, 0 failed"
