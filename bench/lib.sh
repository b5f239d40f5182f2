# The benchmark scripts' library: tests/integration/lib.sh (the lab, the agent, the trap that
# removes them and restores kernel.bpf_stats_enabled) plus what the benchmarks measure with.
# Names are unique to this run so that runs (and tests) can overlap.
LIB_FOR=bench
source "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
SRC=$SOURCE

die() { echo "$(basename "$0"): $*" >&2; exit 2; }
note() { echo "# $*" >&2; }  # stdout carries the benchmark's table

# After option parsing (which may change BUILD).
bench_init() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, BPF)"
  SKEWSCOPE=$BUILD/agent/cli/skewscope
  BT=$BUILD/tests/tools/lab_traffic
  for exe in "$SKEWSCOPE" "$BT"; do
    [ -x "$exe" ] || die "no $exe: cmake --build $BUILD --target skewscope lab_traffic (or --build DIR)"
  done
  for tool in bpftool curl jq awk; do command -v $tool >/dev/null || die "needs $tool"; done
}

machine() {
  printf 'nproc %s, kernel %s, CPU %s' "$(nproc)" "$(uname -r)" \
    "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
}

agent_start() { start_agent "$@"; }  # ARGS...: listens on a free loopback port

# A floor of the hooks (bench/floor/README.md) standing where the agent would: its loader's PID is
# AGENT_PID (agent_stop ends it), its output $WORK/floor.log. floor_start MODE, after bench_init.
floor_programs() {  # the loader's path; dies when it was not built
  local floor=$BUILD/bench/floor/floor_programs
  [ -x "$floor" ] || die "no $floor (built with -DSKEWSCOPE_BENCH=ON)"
  echo "$floor"
}
floor_start() {
  local floor
  floor=$(floor_programs) || exit 2
  : >"$WORK/floor.log"
  "$floor" "$1" >"$WORK/floor.log" 2>&1 &
  AGENT_PID=$!
  wait_until 10 grep -q "^floor: attached" "$WORK/floor.log" || die "floor_programs $1: $(cat "$WORK/floor.log")"
}
# Ends the floor; a floor whose ring lost records did less work than one that kept up: refused.
floor_stop() {
  agent_stop
  grep -q " 0 lost$" "$WORK/floor.log" || die "the floor's ring lost records: $(cat "$WORK/floor.log")"
}

# One scrape of /metrics into a file, then values by exact series name (with labels).
scrape() { curl -sf --max-time 5 "$AGENT_URL/metrics" >"$1" || fail "cannot scrape $AGENT_URL/metrics"; }
series() {  # series FILE 'name{labels}'
  awk -v s="$2" '$1 == s { print $2; found = 1 } END { if (!found) print "nan" }' "$1"
}

# Syscall tracepoint programs (classic sys_enter_write or raw sys_enter) attached by other
# processes (another agent on this machine makes
# every syscall of every process slower, "without" runs included): recorded with each result.
foreign_probes() {
  bpftool perf 2>/dev/null | awk -v me="${AGENT_PID:-0}" '/tracepoint +sys_enter(_write)?$/ && $2 != me { n++ } END { print n + 0 }'
}

# Waits up to SECONDS for no foreign probe; prints how many remain.
wait_quiet() {
  local deadline=$((SECONDS + $1)) n
  while n=$(foreign_probes); [ "$n" -gt 0 ] && [ $SECONDS -lt "$deadline" ]; do sleep 2; done
  echo "$n"
}

# Sum of run_time_ns and run_cnt over this agent's BPF programs (needs kernel.bpf_stats_enabled).
agent_bpf_runtime() {
  local ids
  ids=$(bpftool perf 2>/dev/null | awk -v me="$AGENT_PID" '$2 == me { for (i = 1; i <= NF; i++) if ($i == "prog_id") print $(i + 1) }' | sort -u | paste -sd, -)
  [ -n "$ids" ] || { echo "0 0"; return; }
  bpftool -j prog show | jq -r --arg ids "$ids" '
    ($ids | split(",") | map(tonumber)) as $want
    | [.[] | select(.id as $i | $want | index($i))]
    | "\(map(.run_time_ns // 0) | add) \(map(.run_cnt // 0) | add)"'
}
# Per program name (for the note on which hook costs what).
agent_bpf_runtime_by_prog() {
  local ids
  ids=$(bpftool perf 2>/dev/null | awk -v me="$AGENT_PID" '$2 == me { for (i = 1; i <= NF; i++) if ($i == "prog_id") print $(i + 1) }' | sort -u | paste -sd, -)
  bpftool -j prog show | jq -r --arg ids "$ids" '
    ($ids | split(",") | map(tonumber)) as $want
    | .[] | select(.id as $i | $want | index($i)) | "\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

bpf_stats_on() {
  BPF_STATS_RESTORE=$(cat /proc/sys/kernel/bpf_stats_enabled)
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
}
bpf_stats_off() {
  [ -n "$BPF_STATS_RESTORE" ] || return 0
  echo "$BPF_STATS_RESTORE" >/proc/sys/kernel/bpf_stats_enabled
  BPF_STATS_RESTORE=
}

# min / median / max of numbers on stdin (one per line), printed with FORMAT.
mmm() {
  sort -g | awk -v f="${1:-%.3f}" '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf f " / " f " / " f "\n", v[1], m, v[NR] }'
}
median() {
  sort -g | awk -v f="${1:-%.3f}" '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    printf f "\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# This agent's BPF counter (enum skewscope_bpf_counter: 0 ring buffer full, 3 emitted), summed
# over the map's slice per possible CPU (bpf/lib/counter_slices.bpf.h: counter k of CPU c at
# c * stride + k), read from the map directly: works while the agent is frozen.
agent_bpf_counter() {
  local prog map cpus stride
  prog=$(bpftool perf 2>/dev/null | awk -v me="$AGENT_PID" '$2 == me && /(sys_enter(_write)?|sock_recv_length)$/ { for (i = 1; i <= NF; i++) if ($i == "prog_id") print $(i + 1) }' | head -1)
  [ -n "$prog" ] || { echo 0; return; }
  # Possible CPUs as libbpf counts them (the agent sizes the map so): "0-3" or "0-3,8-11".
  cpus=$(awk -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } } END { print n }' \
    /sys/devices/system/cpu/possible)
  for map in $(bpftool -j prog show id "$prog" | jq -r '.map_ids[]'); do
    if [ "$(bpftool -j map show id "$map" | jq -r .name)" = counters ]; then
      stride=$(( $(bpftool -j map show id "$map" | jq .max_entries) / cpus ))
      bpftool -j map dump id "$map" |
        jq --argjson s "$stride" --argjson k "$1" '[.[] | select(.formatted.key % $s == $k) | .formatted.value] | add // 0'
      return
    fi
  done
  echo 0
}

# Context switches of every agent thread so far (voluntary: it slept and was woken).
agent_switches() {
  cat /proc/"$AGENT_PID"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# KiB of the agent's RSS in BPF map mappings (the ring buffer: its data pages are mapped twice).
agent_map_rss_kb() {
  awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 } /^Rss:/ && name ~ /bpf-map/ { s += $2 } END { print s + 0 }' \
    /proc/"$AGENT_PID"/smaps 2>/dev/null || echo 0
}
