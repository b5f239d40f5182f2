#!/usr/bin/env bash
# The benchmarks' quick variants (bench/RESULTS.md has the full runs): they run, their output
# is complete, pairing in the correlator benchmark is exact, and drop accounting balances.
# No timing is asserted.
set -euo pipefail

SOURCE=${SKEWSCOPE_SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${SKEWSCOPE_BUILD:-$SOURCE/build}
export SKEWSCOPE_BUILD=$BUILD
OUT=$(mktemp -d /tmp/skewscope-bench-quick.XXXXXX)
NS=skq-floor-$$ # the floors' traffic (check 5)
trap 'rm -rf "$OUT"; ip netns del "$NS" 2>/dev/null || true' EXIT
passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

# 1. Correlator capacity benchmark, tiny run.
bench=$BUILD/bench/correlator/correlator_bench
if [ ! -x "$bench" ]; then
  bad "no $bench (cmake --build $BUILD --target correlator_bench)"
elif ! "$bench" --benchmark_min_time=0.01 --benchmark_format=json >"$OUT/corr.json" 2>"$OUT/corr.err"; then
  bad "correlator_bench exited non-zero: $(tail -3 "$OUT/corr.err")"
else
  problems=$(jq -r '
    .benchmarks[] | select(.run_type == "iteration") |
    if (.name | startswith("BM_PendingMemory")) then
      select(.bytes_per_pending_half < 16 or .bytes_per_pending_half > 4096 or .pending < 1)
        | "\(.name): bytes_per_pending_half \(.bytes_per_pending_half)"
    else
      (select((.items_per_second // 0) <= 0) | "\(.name): no rate"),
      # Below the pending bound every settled send pairs: exact, not a timing.
      (select((.name | test("^BM_(AgentCore|Correlator)/.*kmsg_s:100$")) and .pair_ratio != 1)
        | "\(.name): pair_ratio \(.pair_ratio)")
    end' "$OUT/corr.json")
  count=$(jq '[.benchmarks[] | select(.run_type == "iteration")] | length' "$OUT/corr.json")
  if [ -n "$problems" ]; then bad "correlator_bench: $problems"
  elif [ "$count" -lt 10 ]; then bad "correlator_bench ran only $count benchmarks"
  else ok "correlator_bench: $count benchmarks, every settled send paired"; fi
fi

# 2. Overhead, one short round: every row present, ring-buffer records all read.
if ! "$SOURCE/bench/overhead" --quick >"$OUT/overhead.md" 2>"$OUT/overhead.err"; then
  bad "bench/overhead --quick exited non-zero: $(tail -5 "$OUT/overhead.err")"
else
  rows=$(grep -cE '^\| (rr|stream|zmq)(\+busy)? [0-9]+ B \| [0-9]+ \| [0-9.]+ / ' "$OUT/overhead.md" || true)
  io_rows=$(grep -cE '^\| (write-devnull|read-devzero|pipe|write-file|pwrite-file) \| [0-9.]+ \| [0-9.]+ \|' "$OUT/overhead.md" || true)
  read -r sub rd lost < <(sed -n 's/^Ring buffer during .*: \([0-9]*\) submitted, \([0-9]*\) read, \([0-9]*\) lost.*/\1 \2 \3/p' "$OUT/overhead.md")
  # Per-phase deltas: other processes' records may be in flight at a phase's edges.
  slack=$(( sub / 100 > 200 ? sub / 100 : 200 ))
  diff=$(( sub > rd ? sub - rd : rd - sub ))
  if [ "$rows" != 12 ] || [ "$io_rows" != 5 ]; then bad "bench/overhead: $rows of 12 workload rows, $io_rows of 5 I/O rows"; cat "$OUT/overhead.md" >&2
  elif [ -z "${sub:-}" ] || [ "$sub" -eq 0 ]; then bad "bench/overhead: no ring-buffer records with the agent attached"
  elif [ "$diff" -gt "$slack" ]; then bad "bench/overhead: $sub submitted but $rd read ($lost lost)"
  else ok "bench/overhead --quick: 12 workloads, 5 I/O ops; $sub records submitted, $rd read, $lost lost"; fi
fi

# 3. Overload: the script itself checks the balance (exit 1 when it does not hold).
if "$SOURCE/bench/overload" --quick >"$OUT/overload.md" 2>"$OUT/overload.err"; then
  if grep -q '^- ok: stream.s halves balance' "$OUT/overload.md" && ! grep -q FAILED "$OUT/overload.md"; then
    ok "bench/overload --quick: $(grep -E "^\| stream halves lost" "$OUT/overload.md" | cut -d'|' -f3 | xargs) stream halves lost, all counted"
  else bad "bench/overload: balance line missing"; cat "$OUT/overload.md" >&2; fi
else
  bad "bench/overload --quick failed"; cat "$OUT/overload.md" >&2; tail -5 "$OUT/overload.err" >&2
fi

# 4. Helper costs, one short round: every program measured, a bad flag refused (exit 2).
helper=$BUILD/bench/floor/helper_cost
if [ ! -x "$helper" ]; then
  bad "no $helper (cmake --build $BUILD --target helper_cost)"
elif ! "$helper" --rounds 1 --writes 2000 >"$OUT/helper.txt" 2>"$OUT/helper.err"; then
  bad "helper_cost exited non-zero: $(tail -3 "$OUT/helper.err")"
else
  rows=$(grep -cE '^hc_(empty|clock|user_read|kernel_read|ring) +[0-9.]+ +-?[0-9.]+$' "$OUT/helper.txt" || true)
  set +e
  "$helper" --rounds 0 >/dev/null 2>"$OUT/helper_bad.err"
  bad_rc=$?
  set -e
  if [ "$rows" != 5 ]; then bad "helper_cost: $rows of 5 programs"; cat "$OUT/helper.txt" >&2
  elif [ "$bad_rc" != 2 ] || ! grep -q usage "$OUT/helper_bad.err"; then bad "helper_cost --rounds 0: exit $bad_rc"
  else ok "helper_cost: 5 programs measured; --rounds 0 refused"; fi
fi

# 5. The floors (bench/floor/README.md): each set loads and attaches; over a few TCP sends in a
#    namespace of this test's own, the stamping sets read every record (none lost) and the copy
#    set's send records hold the bytes the sends carried; a bad mode is refused (exit 2).
floor=$BUILD/bench/floor/floor_programs
if [ ! -x "$floor" ]; then
  bad "no $floor (cmake --build $BUILD --target floor_programs)"
elif ! ip netns add "$NS"; then
  bad "cannot make the namespace $NS"
else
  ip -n "$NS" link set lo up
  # 50 writes of 32 bytes over one loopback connection, read by a peer in the same process.
  sends='import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); s, _ = l.accept()
for i in range(50):
    c.send(b"%032d" % i); s.recv(64)'
  for mode in empty stamp shared copy; do
    "$floor" $mode >"$OUT/floor_$mode.txt" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q "^floor: attached" "$OUT/floor_$mode.txt" && break; sleep 0.1; done
    ip netns exec "$NS" python3 -c "$sends" || bad "floor $mode: the sends failed"
    sleep 0.1
    kill $pid; wait $pid || bad "floor $mode: exit $?"
    records= copied= lost=
    read -r records copied lost < <(sed -n 's/^floor: \([0-9]*\) records read, \([0-9]*\) with a copy, \([0-9]*\) lost$/\1 \2 \3/p' "$OUT/floor_$mode.txt") || true
    if ! grep -q "^floor: attached" "$OUT/floor_$mode.txt" || [ -z "${lost:-}" ]; then
      bad "floor $mode: $(cat "$OUT/floor_$mode.txt")"
    elif [ "$lost" != 0 ]; then bad "floor $mode lost $lost records"
    elif [ $mode = empty ] && [ "$records" != 0 ]; then bad "floor empty read $records records"
    elif [ $mode != empty ] && [ "$records" -lt 100 ]; then bad "floor $mode: $records records for 100 sends and receives"
    elif [ $mode = copy ] && [ "$copied" -lt 50 ]; then bad "floor copy: $copied of 50 sends copied"
    elif [ $mode != copy ] && [ "$copied" != 0 ]; then bad "floor $mode: $copied records with a copy"
    else ok "floor $mode: $records records read, $copied with a copy, none lost"; fi
  done
  ip netns del "$NS"
  set +e
  "$floor" nothing >/dev/null 2>"$OUT/floor_bad.err"
  bad_rc=$?
  set -e
  if [ "$bad_rc" != 2 ] || ! grep -q usage "$OUT/floor_bad.err"; then bad "floor_programs nothing: exit $bad_rc"
  else ok "floor_programs: an unknown mode refused"; fi
fi

echo "bench_quick: $passed passed, $failed failed"
[ "$failed" = 0 ]
