#!/usr/bin/env bash
# The clock stage against Debian's real ptp4l: a grandmaster and a `free_running 1` slave (which
# measures but never adjusts a clock) with software timestamping on a veth link between two
# network namespaces created here. skewscope_clocks_probe, driving agent/clocks, must read the
# slave's TIME_STATUS_NP (gmPresent) and port state, export them cleanly, report EACCES as a
# permission error, and after ptp4l is killed turn the status unknown within
# stale_after + one poll interval (agent/clocks/README.md). Everything is torn down on exit.
set -euo pipefail

build=${SKEWSCOPE_BUILD:?SKEWSCOPE_BUILD must point at the build directory}
probe=$build/agent/clocks/skewscope_clocks_probe
[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)"; exit 1; }
[ -x "$probe" ] || { echo "missing $probe: build target skewscope_clocks_probe"; exit 1; }
command -v ptp4l >/dev/null || { echo "ptp4l (linuxptp) not installed"; exit 1; }

name=ptp$$
tmp=$(mktemp -d /tmp/skewscope-$name.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  ip netns del ${name}gm 2>/dev/null || true
  ip netns del ${name}sl 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; echo "--- slave ptp4l log"; tail -20 "$tmp/slave.log" || true; exit 1; }

ip netns add ${name}gm
ip netns add ${name}sl
ip link add eth0 netns ${name}gm type veth peer name eth0 netns ${name}sl
ip -n ${name}gm addr add 10.79.0.1/24 dev eth0
ip -n ${name}sl addr add 10.79.0.2/24 dev eth0
for ns in ${name}gm ${name}sl; do ip -n $ns link set eth0 up; ip -n $ns link set lo up; done

printf '[global]\nuds_address %s/gm.sock\npriority1 10\n' "$tmp" > "$tmp/gm.conf"
printf '[global]\nuds_address %s/slave.sock\nfree_running 1\nslaveOnly 1\n' "$tmp" > "$tmp/slave.conf"
ip netns exec ${name}gm ptp4l -S -i eth0 -f "$tmp/gm.conf" > "$tmp/gm.log" 2>&1 & pids+=($!)
ip netns exec ${name}sl ptp4l -S -i eth0 -f "$tmp/slave.conf" > "$tmp/slave.log" 2>&1 & slave_pid=$!
pids+=($slave_pid)

probe_once() { "$probe" --client-dir "$tmp" --ptp4l-socket "$1" --count 1 "${@:2}"; }  # later --count wins
# jq -e succeeds on empty input (jq 1.6): every check goes through here, which refuses it.
check() { [ -n "$1" ] && jq -e "$2" <<<"$1" >/dev/null; }

# 1. The slave reports a grandmaster within 30 s, as a free-running slave.
ok=
for _ in $(seq 30); do
  if check "$(probe_once "$tmp/slave.sock" --json)" '.ptp4l[0].gm_present == true'; then ok=1; break; fi
  sleep 1
done
[ -n "$ok" ] || fail "slave never reported gmPresent true"
# The first sync and delay measurement follow the master's selection by a few seconds; until
# then the status is unknown and the bound null (nothing measured yet). A fresh monitor trusts
# the offset from the second sync it sees, so each look polls three times, 1 s apart.
for _ in $(seq 10); do
  snap=$(probe_once "$tmp/slave.sock" --json --count 3 --interval-ms 1000 | tail -n 1)
  check "$snap" '.ptp4l[0].mean_path_delay_seconds > 0 and .error_bound_seconds != null' && break
done
echo "slave: $(echo "$snap" | jq -c '.ptp4l[0] | {status, port_state_name, gm_present, master_offset_seconds, mean_path_delay_seconds, error_bound_seconds}')"
check "$snap" '.ptp4l[0].port_state == 8 and .ptp4l[0].port_state_name == "UNCALIBRATED"' ||
  fail "slave port state is not UNCALIBRATED"
check "$snap" '.ptp4l[0].status == "free_running" and .status == "free_running"' ||
  fail "a free_running slave must be free_running"
check "$snap" '.ptp4l[0].master_offset_seconds != null and .ptp4l[0].mean_path_delay_seconds > 0
               and .error_bound_seconds > 0 and .ptp4l[0].error == null' ||
  fail "slave offset, path delay or bound missing"

# 2. The grandmaster: MASTER, no grandmaster other than itself, nothing measured.
gm=$(probe_once "$tmp/gm.sock" --json)
check "$gm" '.ptp4l[0].port_state == 6 and .ptp4l[0].gm_present == false and .ptp4l[0].serving == true
             and .ptp4l[0].master_offset_seconds == null' || fail "GM not seen as master: $gm"

# 3. Prometheus exposition of both is clean.
metrics=$("$probe" --client-dir "$tmp" --ptp4l-socket "$tmp/slave.sock" --ptp4l-socket "$tmp/gm.sock" --count 1 --prometheus)
if command -v promtool >/dev/null; then
  printf '%s\n' "$metrics" | promtool check metrics || fail "promtool rejected the metrics"
