#!/usr/bin/env bash
# IPv6 and link-local pairing, kept in the suite as a root test. Each lab host gets a
# ULA address and a fixed link-local one (nodad: usable at once). On every capture variant: pings
# over each pair exactly, both ways; then, with b's clock simulated 200 ms behind (far more than
# any one-way delay of a loaded 2-core lab), every new span a -> b over link-local is negative.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tcp_shapes_lib.sh"

lab_up 2
for i in 1 2; do
  in_host $i ip addr add fd77::$i/64 dev eth0 nodad
  in_host $i ip addr add fe80::77:$i/64 dev eth0 nodad
done
PINGS=300

pings_to_b() {  # pings_to_b ENDPOINT_AT_B COUNT: every round trip answered
  pings 1 2 "$1" "$2"
  grep -q "^ping: $2 round trips" "$WORK/ping.out" || fail "ping over $1: $(cat "$WORK/ping.out")"
}

port=7500
for variant in "${TCP_VARIANTS[@]}"; do
  start_variant_agent "$variant" --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" \
    --only-domains --window 60s
  port=$((port + 1))
  pings_to_b "[fd77::2]:$port" $PINGS
  expect_spans "$variant" "IPv6 ULA" a b $PINGS
  expect_spans "$variant" "IPv6 ULA" b a $PINGS
  port=$((port + 1))
  pings_to_b "[fe80::77:2%eth0]:$port" $PINGS
  expect_spans "$variant" "IPv6 link-local" a b $((2 * PINGS))
  expect_spans "$variant" "IPv6 link-local" b a $((2 * PINGS))
  "$SKEWSCOPE" simulate b=-200ms --control-socket "$CONTROL" >/dev/null
  port=$((port + 1))
  pings_to_b "[fe80::77:2%eth0]:$port" $PINGS
  wait_until 10 spans_are a b $((3 * PINGS)) || fail "$variant: link-local pings with skew did not all pair"
  negative=$(pair_field a b negative_spans)
  note "$variant: b 200 ms behind: $negative of $PINGS new spans a->b negative"
  [ "$negative" = $PINGS ] || fail "$variant: expected all $PINGS link-local spans a->b negative, got $negative"
  agent_stop
done
echo "tcp_ipv6: 1 passed, 0 failed"
