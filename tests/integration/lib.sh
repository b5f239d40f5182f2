# The one shell library of the lab and the agent, for tests/integration/*.test.sh and (through
# bench/lib.sh, which adds the measurements) the benchmark scripts: a lab, an agent, and a trap
# that removes both. Every name is unique to this run so that runs can overlap.
# LIB_FOR (test | bench, set before sourcing) names the run's folder and lab.
set -euo pipefail

SOURCE=${SKEWSCOPE_SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${SKEWSCOPE_BUILD:-$SOURCE/build}
SKEWSCOPE=$BUILD/agent/cli/skewscope
TRAFFIC=$BUILD/tests/tools/lab_traffic
LAB=$SOURCE/scripts/lab
LIB_FOR=${LIB_FOR:-test}
RUN_ID=${LIB_FOR:0:1}$$_$RANDOM
WORK=$(mktemp -d "/tmp/skewscope-$LIB_FOR.XXXXXX")
AGENT_PID=
AGENT_URL=
CONTROL=$WORK/control.sock
LAB_NAME=
BACKGROUND=()
BPF_STATS_RESTORE=  # kernel.bpf_stats_enabled before this run turned it on, restored on exit

cleanup() {
  local rc=$?
  for pid in "${BACKGROUND[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$AGENT_PID" ]; then
    kill -CONT "$AGENT_PID" 2>/dev/null || true  # a frozen agent (SIGSTOP) must see its SIGTERM
    kill "$AGENT_PID" 2>/dev/null || true
    wait "$AGENT_PID" 2>/dev/null || true
  fi
  if [ -n "$BPF_STATS_RESTORE" ]; then echo "$BPF_STATS_RESTORE" >/proc/sys/kernel/bpf_stats_enabled || true; fi
  if [ -n "$LAB_NAME" ]; then "$LAB" down "$LAB_NAME" >/dev/null 2>&1 || true; fi
  if [ $rc -ne 0 ] && [ -f "$WORK/agent.log" ]; then echo "--- agent log" >&2; tail -20 "$WORK/agent.log" >&2; fi
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

# agent_url_from_log PID LOG WHAT: waits (bounded) for the agent's "listening on" line and prints
# its URL; fails naming WHAT if the agent exits or never listens.
agent_url_from_log() {
  local pid=$1 log=$2 what=$3 port=
  for _ in $(seq 1 150); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$what exited"; }
    sleep 0.1
  done
  [ -n "$port" ] || fail "$what did not start"
  echo "http://127.0.0.1:$port"
}

start_agent() {  # start_agent ARGS...: listens on a free loopback port
  # Emptied here, not only by the background job's redirection: that runs in the child, and the
  # wait below could otherwise read the previous agent's "listening on" line first.
  : >"$WORK/agent.log"
  "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$CONTROL" "$@" >"$WORK/agent.log" 2>&1 &
  AGENT_PID=$!
  AGENT_URL=$(agent_url_from_log "$AGENT_PID" "$WORK/agent.log" agent)
}

agent_stop() {
  [ -n "$AGENT_PID" ] || return 0
  kill "$AGENT_PID" 2>/dev/null || true
  wait "$AGENT_PID" 2>/dev/null || true
  AGENT_PID=
  AGENT_URL=
}

status_json() { "$SKEWSCOPE" status --agent "$AGENT_URL" --json || true; }

# pair_field SRC DST FIELD: from the current status (transport tcp)
pair_field() {
  status_json | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // "none"'
}

# approx_ge A B: A >= B for decimal numbers
approx_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# wait_until SECONDS CMD...: retry CMD every 0.5 s until it succeeds; 1 if it never does in time.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$deadline" ] || return 1; sleep 0.5; done
}

# metrics: the agent's /metrics now
metrics() { curl -sf --max-time 5 "$AGENT_URL/metrics"; }

# snap_field SRC DST FIELD: as pair_field, from the status saved in $WORK/snap.json: the checks of
# one phase read one snapshot (on a loaded machine a few status calls can outlast the window).
snap_field() {
  jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // "none"' "$WORK/snap.json"
}

# alive PID: the process runs (exists and is not a zombie)
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

# in_cgroup DIR CMD...: CMD (and what it starts) runs in the cgroup DIR
in_cgroup() { local cg=$1; shift; sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }

