#!/usr/bin/env bash
# `skewscope status|top --agent URL --agent URL`: one merged view over two real agents.
# Agent A sees hosts a, b (window 2 s); agent B sees a, b, c (window 60 s) with c's clock 5 ms behind.
#  - every (src, dst, transport) appears once; b->c is violated (from B): health 0, exit 1;
#  - once A's window of a->b is empty (unknown), the merged a->b is B's report;
#  - a violation wins over an unreachable agent (exit 1); without one, unreachable is exit 3, health
#    null, and the output says which agent;
#  - one --agent prints exactly the agent's own status (no merge fields).
source "$(dirname "$0")/lib.sh"

lab_up 3
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 2s --send-max-age 2s
A_URL=$AGENT_URL

# A second agent, on its own port, control socket and log.
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/control_b.sock" \
  --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --domain c=netns:"$(netns_path 3)" \
  --only-domains --window 60s --send-max-age 2s --simulate-clock c=-5ms >"$WORK/agent_b.log" 2>&1 &
B_PID=$!
BACKGROUND+=($B_PID)
b_port() { sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/agent_b.log" 2>/dev/null; }
b_started() { [ -n "$(b_port)" ]; }
wait_until 10 b_started || { cat "$WORK/agent_b.log"; fail "agent B did not start"; }
B_URL=http://127.0.0.1:$(b_port)
note "agent A $A_URL, agent B $B_URL"

merged() { "$SKEWSCOPE" status --agent "$A_URL" --agent "$B_URL" --json || true; }
merged_pair() {  # merged_pair SRC DST FIELD
  merged | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")] | if length == 1 then .[0][$f] else "count \(length)" end'
}

# 1. Traffic a->b (seen by both agents) and b->c (only B).
pings 1 2 10.77.0.2:7002 500
pings 2 3 10.77.0.3:7003 500
sleep 0.5  # the agents read their ring buffers every 20 ms
out=$(merged)
echo "$out" | jq -c '.agents'
[ "$(echo "$out" | jq '[.agents[] | select(.reachable)] | length')" -eq 2 ] || fail "both agents should be reachable"
for p in a:b b:a b:c c:b; do
  n=$(echo "$out" | jq --arg s "${p%:*}" --arg d "${p#*:}" '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")] | length')
  [ "$n" -eq 1 ] || fail "pair ${p/:/->} appears $n times in the merged view, expected once"
done
[ "$(echo "$out" | jq -r '[.pairs[] | select(.src=="b" and .dst=="c")][0].state')" = violated ] || fail "b->c should be violated"
[ "$(echo "$out" | jq -r '[.pairs[] | select(.src=="b" and .dst=="c")][0].agent')" = "$B_URL" ] || fail "b->c must come from B"
[ "$(echo "$out" | jq '.health')" = 0 ] || fail "merged health should be 0"
rc=0; "$SKEWSCOPE" status --agent "$A_URL" --agent "$B_URL" >"$WORK/merged.txt" || rc=$?
[ $rc -eq 1 ] || fail "merged status exit $rc, expected 1 (a pair violated)"
grep -q "agents (2 of 2 reachable)" "$WORK/merged.txt" || { cat "$WORK/merged.txt"; fail "no agents section"; }
# A's window (2 s) may have emptied during b->c: a->b traffic at 200/s while A is asked, so that its
# pairs have evidence whenever it answers, until b's unpaired sends to c (A does not see c) have
# aged out of A's window. Under load that takes a few seconds, not a fixed moment.
in_host 2 "$TRAFFIC" echo-server --listen 10.77.0.2:7012 --duration 30 >/dev/null &
BACKGROUND+=($!)
sleep 0.3
ip netns exec "$LAB_NAME-h1" "$TRAFFIC" ping --connect 10.77.0.2:7012 --size 64 --rate 200 --duration 30 >/dev/null &  # not in_host: $! must be the pinger itself
a_pings=$!
BACKGROUND+=($a_pings)
rc=1
for _ in $(seq 1 20); do
  sleep 0.5
  rc=0; "$SKEWSCOPE" status --agent "$A_URL" >"$WORK/alone.txt" || rc=$?
  [ $rc -eq 0 ] && break
done
kill "$a_pings" 2>/dev/null || true; wait "$a_pings" 2>/dev/null || true
[ $rc -eq 0 ] || { cat "$WORK/alone.txt"; fail "agent A alone is healthy, exit $rc"; }
lines=$("$SKEWSCOPE" top --agent "$A_URL" --agent "$B_URL" --once --json | wc -l)
[ "$lines" -eq 1 ] || fail "top --once --json printed $lines lines"
"$SKEWSCOPE" top --agent "$A_URL" --agent "$B_URL" --once --json | jq -e '.agents | length == 2' >/dev/null \
  || fail "top --json has no agents list"

# 2. A's 2 s window of a->b empties: unknown on A, so the merged a->b is B's.
a_unknown() {
  [ "$("$SKEWSCOPE" status --agent "$A_URL" --json | jq -r '[.pairs[] | select(.src=="a" and .dst=="b")][0].state')" = unknown ]
}
wait_until 10 a_unknown || fail "A's a->b never went unknown"
[ "$(merged_pair a b agent)" = "$B_URL" ] || fail "merged a->b should be B's known report, got $(merged_pair a b agent)"
[ "$(merged_pair a b state)" != unknown ] || fail "merged a->b is unknown although B knows it"
note "a->b: A unknown, merged shows B's $(merged_pair a b state) with $(merged_pair a b window_spans) window spans"

# 3. One agent alone prints the agent's own status: same fields as the API, no merge fields.
api_keys=$(curl -sf "$A_URL/api/v1/status" | jq -c 'keys')
# (A's a->b is unknown by now, so status exits 1: only its output matters here.)
cli_keys=$({ "$SKEWSCOPE" status --agent "$A_URL" --json || true; } | jq -c 'keys')
[ "$api_keys" = "$cli_keys" ] || fail "single-agent JSON changed: $cli_keys vs $api_keys"

# 4. A violation seen is certain: it wins over an unreachable agent.
dead=http://127.0.0.1:1
rc=0; "$SKEWSCOPE" status --agent "$B_URL" --agent "$dead" --json >"$WORK/dead.json" || rc=$?
[ $rc -eq 1 ] || fail "violated + unreachable should exit 1, got $rc"
jq -e --arg u "$dead" '.agents[1] | .url == $u and .reachable == false and (.error | length > 0)' "$WORK/dead.json" >/dev/null \
  || fail "the unreachable agent is not reported in .agents"

# 5. B gone, nothing violated on A: exit 3, health null, and the output names B.
kill "$B_PID"
wait "$B_PID" 2>/dev/null || true
rc=0; "$SKEWSCOPE" status --agent "$A_URL" --agent "$B_URL" >"$WORK/gone.txt" 2>&1 || rc=$?
[ $rc -eq 3 ] || { cat "$WORK/gone.txt"; fail "unreachable agent should exit 3, got $rc"; }
grep -q "causality_health unknown: agent $B_URL unreachable" "$WORK/gone.txt" || { cat "$WORK/gone.txt"; fail "output does not say which agent"; }
[ "$(merged | jq '.health')" = null ] || fail "merged health should be null with an agent unreachable"
rc=0; "$SKEWSCOPE" top --agent "$A_URL" --agent "$B_URL" 0.2 2 >/dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "top should keep refreshing and exit 3 with an agent unreachable, got $rc"
note "ok"
