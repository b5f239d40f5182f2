#!/usr/bin/env bash
# An idle agent's ring loops wait long (docs/architecture.md, Threads), and the first records after
# a quiet spell still reach it at once: the kernel side wakes the loop that armed its idle flag.
#  - idle, the payload loop wakes about once a second (it was 50 times), counted from its
#    thread's context switches;
#  - after each quiet spell, one ZeroMQ request/reply is read from the payload ring within 250 ms
#    (the loop's idle wait is 1 s: without the wake-up, 3 rounds pass together 1 time in 64), and
#    one TCP request/response from the halves rings within 80 ms (idle wait 250 ms: the
#    estimator's interval);
#  - SIGTERM during such a wait: the agent is gone within 2 s (the wait is interrupted).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zmtp_lib.sh"

lab_up 2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --payload-bytes 8192
B=10.77.0.2

thread_of() {  # thread_of NAME: the agent's thread of that name (runtime/agent_run.cpp)
  grep -lx "$1" /proc/"$AGENT_PID"/task/*/comm | head -1 | xargs -r dirname
}
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' "$1/status"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

pay=$(thread_of skewscope-pay)
tcp=$(thread_of skewscope-tcp)
[ -n "$pay" ] && [ -n "$tcp" ] || fail "the agent's loop threads are not named: $(cat /proc/"$AGENT_PID"/task/*/comm | tr '\n' ' ')"

# 1. Idle: the payload loop's wake-ups over 4 s, once it has gone idle.
sleep 1
s0=$(switches "$pay"); sleep 4; s1=$(switches "$pay")
rate=$(((s1 - s0) / 4))
note "idle payload loop: $((s1 - s0)) wake-ups in 4 s"
[ "$rate" -le 3 ] || fail "the idle payload loop woke $rate times a second (expected about 1)"

# 2. The first records after a quiet spell are read at once.
in_host 2 "$ZMQ_TOOL" rep --bind tcp://$B:7301 --count 3 >"$WORK/rep.out" &
rep=$!
sleep 0.5
for round in 1 2 3; do
  sleep 1.5  # both loops idle again: armed, waiting long
  records0=$(status_json | jq -r '.payload.records')
  sleep 1.5
  in_host 1 "$ZMQ_TOOL" req --connect tcp://$B:7301 --count 1 --size 16 >/dev/null || fail "REQ failed"
  sleep 0.25
  records1=$(status_json | jq -r '.payload.records')
  note "round $round: payload records $records0 -> $records1 250 ms after one request/reply"
  [ "$records1" -gt "$records0" ] || fail "round $round: the payload loop had not read the request/reply after 250 ms"
done
wait $rep || fail "REP: $(cat "$WORK/rep.out")"
for round in 1 2 3; do
  in_host 2 "$BUILD/tests/tools/lab_traffic" rr-server --listen $B:$((7310 + round)) --size 64 --duration 30 >/dev/null &
  rr=$!
  read0=$(status_json | jq -r '.capture.read')
  sleep 1.5
  in_host 1 "$BUILD/tests/tools/lab_traffic" rr-client --connect $B:$((7310 + round)) --size 64 --count 1 \
    --duration 5 >/dev/null || fail "rr-client failed"
  sleep 0.08
  read1=$(status_json | jq -r '.capture.read')
  note "round $round: halves read $read0 -> $read1 80 ms after one request/response"
  [ "$read1" -gt "$read0" ] || fail "round $round: the capture loop had not read the request/response after 80 ms"
  kill $rr 2>/dev/null || true
  wait $rr 2>/dev/null || true
done

# 3. Stopping while idle: the long waits end at once.
sleep 1.5
t0=$(now_ms)
kill -TERM "$AGENT_PID"
while alive "$AGENT_PID"; do sleep 0.02; done
took=$(($(now_ms) - t0))
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
note "stopped while idle in $took ms"
[ "$took" -le 2000 ] || fail "stopping an idle agent took $took ms"
