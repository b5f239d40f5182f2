#!/usr/bin/env bash
# The sock_ops send side (--wire-cgroup; Linux >= 6.14): the lab's traffic runs in a cgroup made
# for this test, whose sockets' sends are stamped by the TX timestamping callbacks; receives are
# stamped at tc ingress of each host's eth0. One clock: the wire level pairs >= 99 % of the
# syscall level's spans with zero negative spans, and no tc egress filter is attached.
source "$(dirname "$0")/lib.sh"

# Read whole before matching: `grep -q` quits at the match, and under pipefail the doctor's
# SIGPIPE on its later lines would read as "no".
doctor_out=$("$SKEWSCOPE" doctor 2>/dev/null)
if ! grep -q "^  yes sock_ops TX timestamping" <<<"$doctor_out"; then
  echo "wire_sockops: skipped, this kernel has no sock_ops TX timestamping callbacks"
  exit 0
fi
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG_ROOT" ] || { echo "wire_sockops: skipped, no cgroup v2 mount"; exit 0; }
CG=$CG_ROOT/skewscope-wire-$RUN_ID
mkdir "$CG"
# The lab's processes leave the cgroup with the lab; then it can be removed.
trap 'rc_=$?; set +e; [ -n "$LAB_NAME" ] && "$LAB" down "$LAB_NAME"; rmdir "$CG" 2>/dev/null; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 5s --send-max-age 2s --wire-timestamps "eth0@$(netns_path 1),eth0@$(netns_path 2)" --wire-cgroup "$CG"
grep -q "send side sock_ops" "$WORK/agent.log" || fail "the agent did not choose the sock_ops send side"
# Joins the cgroup before entering the host's namespace (ip netns exec remounts /sys there).
egress_filters=$({ in_host 1 tc filter show dev eth0 egress; in_host 2 tc filter show dev eth0 egress; } | grep -c wire_ || true)
[ "$egress_filters" -eq 0 ] || fail "tc egress filters attached although the send side is sock_ops"

in_cgroup "$CG" ip netns exec "$LAB_NAME-h2" "$TRAFFIC" echo-server --listen $B:7000 --duration 9 >/dev/null &
server=$!
in_cgroup "$CG" ip netns exec "$LAB_NAME-h1" "$TRAFFIC" ping --connect $B:7000 --size 64 --rate 1000 --duration 4 >"$WORK/ping.out"
wait $server || true
sleep 2.5
"$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json" || true
cat "$WORK/ping.out"
jq -c '.wire | {send_path, segments, receive_stamps, lost, levels}' "$WORK/snap.json"
level() {
  jq -r --arg s "$1" --arg d "$2" --arg l "$3" --arg f "$4" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0].levels[]
     | select(.timestamp_source==$l) | .[$f] // "none"' "$WORK/snap.json"
}
[ "$(jq -r .wire.send_path "$WORK/snap.json")" = sock_ops ] || fail "status does not report the sock_ops send side"
for dir in "a b" "b a"; do
  set -- $dir
  sys=$(level "$1" "$2" syscall spans); wire=$(level "$1" "$2" wire_software spans)
  note "$1->$2: syscall spans $sys, wire spans $wire; Δt_min syscall $(level "$1" "$2" syscall delta_t_min_seconds) s, wire $(level "$1" "$2" wire_software delta_t_min_seconds) s"
  [ "$sys" != none ] && [ "$sys" -ge 3000 ] || fail "$1->$2: too few syscall spans ($sys)"
  [ "$wire" != none ] && [ $((wire * 100)) -ge $((sys * 99)) ] || fail "$1->$2: wire spans $wire < 99% of $sys"
  [ "$(level "$1" "$2" wire_software negative_spans)" -eq 0 ] || fail "$1->$2: negative wire span with one clock"
done
sys_dt=$(level a b syscall delta_t_min_seconds); wire_dt=$(level a b wire_software delta_t_min_seconds)
approx_ge "$sys_dt" "$wire_dt" && [ "$wire_dt" != "$sys_dt" ] || fail "wire Δt_min $wire_dt not smaller than syscall's $sys_dt"
# The sock_ops program hangs on a BPF link: gone with the agent.
[ "$(bpftool cgroup show "$CG" 2>/dev/null | grep -c wire_sockops || true)" -eq 1 ] ||
  fail "the sock_ops program is not attached to the test cgroup"
kill "$AGENT_PID"; wait "$AGENT_PID" || fail "agent exited non-zero"; AGENT_PID=
attached=$(bpftool cgroup show "$CG" 2>/dev/null | grep -c wire_sockops || true)
[ "$attached" -eq 0 ] || fail "sock_ops program still attached to the test cgroup after the agent stopped"
# The kernel frees a detached program after an RCU grace period (a tc filter's, a cgroup's old
# program array), so just after the agent's exit one may still be listed: gone within 3 s.
no_wire_programs() { [ "$(bpftool prog show 2>/dev/null | grep -c 'name wire_' || true)" -eq 0 ]; }
wait_until 3 no_wire_programs || fail "wire programs still loaded 3 s after the agent stopped"
echo "wire_sockops: 1 passed, 0 failed"
