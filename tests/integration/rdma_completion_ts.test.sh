#!/usr/bin/env bash
# RDMA receive halves of extended CQs (ibv_create_cq_ex) carry the NIC's completion stamp, mapped
# to the host clock, in place of the probe's time. The real libibverbs with the lab's hand-built
# provider (tests/tools/rdma/rdma_lab_cq_ex.c: a simulated NIC clock at 156.25 MHz driven by
# CLOCK_MONOTONIC_RAW, and a wall clock); the test program polls with ibv_start_poll/next_poll and
# reads every field with ibv_wc_read_*. The agent (--rdma) knows nothing of it:
#  - raw stamps, the application sampling the NIC clock (ibv_query_rt_values_ex): exact counts
#    both ways, every receive half stamped by the NIC (counter), zero negative spans with one clock;
#  - raw stamps, no sample of the NIC clock: the stamp cannot be mapped; the halves keep the
#    probe's time and say so (fallback.no_clock), still exact and never negative;
#  - wall-clock stamps: mapped without samples (nic_wallclock);
#  - wall-clock stamps 37 s ahead (a NIC clock kept in TAI): refused (fallback.implausible), the
#    probe's time kept, no negative span.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rdma_lab.sh"

# run PORT COUNT PINGPONG-OPTIONS...: server on b, client on a (both with the options)
run() {
  local port=$1 count=$2; shift 2
  in_host 2 env ${SERVER_ENV:-} "$PINGPONG" --listen $B:"$port" --local $B --count "$count" "$@" \
    >"$WORK/server.$port" 2>&1 &
  local server=$!
  BACKGROUND+=("$server")
  for _ in $(seq 1 50); do grep -q listening "$WORK/server.$port" 2>/dev/null && break; sleep 0.1; done
  in_host 1 "$PINGPONG" --connect $B:"$port" --local $A --count "$count" "$@" \
    >"$WORK/client.$port" || { cat "$WORK/server.$port"; fail "client run $port failed"; }
  wait "$server" || { cat "$WORK/server.$port"; fail "server run $port failed"; }
  sleep 0.3  # the agent reads its ring every 20 ms
}

# Warm-up: the provider's functions (and its extended CQs') are learnt from a program's calls,
# read from its /proc/PID/maps while it runs; QPs connected before that are never paired.
warm=0
for port in 7200 7201 7202 7203 7204; do
  run $port 200 --cq-ex ts --rt-sample-ms 20
  [ "$(rdma_field probes.provider)" -eq 3 ] && [ "$(rdma_field probes.extended)" -ge 11 ] && { warm=1; break; }
done
[ $warm = 1 ] || fail "extended CQ functions not probed: $(status_json | jq -c .rdma.probes)"
# The wall-clock reader is another provider function, probed from the first CQ asking for it:
# until then such a CQ's stamps are unread (counted not_read), so it is warmed up too.
run 7205 50 --cq-ex wallclock
[ "$(rdma_field probes.extended)" -ge 12 ] || fail "wall-clock reader not probed: $(status_json | jq -c .rdma.probes)"
[ "$(spans a b negative_spans)" -eq 0 ] && [ "$(spans b a negative_spans)" -eq 0 ] ||
  fail "negative span from a warm-up QP with one clock"
sleep 2.5  # warm-up halves of a QP tracked on one side only age out now
# Completions caught while a CQ's functions were being probed are counted, not classified: from
# here on none may be.
unclassified0=$(rdma_field kernel.ex_unclassified)
status_json | jq -c '.rdma | {probes, extended_cqs, timestamps, kernel}'

