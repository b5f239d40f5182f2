#!/usr/bin/env bash
# MASQUERADE on a router host with one agent per host, joined by a test Kafka (the exchange): the
# client (h1, 10.78.1.1) reaches the server (h3, 10.78.2.3) through the router (h2), which
# MASQUERADEs out of its server-side link, so the server's socket sees the router's address
# (10.78.2.2) and port. Only the router's agent reads the router's conntrack (--nat-conntrack
# domains); it ships each translation to the owner of the client's host pair, which re-keys the
# client's halves and forwards them to the owner of the server's host pair (the router's address
# and the server's): every request and reply pairs exactly, and a skew simulated on the server's
# agent is detected through the NAT. The client's and the server's agents know nothing of it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
source "$(dirname "$0")/nat_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 3
masquerade_router_up  # h1 <-> h2 (router, MASQUERADE) <-> h3; the server is $S

start_kafka 3
common=(--only-domains --window 30s --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID"
  --exchange-key-file "$EXCHANGE_KEY")
start_named_agent x1 --host-name node1 --domain h1=netns:"$(netns_path 1)" "${common[@]}"
start_named_agent x2 --host-name router --domain h2=netns:"$(netns_path 2)" --nat-conntrack domains "${common[@]}"
start_named_agent x3 --host-name node3 --domain h3=netns:"$(netns_path 3)" "${common[@]}"
wait_exchange_settled 3 x1 x2 x3

# pair_view SRC DST FIELD: from whichever agent reports the pair (the owner of the router|server key)
pair_view() {
  local a v found=0
  for a in x1 x2 x3; do
    v=$(pair_from $a "$1" "$2" "$3")
    [ "$v" != none ] && found=$v
  done
  echo "$found"
}
# nat_sum FIELD: an exchange.nat counter summed over the three agents
nat_sum() {
  local a total=0
  for a in x1 x2 x3; do total=$((total + $(agent_status $a | jq -r ".exchange.nat.$1 // 0"))); done
  echo $total
}
settle() { sleep 3; }  # linger, ship, fetch, forward, fetch, and the last halves' reorder allowance

# Phase 1: one clock. 20 connections of 25 requests through the router.
nat_requests 1 3 $S:7000 $S:7000 20 25
settle
ab=$(pair_view h1 h3 spans); ba=$(pair_view h3 h1 spans)
note "h1->h3 $ab spans, h3->h1 $ba (want 500 each way); router shipped $(agent_status x2 | jq -r .exchange.nat.translations_shipped)," \
     "forwarded $(nat_sum halves_forwarded) (taken back $(nat_sum halves_taken_back)), outside_window $(nat_sum outside_window)"
[ "$ab" -eq 500 ] || fail "expected exactly 500 spans h1->h3 through the router's MASQUERADE and the exchange, got $ab"
[ "$ba" -eq 500 ] || fail "expected exactly 500 spans h3->h1 through the router's MASQUERADE and the exchange, got $ba"
[ "$(pair_view h1 h3 negative_spans)" -eq 0 ] && [ "$(pair_view h3 h1 negative_spans)" -eq 0 ] || fail "negative span with one clock"
[ "$(agent_status x2 | jq -r .exchange.nat.translations_shipped)" -ge 20 ] || fail "the router's agent should ship its 20 translations"
[ "$(nat_sum halves_forwarded)" -eq 1000 ] || fail "expected the client's 1000 halves forwarded once, got $(nat_sum halves_forwarded)"
[ "$(nat_sum received)" -ge 20 ] || fail "the owner of the client's pair should hold the translations"
shipped=$(curl -sf "${AGENT_URLS[x2]}/metrics" | sed -n 's/^skewscope_exchange_nat_total{event="shipped"} //p')
[ "${shipped:-0}" -ge 20 ] || fail "/metrics: the router's skewscope_exchange_nat_total{event=\"shipped\"} is '$shipped'"
for a in x1 x3; do
  [ "$(agent_status $a | jq -r '.nat')" = null ] || fail "$a reads no conntrack"
  [ "$(agent_status $a | jq -r .exchange.nat.translations_shipped)" -eq 0 ] || fail "$a shipped translations"
done
unpaired=0
for a in x1 x2 x3; do unpaired=$((unpaired + $(agent_status $a | jq -r '.exchange.unpaired_sends'))); done
[ "$unpaired" -eq 0 ] || fail "expected no unpaired sends on any owner, got $unpaired"

# Phase 2: h3's clock 50 ms behind (on h3's agent): requests h1->h3 negative, replies not.
nat_exchange_check_skew h1 h3 "$WORK/x3.sock" 1 3 $S:7000 $S:7000 4 25
echo "nat_masquerade_exchange: 1 passed, 0 failed"
