#!/usr/bin/env bash
# MASQUERADE on a router host between two hosts: the client (h1, 10.78.1.1) reaches the server
# (h3, 10.78.2.3) through the router (h2), which forwards and MASQUERADEs out of its server-side
# link, so the server's socket sees the router's address (10.78.2.2) and port. The router runs no
# traffic of its own and is no domain; --nat-conntrack names its namespace, and the one agent for
# all hosts pairs every request and reply exactly; a simulated skew is detected through the NAT.
# Then the client also DNATs a Service VIP to the server: both translations compose; and the
# router DNATs another VIP in PREROUTING (a node's kube-proxy) as well as MASQUERADEs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"

lab_up 3
masquerade_router_up  # h1 <-> h2 (router, MASQUERADE) <-> h3; the server is $S

start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 3)" --only-domains \
  --nat-conntrack "$(netns_path 2)" --window 5s --send-max-age 2s

# Phase 1: one clock. 20 connections of 25 requests through the router.
nat_requests 1 3 $S:7000 $S:7000 20 25
sleep 2.5  # unpaired sends, if any, age out after --send-max-age
nat_status
nat_check_exact a b 500 0 0
[ "$(nat_field '.capture.unpaired_sends')" -eq 0 ] || fail "unpaired sends through the MASQUERADE"
[ "$(nat_field '.nat.namespaces[0].netns')" = "$(netns_path 2)" ] || fail "expected the router's namespace watched"
[ "$(nat_field '.nat.entries.translated')" -ge 20 ] || fail "expected the 20 connections' translated entries"
[ "$(nat_field '.nat.halves_translated')" -eq 1000 ] || fail "expected the client's 1000 halves translated"
"$SKEWSCOPE" status --agent "$AGENT_URL" >/dev/null || fail "status exit code should be 0 when healthy"

# Phase 2: a DNAT in the client as well (a Service VIP), then the router's MASQUERADE. The agent
# reads only the router's namespace so far: restart it to read the client's too.
in_host 1 ip route add 10.96.0.0/16 via 10.78.1.2
in_host 1 iptables-nft -t nat -A OUTPUT -d 10.96.0.10/32 -p tcp --dport 80 -j DNAT --to-destination $S:7000
agent_stop
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 3)" --only-domains \
  --nat-conntrack "domains,$(netns_path 2)" --window 5s --send-max-age 2s
nat_requests 1 3 $S:7000 10.96.0.10:80 8 25
sleep 2.5
nat_status
nat_check_exact a b 200 0 0
[ "$(nat_field '.nat.namespaces | length')" -eq 3 ] || fail "expected three namespaces watched"

# Phase 2b: the Service DNAT in the router's PREROUTING instead (kube-proxy on a node, for the
# traffic of the pods behind it), with the MASQUERADE: one conntrack entry holds both.
in_host 1 ip route add 10.97.0.0/16 via 10.78.1.2
in_host 2 iptables-nft -t nat -A PREROUTING -d 10.97.0.10/32 -p tcp --dport 80 -j DNAT --to-destination $S:7000
ab0=$(nat_count a b spans); ba0=$(nat_count b a spans)
nat_requests 1 3 $S:7000 10.97.0.10:80 8 25
sleep 2.5
nat_status
nat_check_exact a b 200 "$ab0" "$ba0"

# Phase 3: b's clock 50 ms behind, through both translations.
nat_check_skew a b 1 3 $S:7000 10.96.0.10:80 4 25
echo "nat_masquerade: 1 passed, 0 failed"
