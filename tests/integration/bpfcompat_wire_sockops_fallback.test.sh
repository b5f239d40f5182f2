#!/usr/bin/env bash
# The sock_ops send side's fallback: --wire-cgroup on a kernel without the sock_ops TX
# timestamping callbacks (hidden from the probe here, as on Linux < 6.14) gets tc egress, says why
# (start-up line, status, doctor), attaches tc egress filters, and pairs the lab's traffic at the
# wire level as wire_sockops does with sock_ops: >= 99 % of the syscall level's spans, none
# negative. Then the same with the send side forced (SKEWSCOPE_FORCE_WIRE_SEND=tc_egress) on the
# kernel as it is.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/bpfcompat_wire_variant.sh"

CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG_ROOT" ] || { echo "bpfcompat_wire_sockops_fallback: skipped, no cgroup v2 mount"; exit 0; }
CG=$CG_ROOT/skewscope-bpfcompat-$RUN_ID
mkdir "$CG"
trap 'rc_=$?; set +e; [ -n "$LAB_NAME" ] && "$LAB" down "$LAB_NAME"; rmdir "$CG" 2>/dev/null; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
B=10.77.0.2
level() {
  jq -r --arg s "$1" --arg d "$2" --arg l "$3" --arg f "$4" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0].levels[]
     | select(.timestamp_source==$l) | .[$f] // "none"' "$WORK/snap.json"
}
run_lab() {  # run_lab LABEL PORT: traffic in the cgroup, then the wire level against the syscall level
  local label=$1 port=$2
  egress=$({ in_host 1 tc filter show dev eth0 egress; in_host 2 tc filter show dev eth0 egress; } | grep -c wire_ || true)
  [ "$egress" -eq 2 ] || fail "$label: expected our tc egress filter on both hosts, found $egress"
  in_cgroup "$CG" ip netns exec "$LAB_NAME-h2" "$TRAFFIC" echo-server --listen $B:$port --duration 9 >/dev/null &
  local server=$!
  in_cgroup "$CG" ip netns exec "$LAB_NAME-h1" "$TRAFFIC" ping --connect $B:$port --size 64 --rate 1000 --duration 4 >"$WORK/ping.out"
  wait $server || true
  sleep 2.5
  "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json" || true
  [ "$(jq -r .wire.send_path "$WORK/snap.json")" = tc_egress ] || fail "$label: status does not report tc_egress"
  for dir in "a b" "b a"; do
    set -- $dir
    sys=$(level "$1" "$2" syscall spans); wire=$(level "$1" "$2" wire_software spans)
    note "$label $1->$2: syscall spans $sys, wire spans $wire"
    [ "$sys" != none ] && [ "$sys" -ge 3000 ] || fail "$label $1->$2: too few syscall spans ($sys)"
    [ "$wire" != none ] && [ $((wire * 100)) -ge $((sys * 99)) ] || fail "$label $1->$2: wire spans $wire < 99% of $sys"
    [ "$(level "$1" "$2" wire_software negative_spans)" -eq 0 ] || fail "$label $1->$2: negative wire span with one clock"
  done
}
AGENT_ARGS=(--domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains --window 5s
  --send-max-age 2s --wire-timestamps "eth0@$(netns_path 1),eth0@$(netns_path 2)" --wire-cgroup "$CG")

# 1. The callbacks hidden: chosen by probe.
SKEWSCOPE_HIDE_FEATURES=sockops_tx_timestamping start_agent "${AGENT_ARGS[@]}"
grep -q "send side tc_egress (needs sock_ops TX timestamping callbacks" "$WORK/agent.log" ||
  { cat "$WORK/agent.log"; fail "the start-up line does not say why the send side is tc egress"; }
doctor=$(SKEWSCOPE_HIDE_FEATURES=sockops_tx_timestamping "$SKEWSCOPE" doctor 2>&1 || true)
grep -q "^    skip sock_ops  (wire_sockops)  -- needs sock_ops TX timestamping callbacks" <<<"$doctor" ||
  { echo "$doctor"; fail "doctor does not say why sock_ops is not used"; }
run_lab hidden 7000
jq -e '.capture_families.wire_send | .up and .variant == "tc_egress"' "$WORK/snap.json" >/dev/null ||
  fail "capture_families.wire_send is not tc_egress"
agent_stop

# 2. Forced on this kernel as it is.
SKEWSCOPE_FORCE_WIRE_SEND=tc_egress start_agent "${AGENT_ARGS[@]}"
grep -q "send side tc_egress (SKEWSCOPE_FORCE_WIRE_SEND=tc_egress)" "$WORK/agent.log" ||
  { cat "$WORK/agent.log"; fail "the start-up line does not name the forced send side"; }
run_lab forced 7001
[ "$(bpftool cgroup show "$CG" 2>/dev/null | grep -c wire_sockops || true)" -eq 0 ] ||
  fail "sock_ops attached to the cgroup although the send side is tc egress"
echo "bpfcompat_wire_sockops_fallback: 1 passed, 0 failed"
