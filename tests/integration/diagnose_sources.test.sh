#!/usr/bin/env bash
# The causes that need the clocks' own sources, with real traffic through the real agent: three
# lab hosts (h1, h2, h3) pinging each other both ways, and a real ptp4l pair (a grandmaster and a
# `free_running 1` slave, diagnose_lib.sh) whose slave gives the agent a claimed bound of a few µs.
#  - fault-free with that claim: every pair `none` (no asymmetry or disagreement made up);
#  - every packet h2 sends held 1 ms (diagnose_delay.py: a TUN device, as this kernel has no
#    netem): the pairs with h2 are `path_asymmetry`, no clock blamed; h1-h3 stays `none`;
#  - the grandmaster's ptp4l killed: every pair `ptp_lost` (the hosts share the slave), no single
#    culprit;
#  - a fresh agent whose h3 clock is +3 ms off from its start (`--simulate-clock`), far beyond the
#    claimed µs: the pairs with h3 are `clock_source_disagrees` with culprit h3 (not clock_step:
#    the history never saw it happen), h1-h2 `none`.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/diagnose_lib.sh"

trap 'rc_=$?; set +e; delay_stop; ptp_pair_down; (exit $rc_); cleanup' EXIT INT TERM

lab_up 3
ptp_pair_up 10.79.8
PAIRS=("h1 h2" "h2 h3" "h1 h3")

agent() {
  agent_stop
  start_agent --domain h1=netns:"$(netns_path 1)" --domain h2=netns:"$(netns_path 2)" \
    --domain h3=netns:"$(netns_path 3)" --only-domains --window 5s --send-max-age 1s \
    --ptp4l-socket "$PTP_SLAVE_SOCKET" "$@"
}
# Pings both ways between every two hosts for the whole test.
diagnose_traffic 110 7700
since() { echo "$(date +%s.%N) - $1" | bc; }

# Fault-free, with the claimed bound.
agent
CAUSE=none
wait_until 15 all_pairs || { show; fail "fault-free: every pair should be none"; }
s=$(status_json)
jq -e '.hosts[] | select(.host == "h1") | .clock | test("ptp4l: port UNCALIBRATED")' <<<"$s" >/dev/null ||
  fail "the hosts should show the slave's ptp4l: $(jq -c .hosts <<<"$s")"
note "fault-free: $(jq -c '[.hosts[] | {host, clock}][0]' <<<"$s")"

# Path asymmetry: h2's sends (its pings and its echo replies) wait 1 ms more.
delay_start 2 1 3
t0=$(date +%s.%N)
lopsided() {
  [ "$(diag h1 h2 cause)" = path_asymmetry ] && [ "$(diag h2 h3 cause)" = path_asymmetry ]
}
wait_until 15 lopsided || { show; fail "asymmetry: h1-h2 and h2-h3 should be path_asymmetry"; }
note "asymmetry: verdict $(since "$t0")s after the delay; $(show)"
[ "$(diag h1 h3 cause)" = none ] || fail "asymmetry: h1-h3 should stay none, is $(diag h1 h3 cause)"
[ "$(diag h1 h2 culprit)" = null ] || fail "asymmetry: no clock should be blamed, h1-h2 names $(diag h1 h2 culprit)"
status_json | jq -e '[.hosts[] | select(.culprit)] | length == 0' >/dev/null || fail "asymmetry: nobody should be blamed"
delay_stop
note "delay: $(cat "$WORK/delay.log" | tr '\n' ' ')"

# The grandmaster lost: the slave's port leaves UNCALIBRATED.
agent
CAUSE=none
wait_until 15 all_pairs || { show; fail "ptp: every pair should be none before the grandmaster goes"; }
ptp_gm_stop
t0=$(date +%s.%N)
CAUSE=ptp_lost
wait_until 10 all_pairs || { show; fail "ptp: every pair should be ptp_lost once the grandmaster is gone"; }
note "ptp_lost: verdict $(since "$t0")s after the grandmaster stopped; $(show)"
s=$(status_json)
jq -e '[.hosts[] | select(.culprit)] | length == 0' <<<"$s" >/dev/null ||
  fail "ptp: the hosts share one ptp4l, none can be singled out: $(jq -c .hosts <<<"$s")"
ptp_gm_start
wait_until 20 ptp_has_bound || fail "ptp: the slave should give a bound again once the grandmaster is back"

# A clock off from the start by far more than its source claims.
agent --simulate-clock h3=+3ms
t0=$(date +%s.%N)
disagrees() {
  [ "$(diag h1 h3 cause)" = clock_source_disagrees ] && [ "$(diag h1 h3 culprit)" = h3 ] &&
    [ "$(diag h2 h3 cause)" = clock_source_disagrees ] && [ "$(diag h2 h3 culprit)" = h3 ]
}
wait_until 20 disagrees || { show; fail "disagrees: h1-h3 and h2-h3 should be clock_source_disagrees with culprit h3"; }
note "disagrees: verdict $(since "$t0")s after the agent started; $(show)"
[ "$(diag h1 h2 cause)" = none ] || fail "disagrees: h1-h2 should be none, is $(diag h1 h2 cause)"
s=$(status_json)
jq -e '.hosts[] | select(.host == "h3") | .culprit and .cause == "clock_source_disagrees"' <<<"$s" >/dev/null ||
  fail "disagrees: h3 should be the culprit: $(jq -c .hosts <<<"$s")"
amount=$(jq -r '.hosts[] | select(.host=="h3") | .amount' <<<"$s")
awk -v a="$amount" 'BEGIN { exit !(a > 0.0029 && a < 0.0031) }' || fail "disagrees: h3 should be about +3 ms off, is $amount s"
echo "diagnose_sources: 1 passed, 0 failed"
