#!/usr/bin/env bash
# Three lab hosts, one agent per host (--only-domains, its own namespace only) joined by a test
# Kafka, and a fourth agent over all three namespaces without the exchange as the reference.
# Real traffic both ways between every two hosts:
#  - one clock: every cross-host pair is reported by one of the three agents, with the
#    reference's span count, and no negative span anywhere;
#  - h3's clock 5 ms behind (simulated on h3's agent and on the reference): the same counts and
#    negative ratios as the reference.
# Tolerance: span counts within 1 % (or 3 spans) of the reference. Each agent captures the same
# kernel events through its own ring buffer; a difference can only come from a half lost on one
# side (counted) or a span settled just before one of the two views was read. Ratios (over the
# window) within 0.02: the exchange places spans on its window by the receiver's wall clock, the
# reference by its monotonic clock, so a bucket edge may fall differently. The exchange's pairs are
# `unknown` during their first window (their partitions were just assigned); the state is printed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 3
start_kafka 6
GROUP=$RUN_ID
# The default 30 s window holds both phases: the negative ratios compared are over live windows.
common=(--send-max-age 2s --only-domains)
for i in 1 2 3; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" "${common[@]}" \
    --exchange "kafka:$BOOTSTRAP" --exchange-group "$GROUP" --exchange-key-file "$EXCHANGE_KEY"
done
start_named_agent ref --host-name ref --domain h1=netns:"$(netns_path 1)" --domain h2=netns:"$(netns_path 2)" \
  --domain h3=netns:"$(netns_path 3)" "${common[@]}"

# The group has formed when the three agents own the 6 partitions between them and each one
# has some (cooperative-sticky spreads them), and every agent reaches Kafka.
stable() { exchange_settled 6 x1 x2 x3 && every_agent_owns x1 x2 x3; }
wait_until 60 stable || fail "the exchange group did not settle (owned: $(owned_total x1 x2 x3))"
for a in x1 x2 x3; do note "$a owns partitions $(agent_status $a | jq -c '.exchange.partitions')"; done

addr() { echo 10.77.0.$1; }
traffic() {  # traffic COUNT: h1->h2, h2->h3, h3->h1 request/response (every pair, both directions)
  local pids=() i
  for i in 1 2 3; do in_host $i "$TRAFFIC" echo-server --listen "$(addr $i):7100" --duration 60 >/dev/null & BACKGROUND+=($!); done
  sleep 0.3
  in_host 1 "$TRAFFIC" ping --connect "$(addr 2):7100" --size 64 --count "$1" >/dev/null & pids+=($!)
  in_host 2 "$TRAFFIC" ping --connect "$(addr 3):7100" --size 200 --count "$1" >/dev/null & pids+=($!)
  in_host 3 "$TRAFFIC" ping --connect "$(addr 1):7100" --size 32 --count "$1" >/dev/null & pids+=($!)
  # A third-party program too: socat streams bytes h1 -> h2 (the agents know nothing of it).
  in_host 2 socat -u TCP-LISTEN:7101,bind="$(addr 2)",reuseaddr STDOUT >/dev/null & pids+=($!)
  sleep 0.3
  head -c 300000 /dev/urandom | in_host 1 socat -u STDIN TCP:"$(addr 2)":7101 & pids+=($!)
  for p in "${pids[@]}"; do wait "$p"; done
  sleep 2.5  # linger, fetch, and the last halves' reorder allowance
}

PAIRS="h1:h2 h2:h1 h2:h3 h3:h2 h3:h1 h1:h3"
# exchange_view SRC DST FIELD: the field from whichever exchange agent reports the pair
exchange_view() {
  local a v found=none
  for a in x1 x2 x3; do
    v=$(pair_from $a "$1" "$2" "$3")
    [ "$v" != none ] && found=$v
  done
  echo "$found"
}
within() {  # within A B: |A-B| <= max(3, 1% of B)
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; t = b / 100; if (t < 3) t = 3; exit !(d <= t) }'
}
compare() {  # compare PHASE: every pair against the reference
  local p s d
  for p in $PAIRS; do
    s=${p%:*}; d=${p#*:}
    local xs xn rs rn xr rr
    xs=$(exchange_view $s $d spans); xn=$(exchange_view $s $d negative_spans)
    rs=$(pair_from ref $s $d spans); rn=$(pair_from ref $s $d negative_spans)
    xr=$(exchange_view $s $d negative_span_ratio); rr=$(pair_from ref $s $d negative_span_ratio)
    note "$1 $s->$d: exchange spans $xs negative $xn ratio $xr state $(exchange_view $s $d state) | reference spans $rs negative $rn ratio $rr state $(pair_from ref $s $d state)"
    [ "$xs" != none ] || fail "$s->$d reported by no exchange agent"
    within "$xs" "$rs" || fail "$s->$d: exchange $xs spans, reference $rs"
    within "$xn" "$rn" || fail "$s->$d: exchange $xn negative spans, reference $rn"
    awk -v a="$xr" -v b="$rr" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.02) }' ||
      fail "$s->$d: negative ratio $xr, reference $rr"
  done
}

# Phase 1: one clock.
traffic 1500
compare "0 skew"
for p in $PAIRS; do
  [ "$(exchange_view ${p%:*} ${p#*:} negative_spans)" -eq 0 ] || fail "negative span at 0 skew on $p"
done
for a in x1 x2 x3; do
  note "$a exchange: $(agent_status $a | jq -c '.exchange | {halves, dropped, records_rejected, consumer_lag}')"
  [ "$(agent_status $a | jq -r '[.exchange.dropped[]] | add')" -eq 0 ] || fail "$a dropped halves on a quiet run"
done

# Phase 2: h3's clock 5 ms behind, on the agent that captures h3 and on the reference.
"$SKEWSCOPE" simulate h3=-5ms --control-socket "$WORK/x3.sock" >/dev/null
"$SKEWSCOPE" simulate h3=-5ms --control-socket "$WORK/ref.sock" >/dev/null
traffic 1000
compare "h3 -5ms"
[ "$(exchange_view h2 h3 negative_spans)" -ge 950 ] || fail "h2->h3 should be inverted by h3's -5 ms"
[ "$(exchange_view h3 h1 negative_spans)" -eq 0 ] || fail "h3->h1 should not be inverted"
echo "exchange_three_hosts: 1 passed, 0 failed"
