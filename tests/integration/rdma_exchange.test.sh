#!/usr/bin/env bash
# RDMA RC halves across hosts: two lab hosts, one agent per host (--rdma --exchange, its own
# namespace only) joined by a test Kafka; the real libibverbs with the lab's hand-built provider
# carries SEND messages between the hosts (no RDMA device exists here).
#  - each agent learns its QPs' local GID from the port's GID table as the application sees it
#    (/proc/PID/root/sys/class/infiniband/DEV/ports/P/gids/I). The hand-built provider has no
#    kernel device, so each test program runs in a mount namespace whose /sys/class holds a GID
#    table for lab0 with its host's IPv4-mapped address, as a RoCEv2 port's table would;
#  - the peer is on the other host, so no half is paired locally: every half is shipped, keyed by
#    the two GIDs' addresses, and the owner of that key pairs them: exact counts both ways, zero
#    negative spans with one clock;
#  - b's agent simulates its clock 100 ms behind: every a->b span negative, no b->a one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

PINGPONG=$BUILD/tests/tools/rdma_verbs_pingpong
[ -x "$PINGPONG" ] || fail "build rdma_verbs_pingpong first (needs libibverbs-dev)"

lab_up 2
A=10.77.0.1
B=10.77.0.2
start_kafka 2
names=(_ a b)
for i in 1 2; do
  start_named_agent x$i --host-name node$i --domain "${names[$i]}"=netns:"$(netns_path $i)" --only-domains \
    --send-max-age 2s --rdma --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-key-file "$EXCHANGE_KEY"
done
wait_exchange_settled 2 x1 x2

# field AGENT PATH: from that agent's status JSON
field() { agent_status "$1" | jq -r "$2 // 0"; }
# spans SRC DST FIELD: an rdma pair's field, summed over the two agents (only the owner reports it)
spans() {
  local a total=0 n
  for a in x1 x2; do
    n=$(agent_status $a | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
      '[.pairs[]? | select(.src==$s and .dst==$d and .transport=="rdma")][0][$f] // 0')
    total=$((total + n))
  done
  echo $total
}

# in_gid_ns HOST ADDR CMD...: CMD on HOST in a mount namespace whose sysfs has lab0's GID table.
in_gid_ns() {
  local host=$1 addr=$2; shift 2
  in_host "$host" unshare -m --propagation private sh -c '
    set -e
    mount -t tmpfs lab-gid-table /sys/class
    mkdir -p /sys/class/infiniband/lab0/ports/1/gids
    printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n" $(echo "$0" | tr . " ") \
      >/sys/class/infiniband/lab0/ports/1/gids/0
    exec "$@"' "$addr" "$@"
}

# run PORT COUNT: server on b, client on a
run() {
  local port=$1 count=$2
  in_gid_ns 2 $B "$PINGPONG" --listen $B:"$port" --local $B --count "$count" --writes 5 --imm-every 10 \
    >"$WORK/server.$port" 2>&1 &
  local server=$!
  BACKGROUND+=("$server")
  for _ in $(seq 1 50); do grep -q listening "$WORK/server.$port" 2>/dev/null && break; sleep 0.1; done
  in_gid_ns 1 $A "$PINGPONG" --connect $B:"$port" --local $A --count "$count" --writes 5 --imm-every 10 \
    >"$WORK/client.$port" || { cat "$WORK/server.$port"; fail "client run $port failed"; }
  wait "$server" || { cat "$WORK/server.$port"; fail "server run $port failed"; }
  sleep 2.5  # linger, fetch, and the owner's pairing
}

# Warm-up: each agent learns the provider's functions from a program's first ibv_open_device.
warm=0
for port in 7200 7204 7205 7206 7207; do
  run $port 200
  [ "$(field x1 .rdma.probes.provider)" -eq 3 ] && [ "$(field x2 .rdma.probes.provider)" -eq 3 ] && { warm=1; break; }
