#!/usr/bin/env bash
# CPU per traced 64 B message (both halves: BPF + agent) for several agent binaries, measured in
# alternating rounds under the same conditions, so that a shared machine's load falls on every
# configuration alike and the ratios hold even when the nanoseconds do not.
#
#   bench/overhead_tools/msg_cost.sh [--rounds N] [--duration SECONDS] [--build DIR] [--pin] [--shape stream|rr|zmtp-rr]
#                                    [--round-trips N] CONFIG...
#     CONFIG = LABEL=SKEWSCOPE_BINARY[:VARIANT]   e.g. before=/tmp/skewscope-main after=build/agent/cli/skewscope
#            | LABEL=floor:empty|floor:stamp|floor:shared|floor:copy   the floor of the same hooks in
#              place of an agent (bench/floor/README.md: empty programs on them; a program that only
#              stamps and submits a record on the send and receive hooks; copy: the send's record
#              also holds the first bytes it sent), from --build's floor_programs
#
# Each round runs, for every CONFIG in an order rotated round by round: a fresh agent watching two
# lab hosts (--domain a, b, --only-domains), a 64 B stream host 1 -> host 2 for SECONDS, then
# reads the kernel's per-program time (kernel.bpf_stats_enabled, on for the run, restored after)
# and the agent's own CPU (every thread's /proc/PID/task/TID/schedstat) over the stream.
# Prints per-program ns per run, BPF ns per message, agent ns per message and their sum, as the
# median over rounds, and each configuration's ratio to the first. lab_traffic comes from --build.
# --pin: the stream's source on CPU 0, its sink on CPU 1, so that the two halves of a message are
# emitted on different CPUs at the same time (as on a quiet machine) even when other load would
# otherwise time-slice both on one CPU.
# --shape rr: 64 B request/response round trips (lab_traffic rr-client -> rr-server) instead of a
# one-way stream: each round trip is two messages, and the halves of the two directions alternate
# (a CPU's ring holds one end's sends and receives).
# --shape zmtp-rr: ZeroMQ REQ/REP of 16 B messages, --round-trips of them (default 40000; one
# message per call), with payload capture on (--payload-bytes 8192): what each ZMTP message costs
# the copy, the parse and the message spans on top of its TCP halves. The rate is over the REQ's
# own run time.
source "$(dirname "$0")/../lib.sh"

rounds=5 duration=3 configs=() pin_sink=() pin_source=() shape=stream round_trips=40000
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --pin) pin_source=(taskset -c 0) pin_sink=(taskset -c 1); shift ;;
    --shape) shape=${2:-}; shift 2 ;;
    --round-trips) round_trips=${2:-}; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0" >&2; exit 2 ;;
    *=*) configs+=("$1"); shift ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ ${#configs[@]} -ge 1 ] || die "give at least one LABEL=BINARY[:VARIANT]"
[[ "$shape" =~ ^(stream|rr|zmtp-rr)$ ]] || die "--shape is stream, rr or zmtp-rr"
[[ "$round_trips" =~ ^[0-9]+$ ]] && [ "$round_trips" -ge 1000 ] && [ "$round_trips" -le 10000000 ] ||
  die "--round-trips must be a whole number from 1000 to 10000000"
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || die "--rounds must be a positive integer"
bench_init
ZMQ_TOOL=$BUILD/tests/tools/zmq_messages
[ "$shape" != zmtp-rr ] || [ -x "$ZMQ_TOOL" ] || die "no $ZMQ_TOOL (--shape zmtp-rr)"
agent_extra=()
[ "$shape" != zmtp-rr ] || agent_extra=(--payload-bytes 8192)
for c in "${configs[@]}"; do
  spec=${c#*=}
  case $spec in
    floor:empty|floor:stamp|floor:shared|floor:copy) floor_programs >/dev/null || exit 2 ;;
    floor:*) die "unknown floor '${spec#floor:}' in $c (floor:empty, floor:stamp, floor:shared or floor:copy)" ;;
    *) [ -x "${spec%%:*}" ] || die "no executable ${spec%%:*}" ;;
  esac
done
lab_up 2
B=10.77.0.2
port=21000
rows=$WORK/msg_cost.tsv  # label round messages bpf_ns agent_ns elapsed_ns prog:ns:runs...
: >"$rows"

agent_cpu_ns() {  # CPU time of every agent thread so far, in ns (schedstat: not tick-rounded)
  cat /proc/"$AGENT_PID"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'
}

