#!/usr/bin/env bash
# Never "healthy" without evidence: two lab hosts ping, then go silent for
# longer than the window (2 s). The pairs must turn unknown with health null (reason
# no_spans_in_window), keep last_span_age_seconds, leave /metrics' health families, and make
# `skewscope status` exit 1; fresh traffic makes them healthy again (exit 0).
source "$(dirname "$0")/lib.sh"

lab_up 2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 2s --send-max-age 1s
B=10.77.0.2
# One snapshot per phase: the status JSON, the text and the exit code of `skewscope status`.
snapshot() {
  set +e
  "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json"; SNAP_RC=$?
  "$SKEWSCOPE" status --agent "$AGENT_URL" >"$WORK/snap.txt"
  set -e
  curl -sf "$AGENT_URL/metrics" >"$WORK/metrics.txt" || fail "scrape failed"
}
pair() { jq -c --arg s "$1" --arg d "$2" '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0]' "$WORK/snap.json"; }

# 1. Traffic: both pairs ok, health 1, exit 0.
pings 1 2 $B:7000 300
snapshot
note "busy: health $(jq .health "$WORK/snap.json"), a->b $(pair a b | jq -c '{health, state, window_spans}')"
[ "$(jq .health "$WORK/snap.json")" = 1 ] || fail "health should be 1 with traffic"
[ $SNAP_RC -eq 0 ] || { cat "$WORK/snap.txt"; fail "status should exit 0 with traffic, got $SNAP_RC"; }

# 2. Silence for longer than the window.
sleep 3
snapshot
for dir in "a b" "b a"; do
  set -- $dir
  p=$(pair "$1" "$2")
  note "silent $1->$2: $(jq -c '{health, state, unknown_reason, window_spans, last_span_age_seconds}' <<<"$p")"
  jq -e '.health == null and .state == "unknown" and .unknown_reason == "no_spans_in_window"
         and .window_spans == 0 and .spans >= 300' <<<"$p" >/dev/null ||
    fail "$1->$2 should be unknown with health null once its window is empty"
  jq -e '(.last_span_age_seconds | type) == "number" and .last_span_age_seconds >= 2' <<<"$p" >/dev/null ||
    fail "$1->$2: last_span_age_seconds should be kept (>= 2 s) when the window is empty"
done
jq -e '.health == null and .unknown_reason == "no_pair_known" and (.health_reason | startswith("unknown: "))' \
  "$WORK/snap.json" >/dev/null || fail "overall health should be null (no pair known): $(jq -c '{health, unknown_reason, health_reason}' "$WORK/snap.json")"
[ $SNAP_RC -eq 1 ] || { cat "$WORK/snap.txt"; fail "status should exit 1 while no pair has evidence, got $SNAP_RC"; }
grep -q "a -> b tcp: health unknown, no_spans_in_window" "$WORK/snap.txt" || { cat "$WORK/snap.txt"; fail "the table does not say why a->b is unknown"; }
! grep -q '^skewscope_pair_causality_health{' "$WORK/metrics.txt" || fail "no pair health sample for a silent pair"
! grep -q '^skewscope_causality_health ' "$WORK/metrics.txt" || fail "no overall health sample without evidence"
grep -q '^skewscope_health_unknown{reason="no_pair_known"} 1$' "$WORK/metrics.txt" || fail "skewscope_health_unknown does not say why"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 || { cat "$WORK/promtool.out"; fail "promtool check metrics"; }

# 3. Traffic again: healthy, exit 0.
pings 1 2 $B:7000 300
snapshot
[ "$(jq .health "$WORK/snap.json")" = 1 ] && [ "$(pair a b | jq .health)" = 1 ] && [ "$(pair b a | jq .health)" = 1 ] ||
  fail "health should be 1 again with fresh traffic: $(jq -c '[.health, (.pairs[] | .health)]' "$WORK/snap.json")"
[ $SNAP_RC -eq 0 ] || { cat "$WORK/snap.txt"; fail "status should exit 0 again, got $SNAP_RC"; }
grep -q '^skewscope_causality_health 1$' "$WORK/metrics.txt" || fail "overall health 1 should be exported again"
echo "evidence_empty_window: 1 passed, 0 failed"
