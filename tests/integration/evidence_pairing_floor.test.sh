#!/usr/bin/env bash
# The pairing floor: a domain whose halves mostly fail to pair (address translation once gave
# 0 spans and health 1) cannot vouch for its traffic. Cgroup domains client (host 1) and server (host 2), --only-domains:
#  1. client <-> server pings pair: health 1, exit 0;
#  2. the client pings a server on host 2 outside every domain (capture on one side only: its
#     address is captured, through the server domain, but its halves are not): the client's
#     halves mostly fail to pair -> health null, "unknown: N% of halves unpaired", the
#     domain's ratio in /metrics, the pairs unknown (halves_unpaired), exit 1;
#  3. once those halves have left the window: the client pings host 3, which no domain captures
#     (a host without an agent): its unpaired sends are not failures, health 1 again, exit 0.
source "$(dirname "$0")/lib.sh"

trap 'rc_=$?; set +e; remove_test_cgroups; (exit $rc_); cleanup' EXIT INT TERM
make_test_cgroups client server outside

lab_up 3
start_agent --domain client=cgroup:"$CG/client" --domain server=cgroup:"$CG/server" --only-domains \
  --window 5s --send-max-age 1s
B=10.77.0.2 C=10.77.0.3
ping_to() {  # ping_to CGROUP HOST ADDR:PORT COUNT: an echo server (one connection) there, pinged by the client
  in_cgroup "$CG/$1" ip netns exec "$LAB_NAME-h$2" "$TRAFFIC" echo-server --listen "$3" --duration 30 >/dev/null &
  local server=$!
  sleep 0.3
  in_cgroup "$CG/client" ip netns exec "$LAB_NAME-h1" "$TRAFFIC" ping --connect "$3" --size 64 --count "$4" >/dev/null
  wait $server || true
}
snapshot() {
  set +e; "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/snap.json"; SNAP_RC=$?; set -e
  curl -sf "$AGENT_URL/metrics" >"$WORK/metrics.txt" || fail "scrape failed"
}
client_pairing() { jq -c '.capture.window_pairing.domains.client' "$WORK/snap.json"; }

# 1. Baseline: everything pairs.
ping_to server 2 $B:7100 300
sleep 0.5
snapshot
note "baseline: health $(jq .health "$WORK/snap.json"), client $(client_pairing)"
[ "$(jq .health "$WORK/snap.json")" = 1 ] && [ $SNAP_RC -eq 0 ] || fail "baseline should be healthy, exit 0 (got $SNAP_RC)"

# 2. One side only: 500 round trips whose server end is not captured. The sends age out after
# --send-max-age (1 s), the receives after the reorder allowance (1 s).
ping_to outside 2 $B:7200 500
ping_to server 2 $B:7100 50  # some traffic that still pairs, in the same window
sleep 2.5
snapshot
s=$WORK/snap.json
note "one side: health $(jq .health "$s"), $(jq -r .health_reason "$s"); client $(client_pairing);" \
     "unpaired_sends $(jq .capture.unpaired_sends "$s"), unpaired_recvs $(jq .capture.unpaired_recvs "$s")"
jq -e '.capture.window_pairing.domains.client | .unpaired_halves >= 1000 and .below_floor == true and .ratio < 0.9' "$s" >/dev/null ||
  fail "the client domain should be below the pairing floor: $(client_pairing)"
jq -e '.health == null and .unknown_reason == "halves_unpaired"' "$s" >/dev/null || fail "overall health should be null (halves_unpaired)"
jq -e '.health_reason | test("^unknown: [0-9]+% of halves unpaired in the window \\(client [0-9]+ of [0-9]+\\)$")' "$s" >/dev/null ||
  fail "health_reason should give the share unpaired: $(jq .health_reason "$s")"
jq -e '[.pairs[] | select(.transport == "tcp") | .health == null and .unknown_reason == "halves_unpaired"] | all and length == 2' "$s" >/dev/null ||
  fail "client<->server pairs should be unknown (halves_unpaired): $(jq -c '[.pairs[] | {src, dst, health, unknown_reason}]' "$s")"
jq -e '.capture.unpaired_recvs >= 500' "$s" >/dev/null || fail "the receives from the uncaptured server should be unpaired"
[ $SNAP_RC -eq 1 ] || fail "status should exit 1 below the pairing floor, got $SNAP_RC"
grep -q '^skewscope_health_unknown{reason="halves_unpaired"} 1$' "$WORK/metrics.txt" || fail "/metrics: no skewscope_health_unknown{reason=\"halves_unpaired\"}"
ratio=$(sed -n 's/^skewscope_window_pairing_ratio{domain="client"} //p' "$WORK/metrics.txt")
[ -n "$ratio" ] && awk -v r="$ratio" 'BEGIN { exit !(r < 0.9) }' || fail "/metrics: client's window pairing ratio $ratio, want < 0.9"
! grep -q '^skewscope_causality_health ' "$WORK/metrics.txt" || fail "no overall health sample below the floor"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 || { cat "$WORK/promtool.out"; fail "promtool check metrics"; }

# 3. The window (5 s) forgets step 2; a host without an agent is no failure.
sleep 5
sends_before=$(jq .capture.unpaired_sends "$s")
ping_to outside 3 $C:7300 500
ping_to server 2 $B:7100 300
sleep 2
snapshot
s=$WORK/snap.json
note "peer without agent: health $(jq .health "$s"), client $(client_pairing), unpaired_sends $(jq .capture.unpaired_sends "$s") (was $sends_before)"
jq -e --argjson b "$sends_before" '.capture.unpaired_sends >= $b + 500' "$s" >/dev/null || fail "the sends to host 3 should have aged out unpaired"
jq -e '.capture.window_pairing.domains.client | .unpaired_halves == 0 and .below_floor == false' "$s" >/dev/null ||
  fail "halves whose peer is not captured must not count: $(client_pairing)"
[ "$(jq .health "$s")" = 1 ] || fail "health should be 1 again: $(jq -c '{health, unknown_reason, health_reason}' "$s")"
[ $SNAP_RC -eq 0 ] || fail "status should exit 0 again, got $SNAP_RC"
echo "evidence_pairing_floor: 1 passed, 0 failed"
