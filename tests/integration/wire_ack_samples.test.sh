#!/usr/bin/env bash
# ACK samples (--wire-ack-samples): a one-way ZeroMQ PUSH/PULL hop a -> b carries data only one
# way, but every data segment is acknowledged b -> a. With ACKs paired at the wire level, the
# hop's offset interval is two-sided: at b = 0, +300 us and -300 us every two-sided interval holds
# the simulated truth and the half-width comes within 3 x the hop's wire Δt_min. The syscall level,
# for contrast, is printed (there only the handshake flows b -> a).
source "$(dirname "$0")/lib.sh"

lab_up 2
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 5s --send-max-age 2s --wire-timestamps "eth0@$(netns_path 1),eth0@$(netns_path 2)" --wire-ack-samples
level() {
  jq -r --arg l "$1" --arg f "$2" '[.pairs[] | select(.src=="a" and .dst=="b" and .transport=="tcp")][0].levels[]
     | select(.timestamp_source==$l) | .[$f] // "none"' "$WORK/snap.json"
}
port=7002
for sim in 0 300 -300; do
  "$SKEWSCOPE" simulate "b=${sim}us" --control-socket "$CONTROL" >/dev/null
  sleep 5  # the 5 s window forgets the previous offset
  in_host 2 "$TRAFFIC" zmq-pull --bind tcp://$B:$port --duration 8 >/dev/null &
  pull=$!
  in_host 1 "$TRAFFIC" zmq-push --connect tcp://$B:$port --size 200 --rate 1000 --duration 6 >/dev/null &
  push=$!
  # Polled while the traffic runs: every two-sided interval must hold the truth (no miss), and
  # the half-width must reach 3 x Δt_min (on a loaded machine the first seconds are wider).
  truth=$(awk -v us="$sim" 'BEGIN { printf "%.9f", us * 1e-6 }')
  sleep 2
  polls=0 two_sided=0 narrow=0 best=
  while kill -0 $push 2>/dev/null; do
    "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json" || true
    polls=$((polls + 1))
    lo=$(level wire_software offset_lower_bound_seconds); hi=$(level wire_software offset_upper_bound_seconds)
    dt=$(level wire_software delta_t_min_seconds)
    if [ "$lo" != none ] && [ "$hi" != none ] && [ "$dt" != none ]; then
      two_sided=$((two_sided + 1))
      approx_ge "$truth" "$lo" && approx_ge "$hi" "$truth" || fail "b at ${sim}us: truth $truth outside [$lo, $hi]"
      ratio=$(awk -v lo="$lo" -v hi="$hi" -v d="$dt" 'BEGIN { printf "%.2f", (hi - lo) / 2 / d }')
      approx_ge 3 "$ratio" && narrow=$((narrow + 1))
      best="[$lo, $hi] half-width $(awk -v lo="$lo" -v hi="$hi" 'BEGIN { printf "%.9f", (hi - lo) / 2 }') s = $ratio x Δt_min $dt s"
    fi
    sleep 0.5
  done
  wait $push || true
  wait $pull || true
  port=$((port + 1))
  note "b at ${sim}us: $polls polls, $two_sided two-sided (all holding the truth), $narrow within 3 x Δt_min; last $best"
  note "  syscall interval [$(level syscall offset_lower_bound_seconds), $(level syscall offset_upper_bound_seconds)]; ACK samples $(jq -c '.wire.ack_samples | {pairs, sends, recvs}' "$WORK/snap.json")"
  [ "$two_sided" -ge 3 ] || fail "b at ${sim}us: the wire interval was two-sided in only $two_sided of $polls polls"
  [ "$narrow" -ge 1 ] || fail "b at ${sim}us: the half-width never came within 3 x Δt_min"
done
echo "wire_ack_samples: 1 passed, 0 failed"
