#!/usr/bin/env bash
# What an untraced syscall pays for the agent, robust to a busy shared machine: the fastest batch
# of 128 calls (lab_traffic syscalls: min_batch_ns_per_call; contention only ever adds time), lowest
# over the runs, for each agent build or variant given, against no agent, interleaved run by run.
# lab_traffic comes from the first CONFIG's build (it does not depend on the agent).
#
#   bench/overhead_tools/untraced_min.sh [--runs N] [--count CALLS] CONFIG...
#     CONFIG = LABEL=BUILD_DIR[:VARIANT]   e.g. before=build-before raw=build:raw_tp btf=build:btf
#
# Prints one Markdown table: per op, min ns/call without an agent and with each CONFIG, and the
# difference. Needs root (BPF). The agent runs with no --domain, so it traces the whole host.
set -euo pipefail
runs=11 count=200000
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
WORK=$(mktemp -d /tmp/untraced-min.XXXXXX)
AGENT=
cleanup() { [ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
ops=(write-devnull read-devzero pipe write-file pwrite-file)
configs=(none "$@")
foreign() {
  bpftool perf 2>/dev/null | awk -v me="${AGENT:-0}" '/tracepoint +sys_enter(_write)?$/ && $2 != me { n++ } END { print n + 0 }'
}
bt_of() { local spec=${1#*=}; echo "${spec%%:*}/tests/tools/lab_traffic"; }
BT=$(bt_of "$1")
[ -x "$BT" ] || { echo "no $BT" >&2; exit 2; }
for round in $(seq 1 "$runs"); do
  for c in "${configs[@]}"; do
    label=${c%%=*}
    if [ "$c" != none ]; then
      spec=${c#*=} build=${spec%%:*} variant=
      [[ "$spec" == *:* ]] && variant=${spec#*:}
      SKEWSCOPE_FORCE_VARIANT=$variant "$build/agent/cli/skewscope" agent --listen 127.0.0.1:0 \
        --control-socket "$WORK/ctl.sock" >"$WORK/agent.log" 2>&1 &
      AGENT=$!
      for _ in $(seq 1 100); do grep -q listening "$WORK/agent.log" && break; sleep 0.1; done
      grep -q listening "$WORK/agent.log" || { cat "$WORK/agent.log" >&2; exit 1; }
    fi
    for op in "${ops[@]}"; do
      # Another agent's syscall probes slow every call on the host: measure only without them.
      for _ in $(seq 1 60); do
        [ "$(foreign)" = 0 ] && break
        sleep 1
      done
      [ "$(foreign)" = 0 ] || { echo "skip: foreign probes attached" >&2; continue; }
      ns=$("$BT" syscalls --op "$op" --size 64 --count "$count" --path "$WORK/io.dat" |
        sed -n 's/.*min_batch_ns_per_call=\([0-9.]*\).*/\1/p')
      echo "$label $op $ns" >>"$WORK/r"
    done
    if [ -n "$AGENT" ]; then kill "$AGENT"; wait "$AGENT" 2>/dev/null || true; AGENT=; fi
  done
done
printf '| op | none |'; for c in "${configs[@]:1}"; do printf ' %s | added |' "${c%%=*}"; done; echo
printf '|---|---|'; for c in "${configs[@]:1}"; do printf -- '---|---|'; done; echo
for op in "${ops[@]}"; do
  base=$(awk -v o="$op" '$1 == "none" && $2 == o { if (m == "" || $3 < m) m = $3 } END { print m }' "$WORK/r")
  printf '| %s | %.1f |' "$op" "$base"
  for c in "${configs[@]:1}"; do
    v=$(awk -v l="${c%%=*}" -v o="$op" '$1 == l && $2 == o { if (m == "" || $3 < m) m = $3 } END { print m }' "$WORK/r")
    printf ' %.1f | %+.1f |' "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN { print a - b }')"
  done
  echo
done
echo
echo "min of $runs runs of $count calls each, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
