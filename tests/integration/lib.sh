# Shared by tests/integration/*.test.sh: a lab, an agent, and a trap that removes both.
# Every name is unique to this run so that runs can overlap.
set -euo pipefail

SOURCE=${SKEWSCOPE_SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${SKEWSCOPE_BUILD:-$SOURCE/build}
SKEWSCOPE=$BUILD/agent/cli/skewscope
TRAFFIC=$BUILD/tests/tools/lab_traffic
LAB=$SOURCE/scripts/lab
RUN_ID=t$$_$RANDOM
WORK=$(mktemp -d /tmp/skewscope-test.XXXXXX)
AGENT_PID=
AGENT_URL=
CONTROL=$WORK/control.sock
LAB_NAME=
BACKGROUND=()

cleanup() {
  local rc=$?
  for pid in "${BACKGROUND[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$AGENT_PID" ]; then kill "$AGENT_PID" 2>/dev/null || true; wait "$AGENT_PID" 2>/dev/null || true; fi
  if [ -n "$LAB_NAME" ]; then "$LAB" down "$LAB_NAME" || true; fi
  if [ $rc -ne 0 ] && [ -f "$WORK/agent.log" ]; then echo "--- agent log"; tail -20 "$WORK/agent.log"; fi
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

lab_up() {  # lab_up N
  LAB_NAME=$RUN_ID
  "$LAB" up "$LAB_NAME" "$1" >/dev/null
}
netns_path() { echo "/run/netns/$LAB_NAME-h$1"; }
in_host() { local i=$1; shift; ip netns exec "$LAB_NAME-h$i" "$@"; }

start_agent() {  # start_agent ARGS...: listens on a free loopback port
  "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$CONTROL" "$@" >"$WORK/agent.log" 2>&1 &
  AGENT_PID=$!
  local port=
  for _ in $(seq 1 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/agent.log")
    [ -n "$port" ] && break
    kill -0 "$AGENT_PID" 2>/dev/null || { cat "$WORK/agent.log"; fail "agent exited"; }
    sleep 0.1
  done
  [ -n "$port" ] || fail "agent did not start"
  AGENT_URL=http://127.0.0.1:$port
}

status_json() { "$SKEWSCOPE" status --agent "$AGENT_URL" --json || true; }

# pair_field SRC DST FIELD: from the current status (transport tcp)
pair_field() {
  status_json | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // "none"'
}

# approx_ge A B: A >= B for decimal numbers
approx_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
