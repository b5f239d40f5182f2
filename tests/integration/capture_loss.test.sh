#!/usr/bin/env bash
# Halves lost in the window must not leave a pair "healthy" with certainty. A real agent is frozen
# with SIGSTOP while two lab hosts keep pinging, until the ring buffers (one per CPU, 8 MiB in all
# up to 8 CPUs) overflow and the kernel side counts ring_buffer_full; after SIGCONT:
#  - capture.lost > 0 and the pairs' windows hold those losses: health null, state unknown,
#    capture_complete false, skewscope_pair_capture_complete 0, no pair health sample;
#  - once the window (8 s: long enough for every check above) has passed, fresh traffic makes the pairs ok with health 1 again.
# Also: a live agent exports skewscope_capture_up 1 and capture.up true, and /metrics stays clean
# under `promtool check metrics` while health is unknown.
source "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || fail "needs promtool (Debian package prometheus)"

lab_up 2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 8s --send-max-age 1s
B=10.77.0.2
field() { pair_field "$@"; }

grep -qx 'skewscope_capture_up 1' <<<"$(metrics)" || fail "a live agent should export skewscope_capture_up 1"
[ "$(status_json | jq -r '.capture.up')" = true ] || fail "capture.up should be true"

# Before: loss-free traffic, certain health.
pings 1 2 $B:7100 300
sleep 0.5
note "before: a->b state $(field a b state), health $(field a b health), lost $(status_json | jq -r .capture.lost)"
[ "$(status_json | jq -r .capture.lost)" -eq 0 ] || fail "losses before the freeze"
[ "$(field a b state)" = ok ] && [ "$(field a b health)" = 1 ] || fail "a->b should be ok with health 1 before the freeze"
[ "$(field a b capture_complete)" = true ] || fail "capture_complete should be true before the freeze"

# Frozen: the ring buffers (8 MiB in all here, ~80k records) cannot hold 4 halves x 40k round trips.
kill -STOP "$AGENT_PID"
t0=$(date +%s.%N)
pings 1 2 $B:7101 40000
frozen=$(echo "$(date +%s.%N) - $t0" | bc)
kill -CONT "$AGENT_PID"
note "agent frozen ${frozen}s under $(cat "$WORK/ping.out")"
sleep 1  # the backlog drains, the counters are read (every 100 ms)

s=$(status_json)
lost=$(jq -r .capture.lost <<<"$s")
ringbuf=$(metrics | sed -n 's/^skewscope_events_lost_total{reason="ring_buffer_full"} //p')
window_lost=$(jq -r .capture.window_lost_halves <<<"$s")
note "after SIGCONT: capture.lost $lost (ring_buffer_full $ringbuf), window_lost_halves $window_lost," \
     "submitted $(jq -r .capture.submitted <<<"$s"), read $(jq -r .capture.read <<<"$s")"
[ "$(jq -r .capture.read <<<"$s")" -le "$(jq -r .capture.submitted <<<"$s")" ] || fail "more records read than submitted"
[ "$ringbuf" -gt 0 ] || fail "the ring buffer should have overflowed while the agent was frozen"
[ "$window_lost" -gt 0 ] || fail "the losses should be in the health window"
jq -e '.health == null' <<<"$s" >/dev/null || fail "overall health should be null with losses in the window"
for dir in "a b" "b a"; do
  set -- $dir
  p=$(jq -c --arg s "$1" --arg d "$2" '.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")' <<<"$s")
  note "$1->$2: $(jq -c '{health, state, capture_complete, window_lost_halves, window_spans, last_span_age_seconds}' <<<"$p")"
  jq -e '.health == null and .state == "unknown" and .capture_complete == false and .window_lost_halves > 0' \
    <<<"$p" >/dev/null || fail "$1->$2 should be unknown (health null) while its window holds losses"
done
metrics >"$WORK/metrics.txt"
grep -q '^skewscope_pair_capture_complete{src="a",dst="b"} 0$' "$WORK/metrics.txt" || fail "capture_complete metric should be 0"
! grep -q '^skewscope_pair_causality_health{' "$WORK/metrics.txt" || fail "no pair health sample while unknown"
! grep -q '^skewscope_causality_health ' "$WORK/metrics.txt" || fail "no overall health sample while unknown"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 || { cat "$WORK/promtool.out"; fail "promtool check metrics"; }
set +e; "$SKEWSCOPE" status --agent "$AGENT_URL" >/dev/null; rc=$?; set -e
[ $rc -eq 1 ] || fail "status should not exit 0 (healthy) while health is unknown, got $rc"

# After the window (8 s) has passed: fresh traffic, certain again.
sleep 8
pings 1 2 $B:7102 300
sleep 0.5
s=$(status_json)
note "recovered: a->b state $(field a b state), health $(field a b health), window_lost_halves $(jq -r .capture.window_lost_halves <<<"$s")"
[ "$(jq -r .capture.window_lost_halves <<<"$s")" -eq 0 ] || fail "losses should have left the window"
[ "$(field a b state)" = ok ] && [ "$(field a b health)" = 1 ] || fail "a->b should be ok with health 1 again"
[ "$(field b a state)" = ok ] && [ "$(field b a health)" = 1 ] || fail "b->a should be ok with health 1 again"
jq -e '.health == 1' <<<"$s" >/dev/null || fail "overall health should be 1 again"
grep -q '^skewscope_pair_capture_complete{src="a",dst="b"} 1$' <<<"$(metrics)" || fail "capture_complete metric should be 1 again"
echo "capture_loss: 1 passed, 0 failed"
