#!/usr/bin/env bash
# kube-proxy-style DNAT in the client's host: the client connects to a ClusterIP (10.96.0.10:80),
# its own namespace's OUTPUT chain DNATs it to the server's pod address (10.77.0.2:7000), so the
# client's socket and the server's see different tuples. With --nat-conntrack domains the agent
# reads the client namespace's conntrack and pairs every request and reply exactly; a simulated
# skew on the server is detected through the translation. Rules only in the lab's namespaces.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"

lab_up 2
B=10.77.0.2
VIP=10.96.0.10
# The Service CIDR is routed like any non-local address (a node's default route), and the chains
# are kube-proxy's shape: KUBE-SERVICES -> KUBE-SVC-* -> KUBE-SEP-* with the DNAT.
in_host 1 ip route add 10.96.0.0/16 dev eth0
in_host 1 iptables-nft -t nat -N KUBE-SERVICES
in_host 1 iptables-nft -t nat -N KUBE-SVC-ECHO
in_host 1 iptables-nft -t nat -N KUBE-SEP-ECHO
in_host 1 iptables-nft -t nat -A OUTPUT -j KUBE-SERVICES
in_host 1 iptables-nft -t nat -A KUBE-SERVICES -d $VIP/32 -p tcp --dport 80 -j KUBE-SVC-ECHO
in_host 1 iptables-nft -t nat -A KUBE-SVC-ECHO -j KUBE-SEP-ECHO
in_host 1 iptables-nft -t nat -A KUBE-SEP-ECHO -p tcp -j DNAT --to-destination $B:7000

# Phase 0: a connection through the VIP that was open before the agent started. Its translation
# is known only from the dump the agent asks for at start (no NEW event will come for it).
in_host 2 "$TRAFFIC" echo-server --listen $B:7001 --duration 30 >/dev/null &
early_server=$!
in_host 1 iptables-nft -t nat -A KUBE-SERVICES -d $VIP/32 -p tcp --dport 81 -j DNAT --to-destination $B:7001
until in_host 2 ss -Hltn "sport = :7001" | grep -q .; do sleep 0.02; done
in_host 1 "$TRAFFIC" ping --connect $VIP:81 --size 64 --rate 100 --duration 8 >"$WORK/early.out" &
early=$!
sleep 1

start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --nat-conntrack domains --window 5s --send-max-age 2s
wait $early || fail "the early connection's pings failed: $(cat "$WORK/early.out")"
wait $early_server || true
sleep 2.5
nat_status
early_ab=$(nat_count a b spans); early_ba=$(nat_count b a spans)
note "connection open before the agent: a->b $early_ab spans, b->a $early_ba (of the pings made while the agent ran)"
[ "$early_ab" -ge 200 ] && [ "$early_ba" -ge 200 ] ||
  fail "the connection open before the agent did not pair through its dumped translation"

# Phase 1: one clock. 20 connections of 25 requests: 500 requests, 500 replies.
unpaired0=$(nat_field '.capture.unpaired_sends'); translated0=$(nat_field '.nat.halves_translated')
nat_requests 1 2 $B:7000 $VIP:80 20 25
sleep 2.5  # unpaired sends, if any, age out after --send-max-age
nat_status
nat_check_exact a b 500 "$early_ab" "$early_ba"
[ "$(nat_field '.nat.namespaces | length')" -eq 2 ] || fail "expected the two domains' namespaces watched"
[ "$(nat_field '.nat.entries.translated')" -ge 20 ] || fail "expected the 20 connections' translated entries"
[ "$(nat_field '.nat.halves_translated')" -eq $((translated0 + 1000)) ] || fail "expected the client's 1000 halves translated"
[ "$(nat_field '.capture.unpaired_sends')" -eq "$unpaired0" ] || fail "unpaired sends through the DNAT"
"$SKEWSCOPE" status --agent "$AGENT_URL" >/dev/null || fail "status exit code should be 0 when healthy"

# Phase 2: b's clock 50 ms behind: requests a->b negative, replies b->a not.
nat_check_skew a b 1 2 $B:7000 $VIP:80 4 25
echo "nat_dnat: 1 passed, 0 failed"
