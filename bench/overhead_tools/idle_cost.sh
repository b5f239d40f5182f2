#!/usr/bin/env bash
# CPU an agent spends with nothing to capture, for several agent binaries, measured in
# alternating rounds so that a shared machine's load falls on every binary alike: what each node
# pays for the agent when its pipeline is quiet (the ring loops' passes, the clock and HTTP
# threads), and what every traced message carries beside its own cost at low rates.
#
#   bench/overhead_tools/idle_cost.sh [--rounds N] [--seconds S] [--payload-bytes B] LABEL=SKEWSCOPE_BINARY...
#
# Each round starts, for every binary in an order rotated round by round, a fresh agent watching
# two idle lab hosts (--domain a, b, --only-domains; with --payload-bytes, payload capture on),
# waits 2 s, then reads the CPU time of all its threads (/proc/PID/task/TID/schedstat) over S
# seconds (default 10). Prints the median over rounds of the agent's CPU in microseconds per second,
# and each binary's ratio to the first (the median of the per-round ratios).
source "$(dirname "$0")/../lib.sh"

rounds=5 seconds=10 configs=() payload=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:-}; shift 2 ;;
    --seconds) seconds=${2:-}; shift 2 ;;
    --payload-bytes) payload=(--payload-bytes "${2:-}"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" >&2; exit 2 ;;
    *=*) configs+=("$1"); shift ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ ${#configs[@]} -ge 1 ] || die "give at least one LABEL=BINARY"
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || die "--rounds must be a positive integer"
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] || die "--seconds must be a positive integer"
for c in "${configs[@]}"; do [ -x "${c#*=}" ] || die "no executable ${c#*=}"; done
bench_init
lab_up 2
rows=$WORK/idle_cost.tsv  # label round cpu_us_per_s
: >"$rows"

agent_cpu_ns() {  # CPU time of every agent thread so far, in ns (schedstat: not tick-rounded)
  cat /proc/"$AGENT_PID"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'
}

note "idle_cost: $rounds round(s) of ${seconds}s; $(machine); load $(cut -d' ' -f1-3 /proc/loadavg)"
n=${#configs[@]}
for round in $(seq 1 "$rounds"); do
  for i in $(seq 0 $((n - 1))); do
    c=${configs[$(((i + round - 1) % n))]}
    SKEWSCOPE=${c#*=} start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
      "${payload[@]}"
    sleep 2  # past the start's one-off work (loading, the first clock readings)
    cpu0=$(agent_cpu_ns) t0=$(date +%s%N)
    sleep "$seconds"
    cpu1=$(agent_cpu_ns) t1=$(date +%s%N)
    agent_stop
    awk -v l="${c%%=*}" -v r="$round" -v c=$((cpu1 - cpu0)) -v t=$((t1 - t0)) \
      'BEGIN { printf "%s %d %.1f\n", l, r, c / (t / 1e6) }' >>"$rows"
    note "round $round ${c%%=*}: $(tail -1 "$rows" | cut -d' ' -f3) us/s"
  done
done

echo "### idle_cost: CPU of an agent with nothing to capture ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "$rounds rounds of ${seconds} s${payload[*]:+, ${payload[*]}}, binaries alternated; load average at the end $(cut -d' ' -f1-3 /proc/loadavg); $(machine)."
echo
echo "| config | agent CPU, µs per s (median) | ratio (median of per-round ratios) |"
echo "|---|---|---|"
first=${configs[0]%%=*}
for c in "${configs[@]}"; do
  awk -v l="${c%%=*}" -v f="$first" '
    function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    { v[$1, $2] = $3 }
    $1 == l { k++; x[k] = $3; rnd[k] = $2 }
    END { for (i = 1; i <= k; i++) if ((f, rnd[i]) in v && v[f, rnd[i]] > 0) { q++; r[q] = x[i] / v[f, rnd[i]] }
      printf "| %s | %.0f | %.3f |\n", l, med(x, k), q ? med(r, q) : 0 }' "$rows"
done
