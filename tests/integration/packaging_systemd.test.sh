#!/usr/bin/env bash
# The systemd unit's capability set is enough, and every capability in it is needed: the unit's
# ExecStart runs under capsh with exactly the unit's CapabilityBoundingSet (root, no new
# privileges, nothing inheritable: what systemd gives a root service with that set) against a
# two-host lab, and pairs its traffic as tcp_pairing does; then once more without each capability
# of the set, when it must fail. Like a systemd host, tracefs is mounted (in a private mount
# namespace of this test, so nothing is left on the machine).
source "$(dirname "$0")/node_mounts.sh"
source "$(dirname "$0")/lib.sh"

UNIT=$SOURCE/packaging/systemd/skewscope.service
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
[ -n "$caps" ] && [ -n "$exec_start" ] || fail "unit lacks CapabilityBoundingSet or ExecStart"
note "unit capabilities: $caps; ExecStart: $exec_start"
# The unit's command, with the build's binary and a configuration for the lab.
cmd=${exec_start/\/usr\/bin\/skewscope/$SKEWSCOPE}
cmd=${cmd/\/etc\/skewscope\/agent.conf/$WORK/agent.conf}

lab_up 2
B=10.77.0.2
cat >"$WORK/agent.conf" <<CONF
listen = "127.0.0.1:0"
control-socket = "$CONTROL"
domain = ["a=netns:$(netns_path 1)", "b=netns:$(netns_path 2)"]
only-domains = true
window = "2s"
send-max-age = "2s"
CONF

all=$(capsh --print | sed -n 's/^Bounding set =//p')
# run_unit KEEP: the unit's command with bounding set KEEP (comma-separated, lower case).
run_unit() {
  local drop
  drop=$(tr ',' '\n' <<<"$all" | grep -vxF -f <(tr ',' '\n' <<<"$1") | paste -sd, || true)
  capsh --drop="$drop" --inh= --no-new-privs -- -c "exec $cmd" >"$WORK/agent.log" 2>&1 &
  AGENT_PID=$!
}
keep=$(tr ' ' '\n' <<<"$caps" | tr 'A-Z' 'a-z' | paste -sd,)

run_unit "$keep"
AGENT_URL=$(agent_url_from_log "$AGENT_PID" "$WORK/agent.log" "agent with the unit's capabilities")
in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 60 >/dev/null &
server=$!
in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --count 1000 >/dev/null
wait $server || true
sleep 3  # let the last halves in and unpaired sends age out (--send-max-age 2s)
spans=$(pair_field a b spans); back=$(pair_field b a spans)
note "with $keep: a->b $spans spans, b->a $back, negative $(pair_field a b negative_spans)/$(pair_field b a negative_spans)"
[ "$spans" -eq 1000 ] || fail "expected exactly 1000 a->b spans, got $spans"
[ "$back" -ge 1000 ] || fail "replies b->a not paired"
[ "$(pair_field a b negative_spans)" -eq 0 ] && [ "$(pair_field b a negative_spans)" -eq 0 ] ||
  fail "negative spans with one shared clock"
[ "$(status_json | jq -r '.capture.lost')" -eq 0 ] || fail "events lost"
kill "$AGENT_PID"; wait "$AGENT_PID" || fail "agent did not stop cleanly on SIGTERM"
AGENT_PID=

# Each capability is needed: without it the agent cannot start its capture (it exits 1).
for cap in ${keep//,/ }; do
  run_unit "$(tr ',' '\n' <<<"$keep" | grep -vxF "$cap" | paste -sd, || true)"
  for _ in $(seq 1 150); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$AGENT_PID" 2>/dev/null && fail "the agent still runs 15 s after starting without $cap: it is not needed"
  set +e; wait "$AGENT_PID"; rc=$?; set -e
  AGENT_PID=
  note "without $cap: exit $rc: $(grep . "$WORK/agent.log" | tail -1)"
  [ $rc -ne 0 ] || fail "the agent ran without $cap: it is not needed"
done
echo "packaging_systemd: 1 passed, 0 failed"
