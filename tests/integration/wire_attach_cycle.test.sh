#!/usr/bin/env bash
# --wire-timestamps attaches only to the interfaces it names and leaves nothing behind:
#  - 20 start/stop cycles with host 1 (no qdisc before) and host 2 (a clsact the operator had
#    already added): after each stop no filter of ours on either, host 1 without clsact, host 2's
#    clsact still there, no wire program loaded; host 3's eth0 (never named) never gets a qdisc;
#  - crash recovery: after a SIGKILL the filters stay (tc filters outlive their loader); the next
#    agent replaces them and, on its exit, removes them and the clsact the dead agent created.
source "$(dirname "$0")/lib.sh"

lab_up 3
in_host 2 tc qdisc add dev eth0 clsact
WIRE="eth0@$(netns_path 1),eth0@$(netns_path 2)"

has_clsact() { [[ $(in_host "$1" tc qdisc show dev eth0) == *clsact* ]]; }
our_filters() { { in_host "$1" tc filter show dev eth0 ingress; in_host "$1" tc filter show dev eth0 egress; } 2>/dev/null | grep -c 'wire_' || true; }
wire_programs() { bpftool prog show 2>/dev/null | grep -cE 'name wire_(ingress|egress)' || true; }
no_wire_programs() { [ "$(wire_programs)" -eq 0 ]; }
check_clean() {  # check_clean WHEN
  [ "$(our_filters 1)" -eq 0 ] && [ "$(our_filters 2)" -eq 0 ] || fail "$1: wire filters left behind"
  has_clsact 1 && fail "$1: host 1 keeps the clsact the agent created"
  has_clsact 2 || fail "$1: host 2 lost the clsact the operator had added"
  has_clsact 3 && fail "$1: host 3 (never named) got a clsact"
  # Freed by the kernel after an RCU grace period: gone within 3 s of the agent's exit.
  wait_until 3 no_wire_programs || fail "$1: wire programs still loaded 3 s after the agent stopped"
  return 0
}
[ "$(wire_programs)" -eq 0 ] || fail "wire programs already loaded before the test (another agent running?)"

for i in $(seq 1 20); do
  start_agent --domain a=netns:"$(netns_path 1)" --only-domains --wire-timestamps "$WIRE"
  [ "$(our_filters 1)" -eq 2 ] && [ "$(our_filters 2)" -eq 2 ] || fail "cycle $i: filters not attached on both hosts"
  has_clsact 3 && fail "cycle $i: host 3 (never named) got a clsact"
  kill "$AGENT_PID"; wait "$AGENT_PID" || fail "cycle $i: agent exited non-zero"; AGENT_PID=
  check_clean "cycle $i"
done
note "20 start/stop cycles: nothing left behind, host 3 untouched"

start_agent --domain a=netns:"$(netns_path 1)" --only-domains --wire-timestamps "$WIRE"
kill -KILL "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true; AGENT_PID=
[ "$(our_filters 1)" -eq 2 ] || fail "after SIGKILL the filters should still be there (nothing detaches them)"
note "after SIGKILL: $(our_filters 1) filters on host 1, clsact $(has_clsact 1 && echo present)"
start_agent --domain a=netns:"$(netns_path 1)" --only-domains --wire-timestamps "$WIRE"
[ "$(our_filters 1)" -eq 2 ] || fail "restarted agent: expected exactly its own 2 filters on host 1"
kill "$AGENT_PID"; wait "$AGENT_PID" || fail "restarted agent exited non-zero"; AGENT_PID=
check_clean "after crash recovery"

# Bad input: a clear error and exit 2 (usage) or 1 (runtime), never an attach elsewhere.
set +e
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/c2.sock" --wire-timestamps "eth0@relative/path" \
  >"$WORK/bad.log" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "absolute path" "$WORK/bad.log" || fail "relative namespace path: rc $rc, $(cat "$WORK/bad.log")"
set +e
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/c3.sock" \
  --wire-timestamps "nosuch0@$(netns_path 1)" >"$WORK/bad2.log" 2>&1; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no interface nosuch0" "$WORK/bad2.log" || fail "missing interface: rc $rc, $(cat "$WORK/bad2.log")"
check_clean "after refused starts"
echo "wire_attach_cycle: 1 passed, 0 failed"