snapshot() {
  ab0=$(spans a b spans) ba0=$(spans b a spans)
  nic0=$(rdma_field timestamps.nic_completion) wall0=$(rdma_field timestamps.nic_wallclock)
  probe0=$(rdma_field timestamps.probe) noclock0=$(rdma_field timestamps.fallback.no_clock)
  implausible0=$(rdma_field timestamps.fallback.implausible) notread0=$(rdma_field timestamps.fallback.not_read)
}
check_exact() {  # check_exact N WHAT
  [ "$(spans a b spans)" -eq $((ab0 + $1)) ] || fail "$2: expected $ab0 + $1 a->b spans, got $(spans a b spans)"
  [ "$(spans b a spans)" -eq $((ba0 + $1)) ] || fail "$2: expected $ba0 + $1 b->a spans, got $(spans b a spans)"
  [ "$(spans a b negative_spans)" -eq 0 ] ||
    fail "$2: $(spans a b negative_spans) negative a->b spans with one clock, min $(spans a b min_span_seconds) s"
  [ "$(spans b a negative_spans)" -eq 0 ] ||
    fail "$2: $(spans b a negative_spans) negative b->a spans with one clock, min $(spans b a min_span_seconds) s"
  [ $(($(rdma_field timestamps.probe) - probe0)) -eq $((2 * $1)) ] ||
    fail "$2: expected $((2 * $1)) send halves stamped by the probe, got $(($(rdma_field timestamps.probe) - probe0))"
}

# 1. Raw NIC stamps, the application sampling the NIC clock every 20 ms.
snapshot
run 7210 1000 --cq-ex ts --rt-sample-ms 20
jq -c . "$WORK/client.7210"
check_exact 1000 "raw stamps"
[ $(($(rdma_field timestamps.nic_completion) - nic0)) -eq 2000 ] ||
  fail "expected 2000 receive halves stamped by the NIC, got $(($(rdma_field timestamps.nic_completion) - nic0)): $(status_json | jq -c .rdma.timestamps)"
[ "$(rdma_field timestamp_source)" = "probe+nic" ] || fail "timestamp_source: $(rdma_field timestamp_source)"
note "raw stamps: 1000 + 1000 spans, min a->b $(spans a b min_span_seconds) s, $(status_json | jq -c .rdma.timestamps)"

# 2. Raw stamps, but the application never reads the NIC clock: nothing to map them with.
snapshot
run 7211 500 --cq-ex ts
check_exact 500 "unmapped stamps"
[ $(($(rdma_field timestamps.fallback.no_clock) - noclock0)) -eq 1000 ] ||
  fail "expected 1000 halves falling back for want of clock samples: $(status_json | jq -c .rdma.timestamps)"
[ "$(rdma_field timestamps.nic_completion)" -eq "$nic0" ] || fail "unmapped stamps counted as NIC stamps"
note "no clock samples: 500 + 500 spans on the probe's time, counted no_clock"

# 3. Wall-clock stamps: mapped with the host's realtime - monotonic, no samples needed.
snapshot
run 7212 500 --cq-ex wallclock
check_exact 500 "wall-clock stamps"
[ $(($(rdma_field timestamps.nic_wallclock) - wall0)) -eq 1000 ] ||
  fail "expected 1000 halves stamped by the NIC's wall clock: $(status_json | jq -c .rdma.timestamps)"

# 4. A NIC wall clock 37 s ahead of the host's (TAI, say) on b: b's stamps are refused.
snapshot
SERVER_ENV=SKEWSCOPE_LAB_NIC_WALLCLOCK_OFFSET_NS=37000000000 run 7213 300 --cq-ex wallclock
check_exact 300 "wall clock 37 s off"
[ $(($(rdma_field timestamps.fallback.implausible) - implausible0)) -eq 300 ] ||
  fail "expected 300 refused stamps: $(status_json | jq -c .rdma.timestamps)"
[ $(($(rdma_field timestamps.nic_wallclock) - wall0)) -eq 300 ] || fail "a's 300 stamps should still map"

# 5. An extended CQ with no stamp asked for: its receives are halves on the probe's time.
snapshot
run 7214 200 --cq-ex plain
[ "$(spans a b spans)" -eq $((ab0 + 200)) ] && [ "$(spans b a spans)" -eq $((ba0 + 200)) ] ||
  fail "plain extended CQ: expected 200 + 200 spans"
[ $(($(rdma_field timestamps.probe) - probe0)) -eq 800 ] || fail "plain extended CQ: every half on the probe's time"

sleep 2.5  # unpaired halves age out after --send-max-age
status_json | jq -c '.rdma'
[ "$(rdma_field kernel.ringbuf_full)" -eq 0 ] || fail "RDMA records lost"
[ "$(rdma_field kernel.ex_unclassified)" -eq "$unclassified0" ] || fail "completions not classified after the warm-up"
note "pairs $(rdma_field pairs), $(status_json | jq -c .rdma.timestamps)"
echo "PASS"