one_run() {  # one_run LABEL BINARY VARIANT ROUND
  local label=$1 bin=$2 variant=$3 round=$4 cpu0 cpu1 msgs sink elapsed
  if [ "$bin" = floor ]; then  # the floor's loader stands where the agent would (its PID, its CPU)
    floor_start "$variant"
  else
    SKEWSCOPE=$bin SKEWSCOPE_FORCE_VARIANT=$variant \
      start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains "${agent_extra[@]}"
  fi
  port=$((port + 1))
  if [ "$shape" = zmtp-rr ]; then
    in_host 2 "${pin_sink[@]}" "$ZMQ_TOOL" rep --bind tcp://$B:$port --count "$round_trips" >/dev/null &
    sink=$!
    sleep 0.2  # the REP binds before the REQ connects
    agent_bpf_runtime_by_prog | sort >"$WORK/p0"
    cpu0=$(agent_cpu_ns)
    local t0=$(date +%s%N)
    in_host 1 "${pin_source[@]}" "$ZMQ_TOOL" req --connect tcp://$B:$port --count "$round_trips" --size 16 >/dev/null
    elapsed=$(($(date +%s%N) - t0))
    wait $sink
    msgs=$((2 * round_trips))  # request and reply
  else
    local sink_mode=stream-sink source_mode=stream-source
    [ "$shape" = stream ] || sink_mode=rr-server source_mode=rr-client
    in_host 2 "${pin_sink[@]}" "$BT" $sink_mode --listen $B:$port --size 64 --duration $((duration + 20)) >"$WORK/sink" &
    sink=$!
    agent_bpf_runtime_by_prog | sort >"$WORK/p0"
    cpu0=$(agent_cpu_ns)
    in_host 1 "${pin_source[@]}" "$BT" $source_mode --connect $B:$port --size 64 --count 50000000 --duration "$duration" >/dev/null
    wait $sink
    elapsed=$((duration * 1000000000))
    # stream-sink says messages=N; rr-server round_trips=N, two messages each
    msgs=$(awk 'FNR == 1 { for (i = 2; i <= NF; i++) { split($i, kv, "=");
             if (kv[1] == "messages") print kv[2]; if (kv[1] == "round_trips") print 2 * kv[2] } }' "$WORK/sink")
  fi
  sleep 0.3  # the agent drains the ring buffer (it polls every 20 ms)
  cpu1=$(agent_cpu_ns)
  agent_bpf_runtime_by_prog | sort >"$WORK/p1"
  if [ "$bin" = floor ]; then floor_stop; else agent_stop; fi
  join "$WORK/p0" "$WORK/p1" | awk -v l="$label" -v r="$round" -v m="$msgs" -v a=$((cpu1 - cpu0)) -v e="$elapsed" '
    { t += $4 - $2; progs = progs sprintf(" %s:%.0f:%.0f", $1, $4 - $2, $5 - $3) }
    END { printf "%s %d %d %.0f %.0f %.0f%s\n", l, r, m, t, a, e, progs }' >>"$rows"
  note "round $round $label: $(tail -1 "$rows")"
}

what="${duration}s of 64 B messages"
[ "$shape" != zmtp-rr ] || what="$round_trips ZeroMQ round trips of 16 B, payload capture on"
note "msg_cost: $rounds round(s) of $what ($shape); $(machine); load $(cut -d' ' -f1-3 /proc/loadavg)"
bpf_stats_on
n=${#configs[@]}
for round in $(seq 1 "$rounds"); do
  for i in $(seq 0 $((n - 1))); do
    c=${configs[$(((i + round - 1) % n))]}
    label=${c%%=*} spec=${c#*=} variant=
    [[ "$spec" == *:* ]] && variant=${spec#*:}
    one_run "$label" "${spec%%:*}" "$variant" "$round"
  done
done
bpf_stats_off
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

echo "### msg_cost: CPU per traced message, $shape ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "$rounds rounds of $what${pin_sink[*]:+, source on CPU 0 and sink on CPU 1}, configurations alternated; load average at the end $load_end; $(machine)."
echo "Medians over rounds; ratio = median of the per-round ratios to \`${configs[0]%%=*}\`."
# The BPF ratio to the floor that only stamps and submits (the goal is at most 1.5×), when it ran.
stamp_floor=
for c in "${configs[@]}"; do [ "${c#*=}" != floor:stamp ] || stamp_floor=${c%%=*}; done
[ -z "$stamp_floor" ] || echo "BPF ratio = median of the per-round ratios of BPF ns per message to \`$stamp_floor\` (floor:stamp)."
echo
echo "| config | messages/s | BPF ns per msg | agent ns per msg | total ns per msg | total ratio | BPF ratio | BPF ns per run, by program |"
echo "|---|---|---|---|---|---|---|---|"
first=${configs[0]%%=*}
for c in "${configs[@]}"; do
  label=${c%%=*}
  awk -v l="$label" -v f="$first" -v sf="$stamp_floor" '
    function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    $3 > 0 { tot[$1, $2] = ($4 + $5) / $3; bpf_of[$1, $2] = $4 / $3 }
    $1 == l && $3 > 0 { k++; rate[k] = $3 / ($6 / 1e9); bpf[k] = $4 / $3; ag[k] = $5 / $3; all[k] = ($4 + $5) / $3; rnd[k] = $2
      for (i = 7; i <= NF; i++) { split($i, x, ":"); if (x[3] > 0) { pn[x[1]] = 1; pc[x[1]]++; pv[x[1], pc[x[1]]] = x[2] / x[3] } } }
    END { for (i = 1; i <= k; i++) if ((f, rnd[i]) in tot) { q++; ratio[q] = all[i] / tot[f, rnd[i]] }
      for (i = 1; i <= k; i++) if (sf != "" && (sf, rnd[i]) in bpf_of && bpf_of[sf, rnd[i]] > 0) { qb++; bratio[qb] = bpf[i] / bpf_of[sf, rnd[i]] }
      progs = ""
      for (name in pn) { delete v; for (i = 1; i <= pc[name]; i++) v[i] = pv[name, i]; progs = progs sprintf("%s %.0f; ", name, med(v, pc[name])) }
      printf "| %s | %.0f | %.0f | %.0f | %.0f | %.3f | %s | %s |\n", l, med(rate, k), med(bpf, k), med(ag, k), med(all, k), q ? med(ratio, q) : 0,
        qb ? sprintf("%.2f", med(bratio, qb)) : "–", progs }' "$rows"
done
