#!/usr/bin/env bash
# The policy file's life in a running agent, and the gate's exit codes (docs/policies.md):
#  - `skewscope policy check` exits 0 on a good file and 2 naming the line of a bad one; an agent
#    started with a bad file exits 2;
#  - a changed file is reloaded; a bad one is refused whole (the policies before stay in force,
#    the refusal logged, counted and shown with its line); SIGHUP reloads a change the file's
#    size and mtime do not show;
#  - gate: 0 met, 1 violated, 4 unknown (no traffic, or a policy the agent does not have),
#    3 unreachable, 2 usage; --wait returns 0 as soon as the policy is met, or 4 when it runs out.
source "$(dirname "$0")/lib.sh"
# json_ok URL FILTER: the URL answers 200 with JSON that FILTER finds true (an empty or failed
# answer is false: jq -e alone accepts empty input).
json_ok() { local body; body=$(curl -sf --max-time 5 "$1") && [ -n "$body" ] && jq -e "$2" <<<"$body" >/dev/null; }

POLICIES=$WORK/policies.yaml
cat >"$POLICIES" <<'YAML'
policies:
  - name: pipeline
    precision: 1ms
    domains: [a, b]
YAML
printf 'policies:\n  - name: pipeline\n    precision: 1ms\n    domains: [a, b]\n    min_spans: none\n' >"$WORK/bad.yaml"

# policy check, and a bad file at start.
"$SKEWSCOPE" policy check "$POLICIES" >"$WORK/check.out" || fail "policy check should accept the good file"
set +e
"$SKEWSCOPE" policy check "$WORK/bad.yaml" 2>"$WORK/check.err"; rc=$?
set -e
[ $rc -eq 2 ] || fail "policy check should exit 2 on a bad file, got $rc"
grep -q "bad.yaml: line 5: min_spans" "$WORK/check.err" || fail "policy check should name the line: $(cat "$WORK/check.err")"
set +e
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/c2.sock" --policy-file "$WORK/bad.yaml" 2>"$WORK/start.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "line 5" "$WORK/start.err" || fail "an agent with a bad policy file should exit 2 naming the line, got $rc: $(cat "$WORK/start.err")"

lab_up 2
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 2s --send-max-age 1s --policy-file "$POLICIES"
policies() { curl -sf --max-time 5 "$AGENT_URL/api/v1/policies"; }
metric() { curl -sf --max-time 5 "$AGENT_URL/metrics" | sed -n "s/^$1 //p"; }
gate() {  # gate ARGS...: GATE_RC and the output in $WORK/gate.out
  set +e
  "$SKEWSCOPE" gate "$@" >"$WORK/gate.out" 2>&1; GATE_RC=$?
  set -e
}
expect_gate() {  # expect_gate RC ARGS...
  local want=$1; shift
  gate "$@"
  [ $GATE_RC -eq "$want" ] || fail "gate $* should exit $want, got $GATE_RC: $(cat "$WORK/gate.out")"
}
in_bg() { local i=$1; shift; ip netns exec "$LAB_NAME-h$i" "$@" & BACKGROUND+=("$!"); }
# A new file renamed into place, so the agent never reads half of one (it would refuse it, count
# the refusal, and load the whole file at its next change).
put_policies() { cat >"$POLICIES.tmp"; mv "$POLICIES.tmp" "$POLICIES"; }

# Reload of a changed file: a second policy appears.
printf 'policies:\n  - name: pipeline\n    precision: 1ms\n    domains: [a, b]\n  - name: audit\n    precision: 100us\n    domains: [a, b]\n' | put_policies
wait_until 5 json_ok "$AGENT_URL/api/v1/policies" '[.policies[].name] == ["pipeline", "audit"]' ||
  fail "the changed file should be reloaded: $(policies | jq -c '[.policies[].name]')"

# A bad file is refused whole: both policies stay, the refusal is counted and names its line.
put_policies <"$WORK/bad.yaml"
wait_until 5 json_ok "$AGENT_URL/api/v1/policies" '.file.rejected == 1' ||
  fail "the bad file should be refused: $(policies | jq -c .file)"
json_ok "$AGENT_URL/api/v1/policies" '[.policies[].name] == ["pipeline", "audit"] and (.file.last_error | test("line 5: min_spans"))' ||
  fail "the policies before should stay in force: $(policies | jq -c '{file, names: [.policies[].name]}')"
[ "$(metric 'skewscope_policy_file_loads_total{result="rejected"}')" = 1 ] || fail "the refusal should be counted"
grep -q "policy file rejected, the 2 policies before stay in force: .*line 5" "$WORK/agent.log" || fail "the refusal should be logged"

# SIGHUP: a change of the same size, inode and mtime is not seen by the watch, only when asked.
printf 'policies:\n  - name: pipeline\n    precision: 2ms\n    domains: [a, b]\n' | put_policies
wait_until 5 json_ok "$AGENT_URL/api/v1/policies" '.file.loads == 3 and .policies[0].precision_seconds == 0.002' ||
  fail "the fixed file should load: $(policies | jq -c .file)"
