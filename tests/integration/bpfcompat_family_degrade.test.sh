#!/usr/bin/env bash
# An optional capture family that cannot run on this kernel never stops the agent: with tc
# programs and uprobes hidden from the probe (as on a kernel built without them), an agent asked
# for --wire-timestamps and --rdma starts, captures TCP as usual, and reports wire, wire_send and
# rdma off with reason kernel_lacks_feature in /api/v1/status, /metrics and its log. Payload
# capture rides on whichever TCP variant runs, sock_tp included. An interface that does not exist
# stays an error (exit 1): that is the operator's to fix, not the kernel's.
source "$(dirname "$0")/lib.sh"

lab_up 2
B=10.77.0.2
SKEWSCOPE_HIDE_FEATURES=tc_programs,uprobes start_agent --domain a=netns:"$(netns_path 1)" \
  --domain b=netns:"$(netns_path 2)" --only-domains --window 5s --send-max-age 2s \
  --wire-timestamps "eth0@$(netns_path 1),eth0@$(netns_path 2)" --rdma
for f in wire wire_send rdma; do
  grep -q "capture family $f is off (kernel_lacks_feature)" "$WORK/agent.log" ||
    { cat "$WORK/agent.log"; fail "the log does not say that $f is off and why"; }
done
in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 6 >/dev/null &
server=$!
in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --rate 500 --duration 2 >/dev/null
wait $server || true
sleep 2.5
"$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json" || true
jq -c .capture_families "$WORK/snap.json"
jq -e '.capture_families.tcp.up' "$WORK/snap.json" >/dev/null || fail "tcp not up"
for f in wire wire_send rdma; do
  jq -e --arg f "$f" '.capture_families[$f] | (.up | not) and .reason == "kernel_lacks_feature"' "$WORK/snap.json" \
    >/dev/null || fail "status: $f is not off with reason kernel_lacks_feature"
done
jq -e '.capture_families.wire.detail | contains("needs tc (clsact) BPF programs")' "$WORK/snap.json" >/dev/null ||
  fail "status: the wire family's detail does not name the missing feature"
jq -e '.capture_families.payload.reason == "not_requested"' "$WORK/snap.json" >/dev/null || fail "payload not not_requested"
spans=$(pair_field a b spans 2>/dev/null || jq -r '[.pairs[] | select(.src=="a" and .dst=="b")][0].spans' "$WORK/snap.json")
note "TCP spans a->b with the optional families off: $spans"
[ "$spans" != null ] && [ "$spans" -ge 500 ] || fail "TCP capture did not pair traffic ($spans spans)"
curl -sf "$AGENT_URL/metrics" >"$WORK/metrics.txt"
grep '^skewscope_capture_family_up' "$WORK/metrics.txt"
for expect in 'family="tcp",reason="running"} 1' 'family="wire",reason="kernel_lacks_feature"} 0' \
  'family="wire_send",reason="kernel_lacks_feature"} 0' 'family="rdma",reason="kernel_lacks_feature"} 0' \
  'family="payload",reason="not_requested"} 0'; do
  grep -qF "skewscope_capture_family_up{$expect" "$WORK/metrics.txt" || fail "/metrics lacks skewscope_capture_family_up{$expect"
done
if command -v promtool >/dev/null; then promtool check metrics <"$WORK/metrics.txt" || fail "promtool"; fi
[ "$(bpftool prog show 2>/dev/null | grep -c 'name wire_' || true)" -eq 0 ] || fail "wire programs loaded although wire is off"
agent_stop

# Payload capture on the socket-layer variant: both up.
SKEWSCOPE_FORCE_VARIANT=sock_tp start_agent --domain a=netns:"$(netns_path 1)" --payload-bytes 256
"$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json" || true
jq -e '.capture_families.tcp.up and .capture_families.tcp.variant == "sock_tp"' "$WORK/snap.json" >/dev/null ||
  fail "tcp is not up with sock_tp"
jq -e '.capture_families.payload.up' "$WORK/snap.json" >/dev/null ||
  { jq -c .capture_families "$WORK/snap.json"; fail "payload capture is not up with sock_tp"; }
agent_stop

set +e
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/c2.sock" \
  --wire-timestamps "nosuch0@$(netns_path 1)" >"$WORK/bad.log" 2>&1; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no interface nosuch0" "$WORK/bad.log" || fail "missing interface: rc $rc, $(cat "$WORK/bad.log")"
echo "bpfcompat_family_degrade: 1 passed, 0 failed"
