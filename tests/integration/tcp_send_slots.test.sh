#!/usr/bin/env bash
# The sock_tp capture's send table (bpf/tcp_sock_tp.bpf.h), shrunk to 2 slots with
# SKEWSCOPE_SEND_SLOTS so that six sending threads at once cannot all have one: the others keep
# their sends' starts in task-local storage. Every send still pairs exactly once, with no negative
# span; the sends that took the slower path are counted; a thread's slot is freed when it exits
# (read from the table itself), and a blocking send that started without one keeps its start
# when a slot frees while it waits. A bad value of the variable stops the agent with a usage
# error.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tcp_shapes_lib.sh"

lab_up 2
B=10.77.0.2
SOURCES=6
EACH=2000

set +e
SKEWSCOPE_SEND_SLOTS=3 "$SKEWSCOPE" agent --listen 127.0.0.1:0 --domain a=netns:"$(netns_path 1)" \
  >"$WORK/bad.log" 2>&1
rc=$?
set -e
note "SKEWSCOPE_SEND_SLOTS=3: exit $rc, $(cat "$WORK/bad.log")"
[ $rc = 2 ] && grep -q "SKEWSCOPE_SEND_SLOTS='3': not a power of two" "$WORK/bad.log" ||
  fail "a send table size that is not a power of two should stop the agent with a usage error"

SKEWSCOPE_SEND_SLOTS=2 start_variant_agent sock_tp --domain a=netns:"$(netns_path 1)" \
  --domain b=netns:"$(netns_path 2)" --only-domains --window 60s

# slot_owners: the thread ids that own a slot in this agent's send table now.
slot_owners() {
  local ids map
  ids=$(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u | jq -s -c .)
  map=$(bpftool map show --json | jq -r --argjson ids "$ids" \
    '.[] | select((.id as $i | any($ids[]; . == $i)) and .name == "send_slots") | .id' | head -1)
  [ -n "$map" ] || fail "no send_slots map among the agent's maps"
  bpftool map dump id "$map" --json | jq -r '.[] | (.formatted.value.owner // empty) | select(. != 0)'
}

sources=()
for i in $(seq 1 $SOURCES); do
  in_host 2 "$TRAFFIC" tcp-sink --listen $B:$((7600 + i)) --duration 60 >"$WORK/sink$i.out" &
done
sleep 0.5
for i in $(seq 1 $SOURCES); do
  # Not through in_host: a function in the background is a subshell, whose pid is not the
  # source's. `ip netns exec` execs the source in place.
  ip netns exec "$LAB_NAME-h1" "$TRAFFIC" tcp-source --connect $B:$((7600 + i)) --write-sizes 64 --rate 1000 \
    --count $EACH >"$WORK/source$i.out" &
  sources+=($!)
done
sleep 1
owners_during=$(slot_owners | tr '\n' ' ')
for pid in "${sources[@]}"; do wait "$pid"; done
note "sources ${sources[*]}; slot owners while they sent: $owners_during"
owned=0
for pid in "${sources[@]}"; do grep -qw "$pid" <<<"$owners_during" && owned=$((owned + 1)); done
[ "$owned" -ge 1 ] || fail "no source's thread held a slot of the 2 while sending"

expect_spans sock_tp "$SOURCES threads sending at once" a b $((SOURCES * EACH))
without=$(status_json | jq -r '.capture.sends_without_slot')
note "sends kept in task-local storage: $without"
# Four sources at least find both slots taken; a slot freed during the run (any TCP sender of the
# kernel that exits) may be claimed by one of them, so half their sends is the bound asserted.
[ "$without" -ge $(((SOURCES - 2) * EACH / 2)) ] ||
  fail "$((SOURCES - 2)) threads' sends should have gone without a slot, counted: $without"
[ "$(status_json | jq -r '.capture.lost')" = 0 ] || fail "halves lost"

owners_after=$(slot_owners | tr '\n' ' ')
note "slot owners after the sources exited: ${owners_after:-none}"
for pid in "${sources[@]}"; do
  ! grep -qw "$pid" <<<"$owners_after" || fail "source $pid exited but still owns a send slot"
done
agent_stop

# One slot, held by a b -> a stream. A blocking 8 MiB send a -> b finds it taken and keeps its
# start in task-local storage; the holder exits while that send still waits for buffer space. The
# send's later firings (after each wait) must keep to the start they made, not take the freed
# slot for a new send: exactly one span, nothing counted cut short.
SKEWSCOPE_SEND_SLOTS=1 start_variant_agent sock_tp --domain a=netns:"$(netns_path 1)" \
  --domain b=netns:"$(netns_path 2)" --only-domains --window 60s
A=10.77.0.1
in_host 1 "$TRAFFIC" tcp-sink --listen $A:7700 --duration 60 >"$WORK/holder_sink.out" &
holder_sink=$!
sleep 0.3
ip netns exec "$LAB_NAME-h2" "$TRAFFIC" tcp-source --connect $A:7700 --write-sizes 64 --rate 200 --duration 30 \
  >/dev/null &
holder=$!
wait_until 5 grep -qw "$holder" <(slot_owners) ||
  fail "precondition: the b -> a stream ($holder) should hold the only slot, held by: $(slot_owners | tr '\n' ' ')"
in_host 2 "$TRAFFIC" slow-sink --listen $B:7701 --size 32768 --rcvbuf 65536 --delay-ms 15 --duration 60 \
  >"$WORK/slow_sink.out" &
slow_sink=$!
in_host 1 "$TRAFFIC" blocking-source --connect $B:7701 --bytes 8388608 --sndbuf 65536 --count 1 \
  >"$WORK/blocking.out" &
blocking=$!
sleep 1.5
kill "$holder"
wait "$holder" 2>/dev/null || true
holder_gone() { ! grep -qw "$holder" <(slot_owners); }
wait_until 5 holder_gone || fail "the holder exited, but still owns the slot"
wait "$blocking"
wait "$slow_sink"
wait "$holder_sink" || true
note "blocking send: $(cat "$WORK/blocking.out")"
grep -q "^blocking-source: 1 writes, 1 whole, blocked" "$WORK/blocking.out" || fail "the 8 MiB write did not complete whole"
read -r shortest < <(sed -n 's/.*blocked \([0-9.e-]*\) s.*/\1/p' "$WORK/blocking.out")
approx_ge "$shortest" 2.0 || fail "the write blocked only $shortest s: the shape needs it to outlive the holder"
expect_spans sock_tp "a blocking send that outlived the slot's holder" a b 1
[ "$(status_json | jq -r '.capture.sends_cut_short')" = 0 ] || fail "the blocking send was counted as cut short"
agent_stop
echo "tcp_send_slots: 1 passed, 0 failed"
