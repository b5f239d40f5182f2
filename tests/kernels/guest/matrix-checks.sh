#!/usr/bin/env bash
# The kernel matrix's checks, run as root inside a guest by scripts/kernel-matrix (through
# tests/kernels/run-in-guest), in a directory holding bin/skewscope, bin/lab_traffic and bpf/*.bpf.o.
# Writes results/: summary.tsv (CHECK  pass|fail  DETAIL), families.tsv (FAMILY  VARIANT
# works|fails  DETAIL), doctor.txt, verify.txt, and one log per agent run. Exit 1 if a check failed.
#   doctor     `skewscope doctor` exits 0 (a capture variant is usable)
#   verify     every program of every BPF object gets a verdict (loaded/rejected), printed
#   family:F   with family F turned on (tcp, payload, wire, wire_send, rdma) the agent starts and
#              reports F running (status capture_families), or, for builds without that, starts
#   lab        two namespaces over a veth pair, request/response traffic: pairs each way, no
#              negative span; after `simulate b=-5ms`: a->b mostly negative (more than half:
#              under TCG one in seven pings took more than 5 ms one way), health 0
#   clock_step the guest's own CLOCK_REALTIME stepped 10 s ahead while the lab's agent runs: its
#              clock-step watch wakes for it, its mapping counts a step, and the spans of pings
#              after it carry the stepped clock (each within the pings' run); then stepped back
set -uo pipefail
HERE=$(pwd)
SKEWSCOPE=$HERE/bin/skewscope
TRAFFIC=$HERE/bin/lab_traffic
R=$HERE/results
mkdir -p "$R"
: >"$R/summary.tsv"
: >"$R/families.tsv"
failed=0
result() {  # result CHECK pass|fail DETAIL
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$R/summary.tsv"
  echo "kmatrix: $1: $2${3:+ -- $3}"
  [ "$2" = pass ] || failed=1
}
# Families a kernel of the matrix cannot run, each with what it lacks. Such a family must be
# reported off (with its reason) while the agent runs on; anything else off is a failure.
#   5.10  rdma  the per-QP ordinals use BPF atomic fetch-and-add (Linux 5.12): "BPF_STX uses
#               reserved fields" (docs/troubleshooting.md)
EXPECTED_OFF=$'5.10\trdma\tBPF atomic fetch-and-add needs Linux 5.12'
kernel_series() { uname -r | cut -d. -f1-2; }
expected_off() {  # expected_off FAMILY: prints what the kernel lacks, or fails
  awk -F'\t' -v k="$(kernel_series)" -v f="$1" '$1 == k && $2 == f { print $3; found = 1 } END { exit !found }' <<<"$EXPECTED_OFF"
}
family() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$R/families.tsv"; }

echo "kmatrix: kernel $(uname -r), $(nproc) CPUs"
uname -r >"$R/kernel"

# --- doctor
"$SKEWSCOPE" doctor >"$R/doctor.txt" 2>&1
rc=$?
variant=$(sed -n 's/^variant: //p' "$R/doctor.txt")
payload_variant=$(sed -n 's/^variant with --payload-bytes: //p' "$R/doctor.txt")
cat "$R/doctor.txt"
if [ $rc -eq 0 ]; then result doctor pass "variant ${variant:-?}"; else result doctor fail "exit $rc, variant ${variant:-?}"; fi

# --- verify: the verifier's verdict on every program. `skewscope doctor --verify` where the agent
# has it; else bpftool, which loads an object's programs all at once: one verdict per object.
if "$SKEWSCOPE" doctor --help 2>&1 | grep -q -- '--verify'; then
  "$SKEWSCOPE" doctor --verify >"$R/verify.txt" 2>&1
  loaded=$(grep -c '^[a-z_]* [a-z_0-9]* loaded' "$R/verify.txt")
  rejected=$(grep -c '^[a-z_]* [a-z_0-9]* rejected' "$R/verify.txt")
  how="skewscope doctor --verify"
