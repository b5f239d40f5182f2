#!/usr/bin/env bash
# Two lab hosts, real TCP and ZeroMQ traffic, one shared kernel clock:
#  - no simulated offset: every ping pairs, zero negative spans, health 1;
#  - receiver 5 ms behind: its incoming spans all negative, health 0;
#  - receiver 5 ms ahead: no inversions into it, all inversions in the reverse direction.
source "$(dirname "$0")/lib.sh"

lab_up 2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 2s --send-max-age 2s
B=10.77.0.2

field() { pair_field "$@"; }
# The window is 2 s: on a loaded machine a few status calls can outlast it, so the checks of one
# phase read one snapshot, taken together with the exit code of `skewscope status`.
snapshot() {
  set +e; "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json"; SNAP_RC=$?; set -e
}

# Phase 1: one clock. Streams with reads of other sizes than the writes, ZeroMQ, then pings.
in_host 2 "$TRAFFIC" tcp-sink --listen $B:7001 --read-sizes 4,8,3,64,1 --duration 60 >"$WORK/sink.out" &
sink=$!
in_host 1 "$TRAFFIC" tcp-source --connect $B:7001 --write-sizes 5,7,3,100 --count 4000 >"$WORK/source.out"
wait $sink || true
in_host 2 "$TRAFFIC" zmq-pull --bind tcp://$B:7002 --duration 4 >"$WORK/pull.out" &
pull=$!
in_host 1 "$TRAFFIC" zmq-push --connect tcp://$B:7002 --size 200 --count 2000 --rate 2000 >/dev/null
wait $pull
before=$(field a b spans)
pings 1 2 $B:7000 2000
note "lab min span (Δt_min one-way): a->b $(field a b min_span_seconds) s, b->a $(field b a min_span_seconds) s"
sleep 3  # settle: unpaired sends age out after --send-max-age
cat "$WORK/source.out" "$WORK/sink.out" "$WORK/pull.out" "$WORK/ping.out"
spans_ab=$(field a b spans)
ping_spans=$((spans_ab - before))
note "a->b spans: $spans_ab (pings alone: $ping_spans of 2000), b->a: $(field b a spans)"
[ "$ping_spans" -eq 2000 ] || fail "expected exactly 2000 ping spans a->b, got $ping_spans"
[ "$(field a b negative_spans)" -eq 0 ] || fail "negative span with one shared clock (a->b)"
[ "$(field b a negative_spans)" -eq 0 ] || fail "negative span with one shared clock (b->a)"
[ "$(field b a spans)" -ge 2000 ] || fail "replies b->a not paired"
ratio=$(status_json | jq -r '.capture.pairing_ratio')
note "pairing ratio $ratio"
approx_ge "$ratio" 0.99 || fail "pairing ratio $ratio below 0.99"
[ "$(status_json | jq -r '.capture.lost')" -eq 0 ] || fail "events lost on a loss-free run"
# The 2 s window has emptied during the settling: fresh traffic, so that both pairs have evidence.
pings 1 2 $B:7000 200
"$SKEWSCOPE" status --agent "$AGENT_URL" >/dev/null || fail "status exit code should be 0 when healthy"

# Phase 2: b's clock 5 ms behind.
"$SKEWSCOPE" simulate b=-5ms --control-socket "$CONTROL" >/dev/null
neg_before=$(field a b negative_spans); spans_before=$(field a b spans)
pings 1 2 $B:7000 1000
snapshot
neg=$(( $(snap_field a b negative_spans) - neg_before )); spans=$(( $(snap_field a b spans) - spans_before ))
note "b at -5ms: a->b $neg of $spans negative, health $(snap_field a b health), b->a window negatives $(snap_field b a window_negative_spans)"
[ "$spans" -ge 1000 ] && [ "$neg" -ge $((spans * 99 / 100)) ] || fail "expected ~all a->b spans negative"
[ "$(snap_field a b health)" = 0 ] || fail "a->b health should be 0"
[ "$(snap_field a b state)" = violated ] || fail "a->b state should be violated"
[ "$(snap_field b a window_negative_spans)" = 0 ] || fail "b->a should have no inversions"
[ $SNAP_RC -eq 1 ] || fail "status exit code should be 1 when a pair is violated, got $SNAP_RC"

# Phase 3: b's clock 5 ms ahead; wait for the 2 s window to forget phase 2.
"$SKEWSCOPE" simulate b=+5ms --control-socket "$CONTROL" >/dev/null
sleep 3
nab=$(field a b negative_spans); nba=$(field b a negative_spans); sba=$(field b a spans)
pings 1 2 $B:7000 1000
snapshot
dab=$(( $(snap_field a b negative_spans) - nab )); dba=$(( $(snap_field b a negative_spans) - nba ))
dsba=$(( $(snap_field b a spans) - sba ))
note "b at +5ms: a->b new negatives $dab, b->a $dba of $dsba negative"
[ "$dab" -eq 0 ] || fail "a->b should have no inversions when b is ahead"
[ "$dsba" -ge 1000 ] && [ "$dba" -ge $((dsba * 99 / 100)) ] || fail "expected ~all b->a spans negative"
[ "$(snap_field a b health)" = 1 ] || fail "a->b health should be 1"
[ "$(snap_field b a health)" = 0 ] || fail "b->a health should be 0"
echo "tcp_pairing: 1 passed, 0 failed"
