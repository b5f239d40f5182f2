# The diagnosis labs' shared part (sourced after lib.sh, by diagnose_*.test.sh and
# bench/diagnosis/corpus.sh): a real ptp4l pair that gives the agent a claimed clock bound.
# A grandmaster and a `free_running 1` slave (never a real clock adjusted) in two namespaces of
# their own, announcing four times a second so that the grandmaster's loss shows within a second.
# The agent reads the slave with `--ptp4l-socket "$PTP_SLAVE_SOCKET"`.
PTP_GM_PID=
PTP_SLAVE_PID=
PTP_NS=
PTP_SLAVE_SOCKET=

ptp_gm_start() {
  ip netns exec "$PTP_NS-gm" ptp4l -S -i eth0 -f "$WORK/ptp-gm.conf" >>"$WORK/ptp-gm.log" 2>&1 &
  PTP_GM_PID=$!
}
ptp_gm_stop() {
  [ -n "$PTP_GM_PID" ] || return 0
  kill "$PTP_GM_PID" 2>/dev/null || true
  wait "$PTP_GM_PID" 2>/dev/null || true
  PTP_GM_PID=
}
ptp_has_bound() {
  "$SKEWSCOPE" clocks --ptp4l-socket "$PTP_SLAVE_SOCKET" --json 2>/dev/null | jq -e '.error_bound_seconds != null' >/dev/null
}
ptp_pair_up() {  # ptp_pair_up SUBNET_PREFIX (e.g. 10.79.7): returns once the slave gives a bound
  command -v ptp4l >/dev/null || fail "ptp4l (linuxptp) not installed"
  PTP_NS=$RUN_ID-ptp
  PTP_SLAVE_SOCKET=$WORK/ptp-slave.sock
  ip netns add "$PTP_NS-gm"
  ip netns add "$PTP_NS-sl"
  ip link add eth0 netns "$PTP_NS-gm" type veth peer name eth0 netns "$PTP_NS-sl"
  ip -n "$PTP_NS-gm" addr add "$1.1/24" dev eth0
  ip -n "$PTP_NS-sl" addr add "$1.2/24" dev eth0
  local ns
  for ns in "$PTP_NS-gm" "$PTP_NS-sl"; do
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  printf '[global]\nuds_address %s/ptp-gm.sock\npriority1 10\nlogAnnounceInterval -2\nannounceReceiptTimeout 2\n' \
    "$WORK" >"$WORK/ptp-gm.conf"
  printf '[global]\nuds_address %s\nfree_running 1\nslaveOnly 1\nlogAnnounceInterval -2\nannounceReceiptTimeout 2\n' \
    "$PTP_SLAVE_SOCKET" >"$WORK/ptp-slave.conf"
  ptp_gm_start
  ip netns exec "$PTP_NS-sl" ptp4l -S -i eth0 -f "$WORK/ptp-slave.conf" >"$WORK/ptp-slave.log" 2>&1 &
  PTP_SLAVE_PID=$!
  wait_until 20 ptp_has_bound || fail "the free-running ptp4l slave gives no error bound: $(tail -5 "$WORK/ptp-slave.log")"
}
ptp_pair_down() {
  ptp_gm_stop
  if [ -n "$PTP_SLAVE_PID" ]; then
    kill "$PTP_SLAVE_PID" 2>/dev/null || true
    wait "$PTP_SLAVE_PID" 2>/dev/null || true
    PTP_SLAVE_PID=
  fi
  if [ -n "$PTP_NS" ]; then
    ip netns del "$PTP_NS-gm" 2>/dev/null || true
    ip netns del "$PTP_NS-sl" 2>/dev/null || true
  fi
}

# A one-way delay on one lab host's sends (diagnose_delay.py: a TUN device, since this kernel has
# no netem): delay_start K MS N holds every packet host K sends to the other of hosts 1..N.
DELAY_PID=
delay_start() {
  local k=$1 ms=$2 n=$3 j peers=()
  for j in $(seq 1 "$n"); do
    [ "$j" = "$k" ] || peers+=("10.77.0.$j=$(in_host "$j" cat /sys/class/net/eth0/address)")
  done
  : >"$WORK/delay.log"
  # Not through in_host (a function: its background job would be a subshell, and the kill below
  # would miss the delayer): ip netns exec execs the delayer in place, so $! is its pid.
  ip netns exec "$LAB_NAME-h$k" python3 "$SOURCE/tests/integration/diagnose_delay.py" "$ms" eth0 "${peers[@]}" \
    >"$WORK/delay.log" 2>&1 &
  DELAY_PID=$!
  local ready=
  for _ in $(seq 50); do
    grep -q ready "$WORK/delay.log" && { ready=1; break; }
    kill -0 "$DELAY_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$ready" ] || fail "the delay on h$k did not start: $(cat "$WORK/delay.log")"
}
delay_stop() {
  [ -n "$DELAY_PID" ] || return 0
  kill "$DELAY_PID" 2>/dev/null || true
  wait "$DELAY_PID" 2>/dev/null || true
  DELAY_PID=
}

# The three-host labs (PAIRS, set by the test: "h1 h2" "h2 h3" "h1 h3"). diagnose_traffic SECONDS
# PORT_BASE: pings both ways between every two hosts for SECONDS, in the background.
diagnose_traffic() {
  local seconds=$1 base=$2 i from to
  for i in "${!PAIRS[@]}"; do
    read -r from to <<<"${PAIRS[$i]}"
    in_host "${to#h}" "$TRAFFIC" echo-server --listen "10.77.0.${to#h}:$((base + i))" --duration $((seconds + 5)) >/dev/null &
    BACKGROUND+=("$!")
  done
  sleep 0.3
  for i in "${!PAIRS[@]}"; do
    read -r from to <<<"${PAIRS[$i]}"
    in_host "${from#h}" "$TRAFFIC" ping --connect "10.77.0.${to#h}:$((base + i))" --size 64 --rate 300 \
      --duration "$seconds" >/dev/null &
    BACKGROUND+=("$!")
  done
}

# diag SRC DST FIELD: the diagnosis of the tcp pair SRC->DST ("null" when it has none)
diag() {
  status_json | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0].diagnosis[$f] // "null"'
}
all_pairs() {  # all_pairs: every pair of PAIRS has the diagnosis $CAUSE (a variable: wait_until passes no argument)
  local p
  for p in "${PAIRS[@]}"; do
    set -- $p
    [ "$(diag "$1" "$2" cause)" = "$CAUSE" ] || return 1
  done
}
show() { status_json | jq -c '[.pairs[] | select(.transport=="tcp") | {src, dst, state, d: .diagnosis | {cause, culprit, amount, unit, confidence, evidence}}], .hosts'; }