else
  : >"$R/verify.txt"
  loaded=0 rejected=0
  for obj in bpf/*.bpf.o; do
    name=$(basename "$obj" .bpf.o)
    pin=/sys/fs/bpf/kmatrix-$name
    progs=$(bpftool prog show 2>/dev/null | wc -l)
    if bpftool prog loadall "$obj" "$pin" >"$R/verify-$name.log" 2>&1; then
      n=$(ls "$pin" | wc -l)
      echo "$name * loaded: all $n programs" >>"$R/verify.txt"
      loaded=$((loaded + n))
    else
      # the first program libbpf could not load and the verifier's last words on it, or
      # libbpf's reason when no program got that far (a missing kfunc)
      why=$(awk '
        /BPF program load failed/ && !prog { prog = $3; gsub(/[^A-Za-z0-9_]/, "", prog) }
        /-- END PROG LOAD LOG --/ && !said { said = last2 " " last1 }
        /^processed [0-9]+ insns/ { next }
        { last2 = last1; last1 = $0 }
        /^libbpf: / && !/BPF program load failed|PROG LOAD LOG|failed to load/ && !first { first = $0 }
        END { if (prog) print prog ": " said; else print "*: " first }' "$R/verify-$name.log")
      echo "$name ${why%%: *} rejected: ${why#*: }" >>"$R/verify.txt"
      rejected=$((rejected + 1))
    fi
    rm -rf "$pin"
    : "$progs"
  done
  how="bpftool prog loadall per object (no doctor --verify in this build)"
fi
cat "$R/verify.txt"
if [ -s "$R/verify.txt" ]; then result verify pass "$loaded loaded, $rejected rejected ($how)"; else result verify fail "no verdict ($how)"; fi

# --- the lab: two namespaces over one veth pair
ip netns add ka && ip netns add kb
ip link add eth0 netns ka type veth peer name eth0 netns kb
ip -n ka addr add 10.78.0.1/24 dev eth0 && ip -n kb addr add 10.78.0.2/24 dev eth0
ip -n ka link set eth0 up && ip -n kb link set eth0 up
ip -n ka link set lo up && ip -n kb link set lo up
mkdir -p /sys/fs/cgroup/kmatrix
DOMAINS=(--domain a=netns:/run/netns/ka --domain b=netns:/run/netns/kb --only-domains)

AGENT_PID= AGENT_URL=
# start_agent LOG ARGS...: 0 once it listens (within 120 s: TCG verifies slowly), else 1
start_agent() {
  local log=$1; shift
  "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket /run/kmatrix.sock "$@" >"$log" 2>&1 &
  AGENT_PID=$!
  local port=
  for _ in $(seq 1 1200); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then reap_agent; return 1; fi
  AGENT_URL=http://127.0.0.1:$port
}
# reap_agent: SIGTERM, then SIGKILL if it still runs 30 s later (the agent promises 3 s; TCG is
# slow, but a guest must never wait forever on one agent). 1 when it had to be killed.
reap_agent() {
  local rc=0
  kill "$AGENT_PID" 2>/dev/null
  for _ in $(seq 1 300); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$AGENT_PID" 2>/dev/null; then kill -KILL "$AGENT_PID" 2>/dev/null; rc=1; fi
  wait "$AGENT_PID" 2>/dev/null
  AGENT_PID=
  return $rc
}
stop_agent() {  # stop_agent CHECK: a failure of CHECK when the agent ignored SIGTERM
  [ -n "$AGENT_PID" ] || return 0
  reap_agent || result "${1:-shutdown}" fail "the agent still ran 30 s after SIGTERM (killed)"
}
first_error() { grep -m1 -iE 'error|fail|denied|invalid|not found|cannot' "$1" | cut -c1-300; }

# family:F -- the agent started with F on: does F run? Where the agent reports its families
# (status capture_families: up, reason, variant, detail) that is the verdict, since an optional
# family that cannot run no longer stops the agent; else (an older build) starting is.
family_verdict() {  # family_verdict NAME LOG: after start_agent succeeded
  local name=$1 log=$2 fam
  fam=$(timeout 60 "$SKEWSCOPE" status --agent "$AGENT_URL" --json 2>/dev/null | jq -c --arg f "$name" '.capture_families[$f] // empty' 2>/dev/null)
  if [ -z "$fam" ]; then
    family "$name" "-" fails "no capture_families in the agent's status"
    result "family:$name" fail "the agent started but its status has no capture_families (unreachable?)"
  elif [ "$(jq -r .up <<<"$fam")" = true ]; then
    family "$name" "$(jq -r '.variant // "?"' <<<"$fam")" works "running"
    result "family:$name" pass "running, variant $(jq -r '.variant // "?"' <<<"$fam")"
  else
    local why expected
    why="$(jq -r '.reason' <<<"$fam"): $(jq -r '.detail // ""' <<<"$fam" | cut -c1-300)"
    family "$name" "-" fails "$why"
    if expected=$(expected_off "$name"); then
      # the agent ran on without it and said why: what this kernel can do, not a regression
      result "family:$name" pass "off as expected on $(kernel_series) ($expected); the agent says $why"
    else
      result "family:$name" fail "$why"
    fi
  fi
}
try_family() {  # try_family NAME ARGS...
  local name=$1; shift
  local log=$R/agent-$name.log
  if start_agent "$log" "${DOMAINS[@]}" "$@"; then
    family_verdict "$name" "$log"
    stop_agent "family:$name"
  else
    family "$name" "-" fails "$(first_error "$log")"
    result "family:$name" fail "agent did not start: $(first_error "$log")"
  fi
}
try_family payload --payload-bytes 64
try_family wire --wire-timestamps eth0@/run/netns/ka,eth0@/run/netns/kb
try_family wire_send --wire-timestamps eth0@/run/netns/ka,eth0@/run/netns/kb --wire-cgroup /sys/fs/cgroup/kmatrix
try_family rdma --rdma

# tcp: the lab
status_json() { timeout 60 "$SKEWSCOPE" status --agent "$AGENT_URL" --json 2>/dev/null; }
field() { jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
  '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // 0' "$R/snap.json"; }
pings() {  # pings COUNT
  ip netns exec kb "$TRAFFIC" echo-server --listen 10.78.0.2:7000 --duration 120 >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  ip netns exec ka "$TRAFFIC" ping --connect 10.78.0.2:7000 --size 64 --count "$1" >>"$R/ping.out" 2>&1
  wait $server
  sleep 1  # the agent reads its ring buffer every 20 ms
}
# clock_step: while the lab's agent runs (a guest owns its clocks; the host's are never touched).
mapping() { jq -r ".clocks.realtime_mapping.$1 // -1" "$R/snap-step.json"; }
clock_step() {
  status_json >"$R/snap-step.json"
  local watched0 steps0 t0 t1 spans off watched steps
  watched0=$(mapping steps_watched) steps0=$(mapping steps)
  date -s "now + 10 seconds" >/dev/null
  sleep 0.5
  t0=$(date +%s%N)
  pings 20
  t1=$(date +%s%N)
  status_json >"$R/snap-step.json"
  watched=$(mapping steps_watched) steps=$(mapping steps)
  # The newest 20 spans are this run's (20 each way); each end's stamp within it (b's is 5 ms
  # behind, simulated), to the second: the step was 10 s.
  curl -sf "$AGENT_URL/api/v1/spans?limit=20" >"$R/spans-step.json"
  spans=$(jq '.spans | length' "$R/spans-step.json")
  off=$(jq --argjson t0 "$t0" --argjson t1 "$t1" \
    '[.spans[] | select(.send_ns < $t0 - 1e9 or .send_ns > $t1 + 1e9 or .recv_ns < $t0 - 1e9 or .recv_ns > $t1 + 1e9)] | length' \
    "$R/spans-step.json")
  date -s "now - 10 seconds" >/dev/null
  echo "kmatrix: clock stepped +10 s: watch woke $((watched - watched0)) time(s), mapping steps $steps0 -> $steps; $off of $spans spans after it dated outside the pings' run"
  if [ "$watched" -gt "$watched0" ] && [ "$steps" -gt "$steps0" ] && [ "$spans" -eq 20 ] && [ "$off" -eq 0 ]; then
    result clock_step pass "the watch woke, the mapping stepped, $spans spans after the step dated by the stepped clock"
  else
    result clock_step fail "watch $watched0 -> $watched, steps $steps0 -> $steps, $off of $spans spans dated outside the pings' run"
  fi
}
lab() {
  # A 30 s window holds the whole run: health turns 0 on the first inversion it holds, and the
  # spans of one clock before it are never negative.
  if ! start_agent "$R/agent-tcp.log" "${DOMAINS[@]}" --window 30s --send-max-age 2s --enable-spans-api; then
    family tcp "-" fails "$(first_error "$R/agent-tcp.log")"
    result family:tcp fail "agent did not start: $(first_error "$R/agent-tcp.log")"
    result lab fail "the agent did not start"
    return
  fi
  family_verdict tcp "$R/agent-tcp.log" "${variant:-?}"
  pings 2000
  status_json >"$R/snap.json"
  local ab ba nab nba
  ab=$(field a b spans) ba=$(field b a spans) nab=$(field a b negative_spans) nba=$(field b a negative_spans)
  echo "kmatrix: one clock: a->b $ab spans ($nab negative), b->a $ba spans ($nba negative)"
  "$SKEWSCOPE" simulate b=-5ms --control-socket /run/kmatrix.sock >/dev/null
  pings 1000
  status_json >"$R/snap2.json"
  cp "$R/snap2.json" "$R/snap.json"
  local ab2 nab2 health
  ab2=$(($(field a b spans) - ab)) nab2=$(($(field a b negative_spans) - nab)) health=$(field a b health)
  echo "kmatrix: b at -5ms: a->b $nab2 of $ab2 new spans negative, health $health"
  clock_step
  stop_agent lab
  printf 'one_clock_ab\t%s\none_clock_ba\t%s\nnegative_one_clock\t%s\nskewed_ab\t%s\nskewed_negative\t%s\nskewed_health\t%s\n' \
    "$ab" "$ba" "$((nab + nba))" "$ab2" "$nab2" "$health" >"$R/lab.tsv"
  if [ "$ab" -ge 1900 ] && [ "$ba" -ge 1900 ] && [ "$nab" -eq 0 ] && [ "$nba" -eq 0 ] &&
    [ "$ab2" -ge 900 ] && [ "$nab2" -gt $((ab2 / 2)) ] && [ "$health" = 0 ]; then
    result lab pass "a->b $ab, b->a $ba spans, 0 negative; b at -5ms: $nab2 of $ab2 negative, health 0"
  else
    result lab fail "a->b $ab ($nab negative), b->a $ba ($nba negative); b at -5ms: $nab2 of $ab2 negative, health $health"
  fi
}
lab
ip netns del ka; ip netns del kb
exit $failed