done
[ $warm = 1 ] || fail "provider functions not probed: $(agent_status x1 | jq -c .rdma.probes) $(agent_status x2 | jq -c .rdma.probes)"
[ "$(spans a b negative_spans)" -eq 0 ] && [ "$(spans b a negative_spans)" -eq 0 ] ||
  fail "negative span from a warm-up QP with one clock"
ab0=$(spans a b spans) ba0=$(spans b a spans)
note "warm-up: $ab0 + $ba0 spans; local GIDs x1 $(agent_status x1 | jq -c .rdma.local_gids), x2 $(agent_status x2 | jq -c .rdma.local_gids)"

# One clock.
run 7201 1000
for a in x1 x2; do note "$a rdma.exchange $(agent_status $a | jq -c .rdma.exchange)"; done
[ "$(spans a b spans)" -eq $((ab0 + 1000)) ] || fail "a->b: expected $ab0 + 1000 spans, got $(spans a b spans)"
[ "$(spans b a spans)" -eq $((ba0 + 1000)) ] || fail "b->a: expected $ba0 + 1000 spans, got $(spans b a spans)"
[ "$(spans a b negative_spans)" -eq 0 ] && [ "$(spans b a negative_spans)" -eq 0 ] || fail "negative span with one clock"
for a in x1 x2; do
  [ "$(field $a .rdma.pairs)" -eq 0 ] || fail "$a paired RDMA halves locally: its peer is on the other host"
  [ "$(field $a .rdma.exchange.no_local_gid)" -eq 0 ] || fail "$a had halves with no local GID"
  [ "$(field $a .rdma.exchange.shipped)" -ge 2000 ] || fail "$a shipped $(field $a .rdma.exchange.shipped) halves"
done
owner_pairs=$(( $(field x1 .rdma.exchange.owner.pairs) + $(field x2 .rdma.exchange.owner.pairs) ))
[ "$owner_pairs" -eq "$(( $(spans a b spans) + $(spans b a spans) ))" ] || fail "owner pairs $owner_pairs differ from the spans"
min_ab() { for a in x1 x2; do agent_status $a | jq -r '.pairs[]? | select(.src=="a" and .dst=="b" and .transport=="rdma") | .min_span_seconds'; done; }
note "one clock: 1000 + 1000 spans through the exchange, min a->b $(min_ab) s"

# b's clock 100 ms behind, on b's agent only: the wall-clock stamps it ships carry the error.
"$SKEWSCOPE" simulate b=-100ms --control-socket "$WORK/x2.sock" >/dev/null
neg_ab0=$(spans a b negative_spans)
run 7203 300
[ "$(spans a b negative_spans)" -eq $((neg_ab0 + 300)) ] || { for a in x1 x2; do agent_status $a | jq -c '{rdma, pairs: [.pairs[]? | select(.transport=="rdma")], clocks: .domain_clocks}'; done; fail "expected 300 negative a->b spans, got $(($(spans a b negative_spans) - neg_ab0))"; }
[ "$(spans b a negative_spans)" -eq 0 ] || fail "b->a spans turned negative with b behind"
[ "$(spans a b spans)" -eq $((ab0 + 1300)) ] && [ "$(spans b a spans)" -eq $((ba0 + 1300)) ] || fail "skewed run: counts"

for a in x1 x2; do
  [ "$(field $a '[.exchange.records_rejected[]] | add')" -eq 0 ] || fail "$a rejected records: $(agent_status $a | jq -c .exchange.records_rejected)"
  [ "$(field $a .rdma.kernel.ringbuf_full)" -eq 0 ] || fail "$a lost RDMA records"
done
note "owner: $(agent_status x1 | jq -c .rdma.exchange.owner) / $(agent_status x2 | jq -c .rdma.exchange.owner)"
for a in x1 x2; do note "$a pairing delay (s, the skewed run's include its 100 ms): $(agent_status $a | jq -c .exchange.pairing_delay_seconds)"; done
echo "PASS"
