#!/usr/bin/env bash
# kube-proxy-style DNAT in the client's host with one agent per host, joined by a test Kafka (the
# exchange). The client's agent reads its own namespace's conntrack (--nat-conntrack domains), so
# it ships its halves under the tuple the server's agent sees (client -> pod), and the owner of the
# host pair pairs every request and reply exactly; a skew simulated on the server's agent is
# detected through the translation. The server's agent knows nothing of the NAT. A DNAT in the
# server's own PREROUTING, which no agent reads, leaves halves of both hosts unpaired at the owner:
# the pairing floor over the exchanged halves makes the owner's health unknown.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
source "$(dirname "$0")/nat_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
B=10.77.0.2
VIP=10.96.0.10
in_host 1 ip route add 10.96.0.0/16 dev eth0
in_host 1 iptables-nft -t nat -A OUTPUT -d $VIP/32 -p tcp --dport 80 -j DNAT --to-destination $B:7000
in_host 2 iptables-nft -t nat -A PREROUTING -d $B/32 -p tcp --dport 81 -j DNAT --to-destination $B:7000

start_kafka 2
common=(--only-domains --window 30s --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID"
  --exchange-key-file "$EXCHANGE_KEY")
start_named_agent x1 --host-name node1 --domain h1=netns:"$(netns_path 1)" --nat-conntrack domains "${common[@]}"
start_named_agent x2 --host-name node2 --domain h2=netns:"$(netns_path 2)" "${common[@]}"
wait_exchange_settled 2 x1 x2

# pair_view SRC DST FIELD: from whichever agent reports the pair (its owner), 0 when none does
pair_view() {
  local a v found=0
  for a in x1 x2; do
    v=$(pair_from $a "$1" "$2" "$3")
    [ "$v" != none ] && found=$v
  done
  echo "$found"
}
settle() { sleep 3; }  # linger, ship, fetch, and the last halves' reorder allowance

# Phase 1: one clock. 20 connections of 25 requests through the Service VIP.
nat_requests 1 2 $B:7000 $VIP:80 20 25
settle
ab=$(pair_view h1 h2 spans); ba=$(pair_view h2 h1 spans)
note "h1->h2 $ab spans, h2->h1 $ba (want 500 each way); x1 nat: $(agent_status x1 | jq -c '.nat | {mappings, halves_translated}')"
[ "$ab" -eq 500 ] || fail "expected exactly 500 spans h1->h2 through the DNAT and the exchange, got $ab"
[ "$ba" -eq 500 ] || fail "expected exactly 500 spans h2->h1 through the DNAT and the exchange, got $ba"
[ "$(pair_view h1 h2 negative_spans)" -eq 0 ] && [ "$(pair_view h2 h1 negative_spans)" -eq 0 ] || fail "negative span with one clock"
[ "$(agent_status x1 | jq -r '.nat.halves_translated')" -eq 1000 ] || fail "expected x1 to translate its 1000 halves"
owner=x1; [ "$(pair_from x2 h1 h2 spans)" != none ] && owner=x2

# Phase 1b: 10 connections of 25 requests to $B:81, DNATed in h2's PREROUTING (h2's conntrack
# is read by no agent): h1's halves keyed ->:81, h2's ->:7000, both at the owner of the host
# pair, where they age out unpaired (500 of 1500 halves of each domain): below the floor.
nat_requests 1 2 $B:7000 $B:81 10 25
sleep 3.5  # --send-max-age 2 s, the receives' 1 s allowance, linger and fetch
s=$(agent_status $owner)
note "owner $owner: health $(jq .health <<<"$s"), $(jq -r .health_reason <<<"$s"); pairing $(jq -c .capture.window_pairing.domains <<<"$s"); unpaired_sends $(jq .exchange.unpaired_sends <<<"$s")"
for d in h1 h2; do
  jq -e --arg d $d '.capture.window_pairing.domains[$d] | .paired_halves == 1000 and .unpaired_halves == 500 and .below_floor' <<<"$s" >/dev/null ||
    fail "$d should be below the pairing floor with 500 unpaired exchanged halves: $(jq -c .capture.window_pairing.domains <<<"$s")"
done
jq -e '.health == null and .unknown_reason == "halves_unpaired"' <<<"$s" >/dev/null || fail "the owner's health should be null (halves_unpaired)"
# (The pairs may still say window_filling: the owner has held the partition for less than --window.)
jq -e '[.pairs[] | select(.transport == "tcp") | .health == null] | all and length == 2' <<<"$s" >/dev/null ||
  fail "h1<->h2 should be unknown: $(jq -c '[.pairs[] | {src, dst, health, unknown_reason}]' <<<"$s")"
set +e; "$SKEWSCOPE" status --agent "${AGENT_URLS[$owner]}" >/dev/null; rc=$?; set -e
[ $rc -eq 1 ] || fail "the owner's status should exit 1 below the pairing floor, got $rc"

# Phase 2: h2's clock 50 ms behind (on h2's agent): requests h1->h2 negative, replies not.
nat_exchange_check_skew h1 h2 "$WORK/x2.sock" 1 2 $B:7000 $VIP:80 4 25
echo "nat_dnat_exchange: 1 passed, 0 failed"
