# Shared by nat_*.test.sh: request/response traffic on fresh connections, each through the lab's
# address translation, and the checks of its pairing. Source after lib.sh.

# nat_requests CLIENT_HOST SERVER_HOST SERVER_LISTEN CONNECT CONNECTIONS PINGS: CONNECTIONS
# connections one after the other, each with PINGS request/response pairs, to CONNECT (the
# address the client uses: a Service VIP, or the server behind a router); the server listens on
# SERVER_LISTEN. Each connection is a new conntrack entry, so each is translated anew.
nat_requests() {
  local client=$1 server=$2 listen=$3 connect=$4 connections=$5 pings=$6 i
  for i in $(seq 1 "$connections"); do
    in_host "$server" "$TRAFFIC" echo-server --listen "$listen" --duration 30 >/dev/null &
    local pid=$! tries=0
    until in_host "$server" ss -Hltn "sport = :${listen##*:}" | grep -q .; do
      tries=$((tries + 1)); [ $tries -lt 250 ] || fail "echo server on $listen did not listen"; sleep 0.02
    done
    in_host "$client" "$TRAFFIC" ping --connect "$connect" --size 64 --count "$pings" >>"$WORK/ping.out" 2>&1 ||
      fail "connection $i to $connect failed: $(tail -1 "$WORK/ping.out")"
    wait "$pid" || true
  done
  sleep 0.5  # the agent reads the ring buffer every 20 ms: let it take the last halves
}

# nat_status: the status JSON once, for the checks of one phase (the window moves between calls).
nat_status() { status_json >"$WORK/status.json"; }
nat_pair() {  # nat_pair SRC DST FIELD, from the last nat_status
  jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // "none"' "$WORK/status.json"
}
nat_count() {  # nat_count SRC DST FIELD: a counter of the pair, 0 while the pair has no span at all
  jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // 0' "$WORK/status.json"
}
nat_field() { jq -r "$1" "$WORK/status.json"; }  # nat_field JQ_PATH

# nat_check_exact SRC DST EXPECTED_EACH_WAY BEFORE_AB BEFORE_BA: the spans added each way since
# BEFORE_* are exactly EXPECTED, none negative (one shared clock).
nat_check_exact() {
  local a=$1 b=$2 want=$3 ab ba
  ab=$(( $(nat_count "$a" "$b" spans) - $4 ))
  ba=$(( $(nat_count "$b" "$a" spans) - $5 ))
  note "$a->$b $ab spans, $b->$a $ba spans (want $want each way); nat: $(jq -c '.nat | {mappings, entries, halves_translated, evicted_full, rejected}' "$WORK/status.json")"
  [ "$ab" -eq "$want" ] || fail "expected exactly $want spans $a->$b through the translation, got $ab"
  [ "$ba" -eq "$want" ] || fail "expected exactly $want spans $b->$a through the translation, got $ba"
  [ "$(nat_count "$a" "$b" negative_spans)" -eq 0 ] || fail "negative span $a->$b with one shared clock"
  [ "$(nat_count "$b" "$a" negative_spans)" -eq 0 ] || fail "negative span $b->$a with one shared clock"
}

# nat_check_skew A B TRAFFIC...: with B's clock simulated 50 ms behind (more than any loaded lab's
# one-way latency), requests A->B turn negative (at least 99 %: health 0, violated) and replies
# B->A none, through the translation.
nat_check_skew() {
  local a=$1 b=$2 neg_before spans_before neg spans
  "$SKEWSCOPE" simulate "$b=-50ms" --control-socket "$CONTROL" >/dev/null
  nat_status
  neg_before=$(nat_count "$a" "$b" negative_spans); spans_before=$(nat_count "$a" "$b" spans)
  shift 2
  nat_requests "$@"
  nat_status
  neg=$(( $(nat_count "$a" "$b" negative_spans) - neg_before )); spans=$(( $(nat_count "$a" "$b" spans) - spans_before ))
  note "$b at -50ms: $a->$b $neg of $spans negative, health $(nat_pair "$a" "$b" health), $b->$a window negatives $(nat_pair "$b" "$a" window_negative_spans)"
  [ "$spans" -gt 0 ] && [ "$neg" -ge $((spans * 99 / 100)) ] || fail "expected ~all $a->$b spans negative with $b 50 ms behind"
  [ "$(nat_pair "$a" "$b" health)" = 0 ] || fail "$a->$b health should be 0"
  [ "$(nat_pair "$a" "$b" state)" = violated ] || fail "$a->$b state should be violated"
  [ "$(nat_pair "$b" "$a" window_negative_spans)" = 0 ] || fail "$b->$a should have no inversions"
}

# nat_exchange_check_skew A B B_CONTROL TRAFFIC...: the exchange form of nat_check_skew. B's clock
# 50 ms behind on B's own agent (B_CONTROL); every request A->B of TRAFFIC (nat_requests' arguments)
# turns negative, no reply does. The test defines `pair_view SRC DST FIELD` (the pair from whichever
# agent owns it) and `settle` (the wait for the exchange to carry the last halves).
nat_exchange_check_skew() {
  local a=$1 b=$2 control=$3 neg0 spans0 back0 neg spans back
  shift 3
  local want=$(($5 * $6))
  "$SKEWSCOPE" simulate "$b=-50ms" --control-socket "$control" >/dev/null
  neg0=$(pair_view "$a" "$b" negative_spans); spans0=$(pair_view "$a" "$b" spans); back0=$(pair_view "$b" "$a" negative_spans)
  nat_requests "$@"
  settle
  neg=$(($(pair_view "$a" "$b" negative_spans) - neg0)); spans=$(($(pair_view "$a" "$b" spans) - spans0))
  back=$(($(pair_view "$b" "$a" negative_spans) - back0))
  note "$b at -50ms: $a->$b $neg of $spans negative, health $(pair_view "$a" "$b" health); $b->$a new negatives $back"
  [ "$spans" -eq "$want" ] && [ "$neg" -ge $((want * 99 / 100)) ] || fail "expected ~all of $want $a->$b spans negative"
  [ "$(pair_view "$a" "$b" health)" = 0 ] || fail "$a->$b health should be 0"
  [ "$back" -eq 0 ] || fail "$b->$a should have no inversions"
}

# After lab_up 3: two point-to-point links of their own (the lab's bridge stays as it is),
# h1 <-> h2 <-> h3, with h2 a router that MASQUERADEs what leaves towards h3. Sets S, h3's address.
masquerade_router_up() {
  ip link add nat1 netns "$LAB_NAME-h1" type veth peer name nat1 netns "$LAB_NAME-h2"
  ip link add nat3 netns "$LAB_NAME-h2" type veth peer name nat3 netns "$LAB_NAME-h3"
  in_host 1 ip addr add 10.78.1.1/24 dev nat1
  in_host 2 ip addr add 10.78.1.2/24 dev nat1
  in_host 2 ip addr add 10.78.2.2/24 dev nat3
  in_host 3 ip addr add 10.78.2.3/24 dev nat3
  local h
  for h in 1 2; do in_host $h ip link set nat1 up; done
  for h in 2 3; do in_host $h ip link set nat3 up; done
  in_host 1 ip route add 10.78.2.0/24 via 10.78.1.2
  in_host 2 sysctl -qw net.ipv4.ip_forward=1  # the router's namespace only
  in_host 2 iptables-nft -t nat -A POSTROUTING -o nat3 -j MASQUERADE
  S=10.78.2.3
}
