#!/usr/bin/env bash
# SIGTERM detaches the BPF programs first and the agent exits within 3 s whatever HTTP clients do;
# a second SIGTERM exits at once with a non-zero status. The agent's BPF links are counted in its
# own /proc/PID/fd (bpf-link and perf_event descriptors), so other agents on the machine do not
# interfere.
source "$(dirname "$0")/lib.sh"

bpf_fds() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'anon_inode:bpf-link\|anon_inode:\[perf_event\]' || true; }
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
reap() {  # reap: the agent's exit status in RC; the agent is no longer cleanup's to kill
  RC=0
  wait "$AGENT_PID" || RC=$?
  AGENT_PID=
}
slow_client() {  # a request whose headers never end: the server keeps a thread reading it
  local port=${AGENT_URL##*:}
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&3
}

# 1. No client: a clean, prompt exit.
start_agent --host-name shutdown
links=$(bpf_fds "$AGENT_PID")
[ "$links" -gt 0 ] || fail "no BPF link descriptors found in /proc/$AGENT_PID/fd"
t0=$(now); kill -TERM "$AGENT_PID"
while alive "$AGENT_PID"; do sleep 0.02; done
took=$(elapsed "$t0"); reap; rc=$RC
note "no client: $links BPF links, exited $rc after ${took}s"
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM, expected 0"
approx_ge 3 "$took" || fail "shutdown took ${took}s (more than 3 s)"
grep -q 'BPF programs detached' "$WORK/agent.log" || fail "no detach in the log"

# 2. A client that never finishes its request: BPF detached at once, exit within 3 s.
start_agent --host-name shutdown
slow_client
sleep 0.2
t0=$(now); kill -TERM "$AGENT_PID"
detached=
while alive "$AGENT_PID"; do
  if [ -z "$detached" ] && [ "$(bpf_fds "$AGENT_PID")" -eq 0 ] && alive "$AGENT_PID"; then detached=$(elapsed "$t0"); fi
  sleep 0.02
done
took=$(elapsed "$t0"); reap; rc=$RC; exec 3>&-
note "slow client: BPF detached after ${detached:-?}s (while still running), exited $rc after ${took}s"
approx_ge 3 "$took" || fail "shutdown with a slow client took ${took}s (more than 3 s)"
# Detached first: before the servers stop, so before a forced exit when a client holds them.
detach_line=$(grep -n 'BPF programs detached' "$WORK/agent.log" | cut -d: -f1 || true)
[ -n "$detach_line" ] || fail "no detach in the log"
forced_line=$(grep -n 'exiting now' "$WORK/agent.log" | cut -d: -f1 || true)  # none: no forced exit was needed
if [ -n "$forced_line" ]; then
  [ "$detach_line" -lt "$forced_line" ] || fail "the forced exit came before the BPF programs were detached"
  [ -n "$detached" ] || fail "the agent kept its BPF links until it exited"
fi

# 3. A second SIGTERM while the first is still shutting down: immediate, non-zero.
start_agent --host-name shutdown
slow_client
sleep 0.2
kill -TERM "$AGENT_PID"
sleep 0.3
# The first shutdown may end between the check and the second signal: then it was not needed.
if alive "$AGENT_PID" && t0=$(now) && kill -TERM "$AGENT_PID" 2>/dev/null; then
  while alive "$AGENT_PID"; do sleep 0.01; done
  took=$(elapsed "$t0"); reap; rc=$RC; exec 3>&-
  note "second SIGTERM: exited $rc after ${took}s"
  [ "$rc" -ne 0 ] || fail "a second SIGTERM should exit non-zero"
  approx_ge 0.5 "$took" || fail "second SIGTERM took ${took}s"
  grep -q 'second signal' "$WORK/agent.log" || fail "no 'second signal' in the log"
else
  reap; rc=$RC; exec 3>&-
  note "second SIGTERM: not needed, the first shutdown was already complete (exit $rc) within 0.3 s"
fi
echo "agent_shutdown: 1 passed, 0 failed"
