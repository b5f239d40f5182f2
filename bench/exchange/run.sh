#!/usr/bin/env bash
# Exchange capacity and cost on this machine: for each rate, a consuming agent (own group) and a
# producing agent over a fresh topic of a test Kafka (3 brokers, 6 partitions), 5 s of load.
#   bench/exchange/run.sh [BUILD_DIR] [RATES...]     (rates in halves/s; default 20000 50000 100000 200000 400000)
# Prints each process's JSON line, then per rate: bytes per half (record value + key), CPU per
# 100k halves produced (produce - consume process) and consumed, pairing delay p50/p99 (consumer
# side: capture to span), and whether the run was loss-free (every half consumed and paired).
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}; shift || true
RATES=("$@"); [ ${#RATES[@]} -gt 0 ] || RATES=(20000 50000 100000 200000 400000)
BENCH=$BUILD/bench/exchange/exchange_bench
CONFIG=(); for kv in ${EXCHANGE_CONFIG:-}; do CONFIG+=(--config "$kv"); done  # e.g. EXCHANGE_CONFIG="fetch.wait.max.ms=10"
WORK=$(mktemp -d /tmp/exchange-bench.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
topics=()
for r in "${RATES[@]}"; do topics+=(--topic "bench$r:6:3"); done
"$BUILD/tests/tools/test_kafka" "${topics[@]}" --bootstrap-file "$WORK/bs" </dev/zero >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/bs" ] && break; sleep 0.1; done
B=$(cat "$WORK/bs")
printf '%-9s %-9s %-9s %-9s %-7s %-11s %-11s %-10s %-10s %s\n' rate/s generated consumed spans dropped B/half cpu_ms/100kP cpu_ms/100kC p50_ms p99_ms
for r in "${RATES[@]}"; do
  "$BENCH" --bootstrap "$B" --topic "bench$r" --group "c$r" --role consume "${CONFIG[@]}" --seconds 8 --drain 4 >"$WORK/c.json" &
  c=$!
  sleep 4  # the consumer owns its partitions (first assignment takes 3 s in the mock)
  "$BENCH" --bootstrap "$B" --topic "bench$r" --group "p$r" --role produce "${CONFIG[@]}" --rate "$r" --seconds 5 --drain 4 >"$WORK/p.json"
  wait $c
  cat "$WORK/p.json" "$WORK/c.json" >&2
  jq -s -r --argjson rate "$r" '
    (.[0]) as $p | (.[1]) as $c |
    [$rate, $p.generated, $c.consumed, $c.spans, ($p.dropped + $c.dropped),
     (if $p.produced > 0 then ($p.bytes_produced / $p.produced * 10 | round / 10) else null end),
     ((($p.cpu_seconds - $c.cpu_seconds) / $p.generated * 1e5 * 1000) | round),
     (if $c.consumed > 0 then ($c.cpu_seconds / $c.consumed * 1e5 * 1000 | round) else null end),
     (($c.pairing_delay_p50 // 0) * 1e4 | round / 10), (($c.pairing_delay_p99 // 0) * 1e4 | round / 10)] | @tsv' \
    "$WORK/p.json" "$WORK/c.json" | awk -F'\t' '{ printf "%-9s %-9s %-9s %-9s %-7s %-11s %-11s %-10s %-10s %s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10 }'
done
