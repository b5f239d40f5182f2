#!/usr/bin/env bash
# Added cost per packet of the wire programs: BPF run-time statistics (kernel.bpf_stats via
# BPF_ENABLE_STATS, held only while this runs) of wire_ingress / wire_egress / wire_sockops and,
# for comparison, of the syscall programs, under request/response and streaming traffic between
# two lab hosts. Prints one line per program: runs, mean ns per run.
#
#   bench/wire/cost.sh [tc|sockops|acks]   default tc (send side tc egress); sockops: --wire-cgroup;
#                                          acks: tc with --wire-ack-samples
set -euo pipefail
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${SKEWSCOPE_BUILD:-$SOURCE/build}
SKEWSCOPE=$BUILD/agent/cli/skewscope TRAFFIC=$BUILD/tests/tools/lab_traffic LAB=$SOURCE/scripts/lab
MODE=${1:-tc}
NAME=wcost$$ WORK=$(mktemp -d) AGENT= STATS= CG=
cleanup() {
  [ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null || true
  [ -n "$STATS" ] && kill "$STATS" 2>/dev/null || true
  "$LAB" down "$NAME" || true
  [ -n "$CG" ] && rmdir "$CG" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
"$LAB" up "$NAME" 2 >/dev/null
extra=()
run_in() { ip netns exec "$NAME-h$1" "${@:2}"; }
[ "$MODE" = acks ] && extra=(--wire-ack-samples)
if [ "$MODE" = sockops ]; then
  CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)/skewscope-wcost-$$
  mkdir "$CG"
  extra=(--wire-cgroup "$CG")
  run_in() { sh -c "echo \$\$ > $CG/cgroup.procs && exec \"\$@\"" sh ip netns exec "$NAME-h$1" "${@:2}"; }
fi
bpftool prog show -j | jq '[.[].id]' >"$WORK/ids_before.json"
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/c.sock" --only-domains \
  --domain a=netns:/run/netns/$NAME-h1 --domain b=netns:/run/netns/$NAME-h2 \
  --wire-timestamps "eth0@/run/netns/$NAME-h1,eth0@/run/netns/$NAME-h2" "${extra[@]}" >"$WORK/agent.log" 2>&1 &
AGENT=$!
sleep 2
# BPF_ENABLE_STATS (cmd 32, type 0 = run time): statistics on while the returned fd is open.
python3 -c '
import ctypes, os, signal, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("I", 0), 8)
fd = libc.syscall(321, 32, attr, 8)
if fd < 0: sys.exit("BPF_ENABLE_STATS: errno %d" % ctypes.get_errno())
print("stats on", flush=True)
signal.pause()' &
STATS=$!
sleep 0.5
B=10.77.0.2
run_in 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 12 >/dev/null &
run_in 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --duration 4 >"$WORK/ping.out"
run_in 2 "$TRAFFIC" tcp-sink --listen $B:7001 --duration 12 >/dev/null &
sleep 0.3
run_in 1 "$TRAFFIC" tcp-source --connect $B:7001 --write-sizes 1448 --duration 4 >"$WORK/source.out"
sleep 1
cat "$WORK/ping.out" "$WORK/source.out"
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/agent.log")
"$SKEWSCOPE" status --agent "http://127.0.0.1:$port" --json | jq -c '.wire | {send_path, segments, levels: .levels.wire_software, ack_samples}' || true
# Only this agent's programs: those loaded after it started (other agents may run on the machine).
bpftool prog show -j | python3 -c '
import json, sys
before = set(json.load(open(sys.argv[1])))
progs = json.load(sys.stdin)
print("programs loaded by this agent:", len([p for p in progs if p["id"] not in before]), file=sys.stderr)
for p in progs:
    name = p.get("name", "")
    if p["id"] in before:
        continue
    if name.startswith("wire_") or name in ("enter_write", "exit_write", "enter_read", "exit_read"):
        cnt = p.get("run_cnt", 0)
        if cnt:
            print("%-16s runs %9d  mean %7.1f ns" % (name, cnt, p.get("run_time_ns", 0) / cnt))' "$WORK/ids_before.json"
