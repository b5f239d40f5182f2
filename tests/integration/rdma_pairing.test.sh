#!/usr/bin/env bash
# RDMA RC SEND/RECV halves from uprobes in the verbs libraries, with the real libibverbs and the
# lab's hand-built provider (tests/tools/rdma/rdma_lab_provider.c; no RDMA device exists here).
# The agent (--rdma) knows nothing of the test program:
#  - the first program to use the provider file is connected before its functions are probed:
#    counted as untracked, never paired;
#  - from then on every SEND and WRITE_WITH_IMM pairs with its receive completion, both
#    directions, exact counts, zero negative spans with one clock; WRITEs and flushed receives
#    are counted;
#  - a server in its own mount namespace with a private copy of libibverbs (another inode) is
#    found, probed, paired, and its probes removed after it exits;
#  - b's clock 100 ms behind: every a->b span is negative, no b->a span (100 ms, not 5: on a
#    loaded machine a poll loop can be descheduled for milliseconds, and such a span stays positive).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rdma_lab.sh"
LIBIBVERBS=$(readlink -f "$(ldd "$PINGPONG" | awk '/libibverbs/ {print $3}')")
[ -f "$LIBIBVERBS" ] || fail "libibverbs not found for $PINGPONG"

# run PORT COUNT [server prefix...]: server on b, client on a; prints the client's JSON line
run() {
  local port=$1 count=$2; shift 2
  in_host 2 "$@" "$PINGPONG" --listen $B:"$port" --local $B --count "$count" --writes 5 --imm-every 10 \
    >"$WORK/server.$port" 2>&1 &
  local server=$!
  BACKGROUND+=("$server")
  for _ in $(seq 1 50); do grep -q listening "$WORK/server.$port" 2>/dev/null && break; sleep 0.1; done
  [ -n "${BEFORE_CLIENT:-}" ] && $BEFORE_CLIENT
  in_host 1 "$PINGPONG" --connect $B:"$port" --local $A --count "$count" --writes 5 --imm-every 10 \
    >"$WORK/client.$port" || { cat "$WORK/server.$port"; fail "client run $port failed"; }
  wait "$server" || { cat "$WORK/server.$port"; fail "server run $port failed"; }
  sleep 0.3  # the agent reads its ring every 20 ms
}

# Warm-up: the provider's functions are learnt from a program's first ibv_open_device, read from
# its /proc/PID/maps while it runs; a short program may exit first (then the next run teaches it).
# Whether a warm-up QP is tracked depends on whether its RTR came after the attach: either way it
# must never give a wrong span, so only the sign is checked here and later counts are deltas.
warm=0
for port in 7100 7104 7105 7106 7107; do
  run $port 200
  [ "$(rdma_field probes.provider)" -eq 3 ] && { warm=1; break; }
done
[ $warm = 1 ] || fail "provider functions not probed: $(status_json | jq -c .rdma.probes)"
[ "$(spans a b negative_spans)" -eq 0 ] && [ "$(spans b a negative_spans)" -eq 0 ] ||
  fail "negative span from a warm-up QP with one clock"
sleep 2.5  # warm-up halves of a QP tracked on one side only age out now, not in the checks below
ab0=$(spans a b spans) ba0=$(spans b a spans)
unpaired_sends0=$(rdma_field unpaired_sends) unpaired_recvs0=$(rdma_field unpaired_recvs)
note "warm-up: $ab0 + $ba0 spans, untracked connects $(rdma_field untracked_connects)"
writes0=$(rdma_field kernel.writes)
flushed0=$(rdma_field kernel.flushed)

# One clock, system library.
run 7101 1000
jq -c . "$WORK/client.7101"
[ "$(spans a b spans)" -eq $((ab0 + 1000)) ] || fail "a->b: expected $ab0 + 1000 spans, got $(spans a b spans)"
[ "$(spans b a spans)" -eq $((ba0 + 1000)) ] || fail "b->a: expected $ba0 + 1000 spans, got $(spans b a spans)"
[ "$(spans a b negative_spans)" -eq 0 ] || fail "negative a->b span with one clock"
[ "$(spans b a negative_spans)" -eq 0 ] || fail "negative b->a span with one clock"
[ $(($(rdma_field kernel.writes) - writes0)) -eq 5 ] || fail "RDMA WRITEs not counted: $(rdma_field kernel.writes)"
[ $(($(rdma_field kernel.flushed) - flushed0)) -eq 16 ] || fail "flushed receives: $(rdma_field kernel.flushed)"
note "one clock: 1000 + 1000 spans, min a->b $(spans a b min_span_seconds) s"

# A server in its own mount namespace, with a private copy of libibverbs bind-mounted over the
# system's: another inode, found by the agent's scan of /proc/PID/maps, probed via /proc/PID/root.
cp "$LIBIBVERBS" "$WORK/libibverbs-private.so"
private_ready() {
  [ "$(grep -c 'attached rdma_modify_qp' "$WORK/agent.log")" -ge 2 ]
}
wait_private() { wait_until 10 private_ready || fail "private libibverbs copy not probed"; }
BEFORE_CLIENT=wait_private run 7102 500 unshare -m --propagation private \
  sh -c "mount --bind '$WORK/libibverbs-private.so' '$LIBIBVERBS' && exec \"\$0\" \"\$@\""
BEFORE_CLIENT=
grep 'attached rdma_modify_qp' "$WORK/agent.log" | tail -1
[ "$(spans a b spans)" -eq $((ab0 + 1500)) ] || fail "private copy: expected $ab0 + 1500 a->b spans, got $(spans a b spans)"
[ "$(spans b a spans)" -eq $((ba0 + 1500)) ] || fail "private copy: expected $ba0 + 1500 b->a spans, got $(spans b a spans)"
[ "$(spans a b negative_spans)" -eq 0 ] && [ "$(spans b a negative_spans)" -eq 0 ] || fail "negative span with one clock"
detached_ok() { [ "$(rdma_field probes.detached)" -ge 3 ]; }
wait_until 5 detached_ok || fail "probes on the private copy not removed after its process exited"

# b's clock 100 ms behind: a->b spans all negative, b->a none.
"$SKEWSCOPE" simulate b=-100ms --control-socket "$CONTROL" >/dev/null
run 7103 300
[ "$(spans a b negative_spans)" -eq 300 ] || fail "expected 300 negative a->b spans, got $(spans a b negative_spans)"
[ "$(spans b a negative_spans)" -eq 0 ] || fail "b->a spans turned negative with b behind"
[ "$(spans a b health)" -eq 0 ] || fail "a->b health should be 0"

sleep 2.5  # unpaired halves age out after --send-max-age
status_json | jq -c '.rdma'
[ "$(rdma_field unpaired_sends)" -eq "$unpaired_sends0" ] && [ "$(rdma_field unpaired_recvs)" -eq "$unpaired_recvs0" ] ||
  fail "unpaired RDMA halves after the warm-up"
[ "$(rdma_field kernel.ringbuf_full)" -eq 0 ] || fail "RDMA records lost"
note "pairs $(rdma_field pairs), untracked connects $(rdma_field untracked_connects), writes $(rdma_field kernel.writes), flushed $(rdma_field kernel.flushed)"
echo "PASS"