touch -r "$POLICIES" "$WORK/mtime.ref"
printf 'policies:\n  - name: pipeline\n    precision: 3ms\n    domains: [a, b]\n' >"$WORK/same-size.yaml"
kill -STOP "$AGENT_PID"  # the watch must not see the file between the write and the old mtime
dd if="$WORK/same-size.yaml" of="$POLICIES" conv=notrunc status=none  # same inode, same size
touch -r "$WORK/mtime.ref" "$POLICIES"                                # same mtime, to the nanosecond
kill -CONT "$AGENT_PID"
sleep 1.5
json_ok "$AGENT_URL/api/v1/policies" '.policies[0].precision_seconds == 0.002' || fail "test setup: the watch should not have seen this change"
kill -HUP "$AGENT_PID"
wait_until 5 json_ok "$AGENT_URL/api/v1/policies" '.policies[0].precision_seconds == 0.003' ||
  fail "SIGHUP should reload the file: $(policies | jq -c '.policies[0].precision_seconds')"
grep -q "SIGHUP: reloading the policy file" "$WORK/agent.log" || fail "the SIGHUP reload should be logged"
kill -0 "$AGENT_PID" || fail "SIGHUP must not stop the agent"

# The gate.
expect_gate 4 --agent "$AGENT_URL" --policy pipeline  # no traffic yet: unknown
grep -q "unknown (no_pairs" "$WORK/gate.out" || fail "the gate should say why: $(cat "$WORK/gate.out")"
expect_gate 4 --agent "$AGENT_URL" --policy nosuch
grep -q "no policy named 'nosuch'" "$WORK/gate.out" || fail "the gate should name the missing policy: $(cat "$WORK/gate.out")"
expect_gate 3 --agent http://127.0.0.1:1 --policy pipeline
expect_gate 2 --agent "$AGENT_URL" --policy pipeline --wait soon
expect_gate 2 --agent "$AGENT_URL"
start=$SECONDS
expect_gate 4 --agent "$AGENT_URL" --policy pipeline --wait 2s
[ $((SECONDS - start)) -ge 2 ] || fail "--wait 2s should poll for 2 s before giving up"

# --wait returns as soon as the traffic makes the policy met.
"$SKEWSCOPE" gate --agent "$AGENT_URL" --policy pipeline --wait 20s >"$WORK/wait.out" 2>&1 &
GATE_PID=$!
in_bg 2 "$TRAFFIC" echo-server --listen $B:7310 --duration 40 >/dev/null
sleep 0.3
in_bg 1 "$TRAFFIC" ping --connect $B:7310 --size 64 --rate 200 --duration 40 >/dev/null
set +e; wait $GATE_PID; rc=$?; set -e
[ $rc -eq 0 ] || fail "gate --wait should exit 0 once traffic makes the policy met, got $rc: $(cat "$WORK/wait.out")"
grep -q "policy pipeline: met" "$WORK/wait.out" || fail "gate should say met: $(cat "$WORK/wait.out")"
expect_gate 0 --agent "$AGENT_URL" --agent "$AGENT_URL" --policy pipeline
expect_gate 3 --agent "$AGENT_URL" --agent http://127.0.0.1:1 --policy pipeline  # one agent cannot vouch

# Violated: simulated error far above the precision.
"$SKEWSCOPE" simulate --control-socket "$CONTROL" b=+10ms >/dev/null
wait_until 5 sh -c "'$SKEWSCOPE' gate --agent '$AGENT_URL' --policy pipeline >/dev/null; [ \$? -eq 1 ]" ||
  fail "gate should exit 1 once the policy is violated: $(policies | jq -c '.policies[0] | {verdict, reason}')"
expect_gate 1 --agent "$AGENT_URL" --agent http://127.0.0.1:1 --policy pipeline  # a violation is certain
grep -q "violated (inversion" "$WORK/gate.out" || fail "the gate should say why: $(cat "$WORK/gate.out")"

# max_unknown: a policy with no evidence for longer than its limit counts as violated.
printf 'policies:\n  - name: pipeline\n    precision: 1ms\n    domains: [a, b]\n  - name: stale\n    precision: 1ms\n    domains: nobody\n    max_unknown: 1s\n' | put_policies
wait_until 5 json_ok "$AGENT_URL/api/v1/policies?policy=stale" '.policies[0].reason == "unknown_too_long"' ||
  fail "stale should turn violated after max_unknown: $(policies | jq -c '.policies[1]')"
expect_gate 1 --agent "$AGENT_URL" --policy stale
curl -sf --max-time 5 "$AGENT_URL/metrics" >"$WORK/metrics.txt"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 || { cat "$WORK/promtool.out"; fail "promtool check metrics"; }
grep -q '^skewscope_policy_verdict{policy="stale",tenant="",verdict="violated"} 1$' "$WORK/metrics.txt" ||
  fail "skewscope_policy_verdict should say violated for stale"
echo "policy_reload_gate: 1 passed, 0 failed"
