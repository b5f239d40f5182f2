#!/usr/bin/env bash
# Message-level spans through a kube-proxy-style DNAT (--payload-bytes with --nat-conntrack): a
# ZeroMQ REQ client connects to a Service VIP that its namespace DNATs to the REP server. Payload
# halves are keyed by the TCP tuple too, so they are translated like the syscall halves: 2000
# requests and 2000 replies give exactly 2000 zmtp spans each way, and PUSH/PULL messages through
# the VIP pair exactly as well.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zmtp_lib.sh"

lab_up 2
B=10.77.0.2
VIP=10.96.0.20
in_host 1 ip route add 10.96.0.0/16 dev eth0
in_host 1 iptables-nft -t nat -A OUTPUT -d $VIP/32 -p tcp --dport 81 -j DNAT --to-destination $B:7102
in_host 1 iptables-nft -t nat -A OUTPUT -d $VIP/32 -p tcp --dport 82 -j DNAT --to-destination $B:7103
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 10s --payload-bytes 8192 --nat-conntrack domains


# REQ/REP through the VIP: 2000 requests, 2000 replies.
in_host 2 "$ZMQ_TOOL" rep --bind tcp://$B:7102 --count 2000 >"$WORK/rep.out" &
rep=$!
in_host 1 "$ZMQ_TOOL" req --connect tcp://$VIP:81 --count 2000 --size 16 >"$WORK/req.out"
wait $rep || fail "REP did not answer every request"
settle b a 2000
ab=$(zmtp_field a b spans); ba=$(zmtp_field b a spans)
note "req/rep through $VIP:81: $ab zmtp spans a->b, $ba b->a (want 2000 each); nat: $(status_json | jq -c '.nat | {mappings, halves_translated}')"
[ "$ab" -eq 2000 ] || fail "expected 2000 request spans a->b through the DNAT, got $ab"
[ "$ba" -eq 2000 ] || fail "expected 2000 reply spans b->a through the DNAT, got $ba"
[ "$(zmtp_field a b negative_spans)" -eq 0 ] && [ "$(zmtp_field b a negative_spans)" -eq 0 ] ||
  fail "negative zmtp span with one shared clock"

# PUSH/PULL through the VIP: 5000 messages, coalesced into few writes.
in_host 2 "$ZMQ_TOOL" pull --bind tcp://$B:7103 --count 5000 >"$WORK/pull.out" &
pull=$!
in_host 1 "$ZMQ_TOOL" push --connect tcp://$VIP:82 --count 5000 --size 8 >/dev/null
wait $pull || fail "PULL did not receive every message: $(cat "$WORK/pull.out")"
settle a b 7000
pushed=$(( $(zmtp_field a b spans) - ab ))
note "push/pull through $VIP:82: $pushed zmtp spans a->b (want 5000)"
[ "$pushed" -eq 5000 ] || fail "expected 5000 push spans a->b through the DNAT, got $pushed"
echo "nat_zmtp: 1 passed, 0 failed"