# This run's own cgroup, CG (nothing is ever attached to the machine's root cgroup):
# make_test_cgroups NAME... creates children of it; remove_test_cgroups, for a test's EXIT trap
# after `set +e` (under set -e a failing command would end the trap before lib.sh's cleanup),
# kills what still runs in them, removes them and CG, and returns the status it was called with.
CG=/sys/fs/cgroup/unified/skewscope-$RUN_ID
[ -d /sys/fs/cgroup/unified ] || CG=/sys/fs/cgroup/skewscope-$RUN_ID
make_test_cgroups() { local c; for c in "$@"; do mkdir -p "$CG/$c"; done; }
remove_test_cgroups() {
  local rc=$? pids child
  pids=$(cat "$CG"/*/cgroup.procs 2>/dev/null || true)
  [ -z "$pids" ] || kill $pids 2>/dev/null || true
  sleep 0.2
  for child in "$CG"/*/; do [ -d "$child" ] && rmdir "$child" 2>/dev/null; done
  rmdir "$CG" 2>/dev/null || true
  return $rc
}

# pings FROM TO ENDPOINT COUNT: COUNT request/responses from lab host FROM to an echo server at
# ENDPOINT in host TO and back, on one fresh connection (the server serves that one; the client
# retries until it listens). The client's output is in $WORK/ping.out. Then 0.5 s: the agent reads
# the ring buffer every 20 ms, so that it has taken the last halves.
pings() {
  in_host "$2" "$TRAFFIC" echo-server --listen "$3" --duration 120 >/dev/null &
  local server=$!
  BACKGROUND+=("$server")
  in_host "$1" "$TRAFFIC" ping --connect "$3" --size 64 --count "$4" >"$WORK/ping.out"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  sleep 0.5
}

# Debian's prometheus, scraping the agent (prometheus_scrape.test.sh).
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
PROMETHEUS_PID=
PROMETHEUS_URL=

stop_prometheus() {  # TERM, wait up to 10 s, then KILL; always reaped before $WORK is removed
  [ -n "$PROMETHEUS_PID" ] || return 0
  kill "$PROMETHEUS_PID" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$PROMETHEUS_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$PROMETHEUS_PID" 2>/dev/null || true
  wait "$PROMETHEUS_PID" 2>/dev/null || true
  PROMETHEUS_PID=
}

_prometheus_exit() {  # _prometheus_exit RC
  if [ "$1" -ne 0 ] && [ -f "$WORK/prometheus.log" ]; then echo "--- prometheus log"; tail -20 "$WORK/prometheus.log"; fi
  stop_prometheus
}

# prometheus_style_url PID LOG WHAT: the loopback URL a Prometheus-project server (prometheus,
# alertmanager) started with --web.listen-address=127.0.0.1:0 logs ("Listening on"), within 20 s;
# fails naming WHAT if it exits or never listens.
prometheus_style_url() {
  local pid=$1 log=$2 what=$3 port=
  for _ in $(seq 1 200); do
    port=$(sed -n 's/.*msg="Listening on" address=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "$what exited"
    sleep 0.1
  done
  [ -n "$port" ] || fail "$what did not start listening"
  echo "http://127.0.0.1:$port"
}

# start_prometheus CONFIG: a free loopback port (PROMETHEUS_URL), data in $WORK/prometheus-data;
# stopped on exit before lib's cleanup removes the lab, the agent and $WORK.
start_prometheus() {
  # errexit still applies inside a trap: turn it off so that cleanup runs and sees the exit status
  trap 'rc_=$?; set +e; _prometheus_exit $rc_; (exit $rc_); cleanup' EXIT INT TERM
  "$PROMETHEUS" --config.file="$1" --storage.tsdb.path="$WORK/prometheus-data" \
    --web.listen-address=127.0.0.1:0 --storage.tsdb.retention.time=1h >"$WORK/prometheus.log" 2>&1 &
  PROMETHEUS_PID=$!
  PROMETHEUS_URL=$(prometheus_style_url "$PROMETHEUS_PID" "$WORK/prometheus.log" prometheus)
  wait_until 30 curl -sf --max-time 2 -o /dev/null "$PROMETHEUS_URL/-/ready" || fail "prometheus not ready"
}

# prom_value EXPR: the first sample's value of an instant query, or "none"
prom_value() {
  curl -sf --max-time 5 --data-urlencode "query=$1" "$PROMETHEUS_URL/api/v1/query" |
    jq -r '.data.result[0].value[1] // "none"' || echo none
}

# prom_alert ALERTNAME SRC DST [FIELD]: FIELD (default state: pending|firing) of that pair's alert, or "none"
prom_alert() {
  curl -sf --max-time 5 "$PROMETHEUS_URL/api/v1/alerts" |
    jq -r --arg a "$1" --arg s "$2" --arg d "$3" --arg f "${4:-state}" \
      '[.data.alerts[] | select(.labels.alertname==$a and .labels.src==$s and .labels.dst==$d)][0]
       | if . == null then "none" else (getpath($f | split(".")) // "none") end' || echo none
}

# make_test_pki: in $WORK, two CAs (test-ca, other-ca: key and certificate) and a server key and
# certificate for 127.0.0.1 signed by test-ca (server.key, server.crt), each valid for a day.
make_test_pki() {
  local ca
  for ca in test-ca other-ca; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=$ca" \
      -keyout "$WORK/$ca.key" -out "$WORK/$ca.crt" 2>/dev/null
  done
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$WORK/server.key" -out "$WORK/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/san.ext"
  openssl x509 -req -in "$WORK/server.csr" -CA "$WORK/test-ca.crt" -CAkey "$WORK/test-ca.key" -CAcreateserial \
    -days 1 -extfile "$WORK/san.ext" -out "$WORK/server.crt" 2>/dev/null
}
