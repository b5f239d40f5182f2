#!/usr/bin/env bash
# Where inversions start at each timestamp level: two lab hosts exchange request/response
# traffic (64 B, 1000/s) while b's clock is simulated further and further behind; for each offset
# the share of a -> b spans that are negative, at the syscall and at the wire level (one agent,
# both levels). Prints a table; the onset of a level is the first offset with inversions.
#
#   bench/wire/onset.sh [OFFSETS_US]    default "0 1 2 3 5 8 12 20 30 50"
set -euo pipefail
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${SKEWSCOPE_BUILD:-$SOURCE/build}
SKEWSCOPE=$BUILD/agent/cli/skewscope TRAFFIC=$BUILD/tests/tools/lab_traffic LAB=$SOURCE/scripts/lab
OFFSETS=${1:-0 1 2 3 5 8 12 20 30 50}
NAME=wonset$$ WORK=$(mktemp -d) AGENT=
cleanup() {
  [ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null || true
  "$LAB" down "$NAME" || true
  rm -rf "$WORK"
}
trap cleanup EXIT
"$LAB" up "$NAME" 2 >/dev/null
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/c.sock" --only-domains --window 2s \
  --domain a=netns:/run/netns/$NAME-h1 --domain b=netns:/run/netns/$NAME-h2 \
  --wire-timestamps "eth0@/run/netns/$NAME-h1,eth0@/run/netns/$NAME-h2" >"$WORK/agent.log" 2>&1 &
AGENT=$!
sleep 2
url=http://127.0.0.1:$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/agent.log")
B=10.77.0.2
printf '%-10s %-22s %-22s\n' "offset_us" "syscall neg/spans" "wire_software neg/spans"
for us in $OFFSETS; do
  "$SKEWSCOPE" simulate "b=-${us}us" --control-socket "$WORK/c.sock" >/dev/null
  sleep 2.2  # the 2 s window forgets the previous offset
  ip netns exec "$NAME-h2" "$TRAFFIC" echo-server --listen $B:7000 --duration 6 >/dev/null &
  server=$!
  sleep 0.3  # listening before the client connects
  ip netns exec "$NAME-h1" "$TRAFFIC" ping --connect $B:7000 --size 64 --rate 1000 --duration 1.5 >/dev/null
  wait $server || true
  s=$("$SKEWSCOPE" status --agent "$url" --json || true)
  row() { jq -r --arg l "$1" '[.pairs[] | select(.src=="a" and .dst=="b")][0].levels[]
    | select(.timestamp_source==$l) | "\(.window_negative_spans)/\(.window_spans)"' <<<"$s"; }
  printf '%-10s %-22s %-22s\n' "$us" "$(row syscall)" "$(row wire_software)"
done
