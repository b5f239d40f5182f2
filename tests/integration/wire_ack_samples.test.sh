#!/usr/bin/env bash
# ACK samples (--wire-ack-samples): a one-way ZeroMQ PUSH/PULL hop a -> b carries data only one
# way, but every data segment is acknowledged b -> a. With ACKs paired at the wire level, the
# hop's offset interval is two-sided: at b = 0, +300 us and -300 us it holds the simulated truth
# and its half-width is within 3 x the hop's wire-level Δt_min. The syscall level, for contrast,
# is printed (there only the handshake flows b -> a).
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
  in_host 2 "$TRAFFIC" zmq-pull --bind tcp://$B:$port --duration 6 >/dev/null &
  pull=$!
  in_host 1 "$TRAFFIC" zmq-push --connect tcp://$B:$port --size 200 --rate 1000 --duration 4 >/dev/null
  wait $pull || true
  port=$((port + 1))
  "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json" || true
  lo=$(level wire_software offset_lower_bound_seconds); hi=$(level wire_software offset_upper_bound_seconds)
  dt=$(level wire_software delta_t_min_seconds)
  note "b at ${sim}us: wire interval [$lo, $hi], Δt_min $dt; syscall interval [$(level syscall offset_lower_bound_seconds), $(level syscall offset_upper_bound_seconds)]; ACK samples $(jq -c '.wire.ack_samples | {pairs, sends, recvs}' "$WORK/snap.json")"
  [ "$lo" != none ] && [ "$hi" != none ] || fail "b at ${sim}us: the wire interval is not two-sided"
  truth=$(awk -v us="$sim" 'BEGIN { printf "%.9f", us * 1e-6 }')
  approx_ge "$truth" "$lo" && approx_ge "$hi" "$truth" || fail "b at ${sim}us: truth $truth outside [$lo, $hi]"
  half=$(awk -v lo="$lo" -v hi="$hi" 'BEGIN { printf "%.9f", (hi - lo) / 2 }')
  note "half-width $half s, $(awk -v h="$half" -v d="$dt" 'BEGIN { printf "%.2f", h / d }') x Δt_min"
  approx_ge "$(awk -v d="$dt" 'BEGIN { printf "%.9f", 3 * d }')" "$half" || fail "b at ${sim}us: half-width $half above 3 x Δt_min $dt"
done
echo "wire_ack_samples: 1 passed, 0 failed"