fi
grep -qx "skewscope_ptp_gm_present{socket=\"$tmp/slave.sock\"} 1" <<<"$metrics" || fail "gm_present metric"
grep -qx "skewscope_ptp_port_state{socket=\"$tmp/slave.sock\"} 8" <<<"$metrics" || fail "port_state metric"
grep -qx "skewscope_ptp_port_state{socket=\"$tmp/gm.sock\"} 6" <<<"$metrics" || fail "GM port_state metric"
grep -qx "skewscope_clock_status 2" <<<"$metrics" || fail "host status metric"

# 3b. The same readings through the product: `skewscope clocks` and a running agent's
#     /metrics and status JSON (--ptp4l-socket).
skewscope=$build/agent/cli/skewscope
clocks=$("$skewscope" clocks --ptp4l-socket "$tmp/slave.sock" --json)
check "$clocks" '.ptp4l[0].port_state == 8 and .ptp4l[0].gm_present == true' || fail "skewscope clocks: $clocks"
# Created here: the background job opens its redirection in the child, maybe after the first look.
: > "$tmp/agent.log"
"$skewscope" agent --listen 127.0.0.1:0 --control-socket "$tmp/agent.sock" --ptp4l-socket "$tmp/slave.sock" \
  > "$tmp/agent.log" 2>&1 & agent_pid=$!
pids+=($agent_pid)
port=
for _ in $(seq 50); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/agent.log" 2>/dev/null || true); [ -n "$port" ] && break; sleep 0.1
done
[ -n "$port" ] || fail "agent did not start: $(cat "$tmp/agent.log")"
agent_ok=
for _ in $(seq 10); do
  sleep 1
  m=$(curl -s "http://127.0.0.1:$port/metrics")
  if grep -qx "skewscope_ptp_port_state{socket=\"$tmp/slave.sock\"} 8" <<<"$m" &&
     grep -qx "skewscope_clock_status 2" <<<"$m"; then agent_ok=1; break; fi
done
[ -n "$agent_ok" ] || fail "agent /metrics lacks the slave's port state and status"
check "$("$skewscope" status --agent "http://127.0.0.1:$port" --json)" \
  '.clocks.host.ptp4l[0].gm_present == true and .clocks.host.status == "free_running"' ||
  fail "agent status JSON lacks the clock summary"
kill "$agent_pid"; wait "$agent_pid" 2>/dev/null || true

# 4. Without the right to write ptp4l's socket (mode 0660 root): a permission error, no crash.
mkdir -m 1777 "$tmp/nobody"
chmod 711 "$tmp"
denied=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
  "$probe" --client-dir "$tmp/nobody" --ptp4l-socket "$tmp/slave.sock" --count 1 --json)
check "$denied" '.ptp4l[0].error == "permission" and .errors.ptp4l.permission == 1
                 and .ptp4l[0].status == "unknown"' || fail "EACCES not reported: $denied"

# 5. Kill ptp4l while a monitor polls every 0.5 s: the source keeps its last values (data ageing)
#    for stale_after = 5 s, then turns unknown, with the failures counted.
"$probe" --client-dir "$tmp" --ptp4l-socket "$tmp/slave.sock" --json --count 0 --interval-ms 500 \
  --stale-after-ms 5000 > "$tmp/watch.ndjson" & pids+=($!)
for _ in $(seq 20); do
  check "$(tail -n 1 "$tmp/watch.ndjson")" '.ptp4l[0].status == "free_running"' && break
  sleep 0.5
done
check "$(tail -n 1 "$tmp/watch.ndjson")" '.ptp4l[0].status == "free_running"' || fail "watcher never saw the slave"
before=$(wc -l < "$tmp/watch.ndjson")
kill "$slave_pid"
killed_at=$(date +%s.%N)
deadline=$(echo "$killed_at + 5 + 0.5 + 2.5" | bc)  # stale_after + poll interval + slack
unknown_at=
while [ "$(echo "$(date +%s.%N) < $deadline" | bc)" = 1 ]; do
  if check "$(tail -n +$((before + 1)) "$tmp/watch.ndjson")" \
      '[., inputs] | map(select(.ptp4l[0].status == "unknown" and .status == "unknown")) | length > 0'; then
    unknown_at=$(date +%s.%N)
    break
  fi
  sleep 0.2
done
[ -n "$unknown_at" ] || fail "status did not become unknown within stale_after + poll interval"
after=$(tail -n +$((before + 1)) "$tmp/watch.ndjson")
echo "after kill: status unknown after $(echo "$unknown_at - $killed_at" | bc) s (stale_after 5 s)"
# Not instantly: right after the kill the reading is ageing, the failure already reported.
check "$after" '[., inputs] | map(select(.ptp4l[0].error != null and .ptp4l[0].status == "free_running")) | length > 0' ||
  fail "no ageing phase: status dropped before stale_after"
check "$(tail -n 1 <<<"$after")" '.ptp4l[0].error as $e | ($e == "refused" or $e == "missing")
                          and (.errors.ptp4l.refused + .errors.ptp4l.missing) > 0
                          and .ptp4l[0].port_state == null and .ptp4l[0].last_sync_age_seconds >= 5' ||
  fail "the dead ptp4l's failures are not reported: $(echo "$after" | tail -n 1)"
echo "PASS"
