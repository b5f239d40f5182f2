#!/usr/bin/env bash
# Real devices of the guest kernel (scripts/kernel-matrix runs this on 6.12, after
# matrix-checks.sh, in the same directory): appends to results/summary.tsv (device:NAME
# pass|fail DETAIL) and writes results/devices.tsv. Exit 1 if a check failed.
#   device:ptp_mock  (where the kernel has netdevsim; Debian's do not, then it is reported absent)
#                    a netdevsim device's mock PHC (ptp_mock, Linux >= 6.5): `skewscope clocks
#                    --json` reads it (method, offset to the system clock, interval), and which of
#                    PTP_SYS_OFFSET_PRECISE / _EXTENDED / PTP_SYS_OFFSET it answers
#   device:rdma_rxe  soft-RoCE (rdma_rxe) over a veth, rdma-core's own rxe provider,
#                    ibv_rc_pingpong between two cgroups: the agent (--rdma) pairs its SENDs both ways
#   siw              soft-iWARP, if the kernel has siw (Debian's do not): the same run, reported (devices.tsv) but not a
#                    check: iWARP connects QPs through its connection manager (rdma_cm), which
#                    ibv_rc_pingpong does not use, so its failure there says nothing of the agent
set -uo pipefail
HERE=$(pwd)
SKEWSCOPE=$HERE/bin/skewscope
R=$HERE/results
mkdir -p "$R"
failed=0
result() {  # result CHECK pass|fail DETAIL; a CHECK named info:* is reported, never a failure
  if [[ $1 == info:* ]]; then fact "$1" "$2: $3"; echo "kmatrix: $1: $2 -- $3"; return; fi
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$R/summary.tsv"
  echo "kmatrix: $1: $2${3:+ -- $3}"
  [ "$2" = pass ] || failed=1
}
fact() { printf '%s\t%s\n' "$1" "$2" >>"$R/devices.tsv"; }

# --- netdevsim's mock PHC
ptp_mock() {
  if ! modinfo netdevsim >/dev/null 2>&1; then
    # Debian builds neither (CONFIG_NETDEVSIM, CONFIG_PTP_1588_CLOCK_MOCK are not set): no mock PHC
    # to read; under real KVM, ptp_kvm is the guest's PHC instead.
    result info:ptp_mock absent "this kernel has no netdevsim module (not built by Debian)"
    return
  fi
  modprobe netdevsim 2>"$R/netdevsim.err" || { result device:ptp_mock fail "modprobe netdevsim: $(cat "$R/netdevsim.err")"; return; }
  local before after clock
  before=$(ls /sys/class/ptp 2>/dev/null)
  echo "17 1" >/sys/bus/netdevsim/new_device || { result device:ptp_mock fail "no netdevsim device"; return; }
  sleep 1
  after=$(ls /sys/class/ptp 2>/dev/null)
  clock=$(comm -13 <(tr ' ' '\n' <<<"$before" | sort) <(tr ' ' '\n' <<<"$after" | sort) | head -1)
  [ -n "$clock" ] || { result device:ptp_mock fail "the netdevsim device has no PHC (ptp_mock)"; return; }
  fact ptp_mock_clock "$clock ($(cat /sys/class/ptp/"$clock"/clock_name))"
  "$SKEWSCOPE" clocks --json >"$R/clocks.json" 2>"$R/clocks.err"
  local entry method offset interval error
  entry=$(jq -c --arg c "$clock" '[.phc[] | select(.clock==$c)][0] // empty' "$R/clocks.json")
  method=$(jq -r '.method // "none"' <<<"$entry")
  offset=$(jq -r '.system_offset_seconds // "none"' <<<"$entry")
  interval=$(jq -r '.interval_seconds // "none"' <<<"$entry")
  error=$(jq -r '.error // "none"' <<<"$entry")
  # Which offset ioctls the device answers: phc_ctl (linuxptp) reads with PTP_SYS_OFFSET*, and
  # the agent falls back PRECISE -> EXTENDED -> basic only when the one before is unsupported.
  phc_ctl "/dev/$clock" cmp >"$R/phc_ctl.out" 2>&1
  fact ptp_mock_method "$method"
  fact ptp_mock_offset_seconds "$offset"
  fact ptp_mock_interval_seconds "$interval"
  fact phc_ctl_cmp "$(tr '\n' ' ' <"$R/phc_ctl.out")"
  echo "kmatrix: $clock: method $method, offset $offset s, interval $interval s, error $error; phc_ctl: $(tr '\n' ' ' <"$R/phc_ctl.out")"
  # The mock PHC counts CLOCK_MONOTONIC_RAW from 0 at creation: a real reading is an offset far
  # from 0 (the system clock is the Unix time) measured in a short interval.
  if [ -n "$entry" ] && [ "$method" != none ] && [ "$offset" != none ] && [ "$error" = none ] &&
    awk -v o="$offset" -v i="$interval" 'BEGIN { exit !((o > 1e6 || o < -1e6) && i > 0 && i < 0.01) }'; then
    result device:ptp_mock pass "$clock read with $method: offset $offset s, interval $interval s"
  else
    result device:ptp_mock fail "$clock: method $method, offset $offset, interval $interval, error $error"
  fi
}

