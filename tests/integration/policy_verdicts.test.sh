#!/usr/bin/env bash
# Confidence policies judged on real lab traffic (docs/policies.md): two lab hosts ping each other
# on one shared clock while the agent simulates clock error for one of them.
#  - no simulated error: the pair's offset bound (tens of µs) is within 1ms: `loose` is met, its
#    gate exits 0, skewscope_policy_met 1, spans trusted; `strict` (1us, below the lab's one-way
#    delay) is unknown with bound_too_wide: nothing proves its need unmet, nothing proves it met;
#  - `near`: reloaded with a precision of half the interval's settled half-width: unknown again;
#  - 2ms of simulated error (above 1ms): inversions, `loose` violated, gate 1, spans untrusted,
#    degraded mode entered (with hysteresis); back to 0 and a window later: met again;
#  - one-way traffic (a TCP stream a -> b): one-sided interval, unknown;
#  - halves lost (agent frozen while the ring buffers overflow): unknown, halves_lost;
#  - silence: no spans in the window, unknown (never met).
source "$(dirname "$0")/lib.sh"
# json_ok URL FILTER: the URL answers 200 with JSON that FILTER finds true (an empty or failed
# answer is false: jq -e alone accepts empty input).
json_ok() { local body; body=$(curl -sf --max-time 5 "$1") && [ -n "$body" ] && jq -e "$2" <<<"$body" >/dev/null; }

lab_up 2
B=10.77.0.2
POLICIES=$WORK/policies.yaml
write_policies() {  # write_policies NEAR_PRECISION
  cat >"$POLICIES.new" <<YAML
policies:
  - name: loose
    precision: 1ms
    domains: [a, b]
    transports: tcp
  - name: strict
    precision: 1us
    domains: [a, b]
    degraded: {untrusted_spans: false}
  - name: near
    precision: $1
    domains: ["?"]
    degraded: {untrusted_spans: false}
YAML
  mv "$POLICIES.new" "$POLICIES"  # a whole new file: the agent never reads half of one
}
write_policies 1ms
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 2s --send-max-age 1s --enable-spans-api --policy-file "$POLICIES"

policy() { curl -sf --max-time 5 "$AGENT_URL/api/v1/policies?policy=$1" | jq -c '.policies[0]'; }
verdict() { policy "$1" | jq -r '"\(.verdict) \(.reason)"'; }
is_verdict() { [ "$(verdict "$1")" = "$2" ]; }
gate() { set +e; "$SKEWSCOPE" gate --agent "$AGENT_URL" --policy "$@" >"$WORK/gate.out" 2>&1; GATE_RC=$?; set -e; }
expect() {  # expect POLICY "VERDICT REASON" SECONDS
  wait_until "$3" is_verdict "$1" "$2" || fail "$1 should be '$2' within $3 s, is '$(verdict "$1")': $(policy "$1")"
  note "$1: $2 $(policy "$1" | jq -c '.pairs[0] | {spans, negative_spans, bound_seconds, offset_lower_seconds, offset_upper_seconds}')"
}
metric() { curl -sf --max-time 5 "$AGENT_URL/metrics" | sed -n "s/^$1 //p"; }
span_trust() {  # the trusted field of the newest a/b span
  curl -sf --max-time 5 "$AGENT_URL/api/v1/spans?limit=1" | jq -r '.spans[0].trusted'
}
PING=
# Background traffic runs under ip netns exec itself (not the in_host function, whose subshell's
# pid would be the one killed), so that killing its pid ends the traffic.
in_bg() { local i=$1; shift; ip netns exec "$LAB_NAME-h$i" "$@" & BACKGROUND+=("$!"); }
start_pings() {  # request/response a -> b -> a at 200/s until stop_pings
  in_bg 2 "$TRAFFIC" echo-server --listen $B:"$1" --duration 60 >/dev/null
  sleep 0.3
  in_bg 1 "$TRAFFIC" ping --connect $B:"$1" --size 64 --rate 200 --duration 60 >/dev/null
  PING=$!
}
stop_pings() { kill "$PING" 2>/dev/null || true; wait "$PING" 2>/dev/null || true; }

# Before any traffic: nothing is met.
expect loose "unknown no_pairs" 5
gate loose; [ $GATE_RC -eq 4 ] || fail "gate without traffic should exit 4 (unknown), got $GATE_RC: $(cat "$WORK/gate.out")"