# --- soft-RoCE / soft-iWARP: one device, two cgroups. Between two namespaces (rxe on each end of
# a veth pair) the QPs of 6.12 connect but their first SEND is flushed: rdma_rxe there receives
# its RoCEv2 UDP only in the initial namespace. So both programs use one device over one veth
# end (rxe's loopback path), each in a cgroup of its own, and the agent's domains are cgroups.
AGENT_PID=
agent_up() {
  "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket /run/kmatrix-dev.sock --rdma --window 30s \
    --send-max-age 2s --domain a=cgroup:/sys/fs/cgroup/kra --domain b=cgroup:/sys/fs/cgroup/krb --only-domains \
    >"$R/agent-rdma-$1.log" 2>&1 &
  AGENT_PID=$!
  for _ in $(seq 1 1200); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$R/agent-rdma-$1.log" 2>/dev/null || true)
    [ -n "$PORT" ] && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}
agent_down() { [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=; }
rdma_spans() {  # rdma_spans SRC DST
  "$SKEWSCOPE" status --agent "http://127.0.0.1:$PORT" --json 2>/dev/null | jq -r --arg s "$1" --arg d "$2" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="rdma")][0].spans // 0'
}
gid_index() {  # gid_index DEV IPV4: the index of the RoCEv2 GID ::ffff:IPV4
  local f want
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })
  for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
    [ "$(cat "$f" 2>/dev/null)" = "$want" ] && { basename "$f"; return; }
  done
  echo 1
}
in_cgroup() {  # in_cgroup NAME CMD...: CMD in /sys/fs/cgroup/NAME
  bash -c 'echo $$ >"/sys/fs/cgroup/$0/cgroup.procs" && exec "$@"' "$@"
}
soft_rdma() {  # soft_rdma NAME(rxe|siw) MODULE CHECK
  local name=$1 module=$2 check=$3 dev=${1}_k
  if ! modinfo "$module" >/dev/null 2>&1; then
    result "info:$module" absent "this kernel has no $module module (not built by Debian)"
    return
  fi
  modprobe "$module" 2>"$R/$module.err" || { result "$check" fail "modprobe $module: $(cat "$R/$module.err")"; return; }
  mkdir -p /sys/fs/cgroup/kra /sys/fs/cgroup/krb
  ip link add kr0 type veth peer name kr1
  ip addr add 10.79.0.1/24 dev kr0 && ip link set kr0 up && ip link set kr1 up
  rdma link add "$dev" type "$name" netdev kr0 || { result "$check" fail "rdma link add failed"; ip link del kr0; return; }
  sleep 1
  ibv_devinfo -d "$dev" >"$R/ibv_devinfo-$name.txt" 2>&1
  local g=
  [ "$name" = rxe ] && g=$(gid_index "$dev" 10.79.0.1)
  if agent_up "$name"; then
    local before_ab=0 before_ba=0 ab ba n run rc=0
    # The agent learns a provider's functions from the first program that maps it (docs/rdma.md):
    # one short warm-up run, then the measured one.
    for run in warmup measured; do
      if [ $run = warmup ]; then n=50; else sleep 1; before_ab=$(rdma_spans a b); before_ba=$(rdma_spans b a); n=1000; fi
      # bounded: a server whose client failed to connect would wait for it forever
      in_cgroup krb timeout 120 ibv_rc_pingpong -d "$dev" ${g:+-g "$g"} -n $n -s 64 >"$R/pingpong-$name-server.$run" 2>&1 &
      local server=$!
      sleep 1
      in_cgroup kra timeout 120 ibv_rc_pingpong -d "$dev" ${g:+-g "$g"} -n $n -s 64 10.79.0.1 >"$R/pingpong-$name-client.$run" 2>&1 || rc=1
      [ $rc -eq 0 ] || kill $server 2>/dev/null
      wait $server || rc=1
    done
    sleep 1
    ab=$(($(rdma_spans a b) - before_ab)) ba=$(($(rdma_spans b a) - before_ba))
    agent_down
    fact "${name}_pingpong" "$(grep -h 'bytes in' "$R/pingpong-$name-client.measured" | head -1)"
    fact "${name}_spans" "a->b $ab, b->a $ba of $n each way"
    echo "kmatrix: $name: ibv_rc_pingpong $n iterations: rdma spans a->b $ab, b->a $ba; $(grep -h 'usec/iter' "$R/pingpong-$name-client.measured")"
    if [ $rc -eq 0 ] && [ "$ab" -ge $((n * 9 / 10)) ] && [ "$ba" -ge $((n * 9 / 10)) ]; then
      result "$check" pass "ibv_rc_pingpong x$n: $ab a->b, $ba b->a rdma spans"
    else
      result "$check" fail "pingpong status $rc (client: $(tail -2 "$R/pingpong-$name-client.measured" | tr "\n" " "); server: $(tail -2 "$R/pingpong-$name-server.measured" | tr "\n" " ")); rdma spans a->b $ab, b->a $ba of $n"
    fi
  else
    result "$check" fail "the agent did not start with --rdma: $(tail -2 "$R/agent-rdma-$name.log" | tr '\n' ' ')"
  fi
  rdma link delete "$dev" 2>/dev/null
  ip link del kr0
}

ptp_mock
soft_rdma rxe rdma_rxe device:rdma_rxe
soft_rdma siw siw info:siw
exit $failed