# 1. Shared clock, no simulated error.
start_pings 7300
expect loose "met within_precision" 10
gate loose; [ $GATE_RC -eq 0 ] || fail "gate should exit 0 while loose is met, got $GATE_RC: $(cat "$WORK/gate.out")"
[ "$(metric 'skewscope_policy_met{policy="loose",tenant=""}')" = 1 ] || fail "skewscope_policy_met should be 1 for loose"
[ "$(span_trust)" = true ] || fail "spans of a met pair should carry trusted=true"
expect strict "unknown bound_too_wide" 5
[ "$(metric 'skewscope_policy_met{policy="strict",tenant=""}')" = 0 ] || fail "skewscope_policy_met should be 0 for strict"
gate strict; [ $GATE_RC -eq 4 ] || fail "gate should exit 4 for strict (unknown), got $GATE_RC"

# 2. Near: a precision under what this traffic can prove. The interval's half-width is about half
# the minimum round trip, so it narrows while the first window fills, then stays: after a full
# window of steady pings, half of it is a precision the pair cannot be shown to meet.
sleep 2
half=$(policy loose | jq -r '.pairs[0] | (.offset_upper_seconds - .offset_lower_seconds) / 2')
near=$(awk -v h="$half" 'BEGIN { printf "%dns", h * 1e9 * 0.5 }')
write_policies "$near"
wait_until 5 json_ok "$AGENT_URL/api/v1/policies?policy=near" '.policies[0].precision_seconds < 0.001' ||
  fail "the changed file was not reloaded"
expect near "unknown bound_too_wide" 5
note "near: precision $near, half the interval's half-width (${half}s)"

# 3. 2 ms of simulated error on b: inversions, violated; degraded mode after the hysteresis.
"$SKEWSCOPE" simulate --control-socket "$CONTROL" b=+2ms >/dev/null
expect loose "violated inversion" 5
gate loose; [ $GATE_RC -eq 1 ] || fail "gate should exit 1 while loose is violated, got $GATE_RC: $(cat "$WORK/gate.out")"
[ "$(span_trust)" = false ] || fail "spans of a violated pair should carry trusted=false"
wait_until 6 json_ok "$AGENT_URL/api/v1/policies?policy=loose" '.policies[0].degraded' ||
  fail "loose should enter its degraded mode"
[ "$(metric 'skewscope_policy_degraded{policy="loose",tenant=""}')" = 1 ] || fail "skewscope_policy_degraded should be 1"

# 4. Back to no error: met again once the inversions have left the window (2 s).
"$SKEWSCOPE" simulate --control-socket "$CONTROL" b=0 >/dev/null
expect loose "met within_precision" 10
wait_until 6 json_ok "$AGENT_URL/api/v1/policies?policy=loose" '.policies[0].degraded == false and .policies[0].resolved_total == 1' ||
  fail "loose should leave its degraded mode once met again: $(policy loose)"
stop_pings

# 5. One-way: a TCP stream a -> b bounds the offset from one side only.
in_bg 2 "$TRAFFIC" tcp-sink --listen $B:7301 --duration 30 >/dev/null
sleep 0.3
in_bg 1 "$TRAFFIC" tcp-source --connect $B:7301 --rate 200 --duration 30 >/dev/null
STREAM=$!
expect loose "unknown one_sided" 10
gate loose; [ $GATE_RC -eq 4 ] || fail "gate should exit 4 for a one-sided pair, got $GATE_RC"
kill "$STREAM" 2>/dev/null || true

# 6. Losses: the agent frozen while pings overflow its ring buffers (as capture_loss.test.sh).
sleep 2.5  # the one-way window passes
in_bg 2 "$TRAFFIC" echo-server --listen $B:7302 --duration 60 >/dev/null
sleep 0.3
kill -STOP "$AGENT_PID"
in_host 1 "$TRAFFIC" ping --connect $B:7302 --size 64 --count 40000 >/dev/null
kill -CONT "$AGENT_PID"
expect loose "unknown halves_lost" 5

# 7. Silence: the window empties; an empty window is never met.
expect loose "unknown no_spans" 10
echo "policy_verdicts: 1 passed, 0 failed"
