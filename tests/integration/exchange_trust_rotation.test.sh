#!/usr/bin/env bash
# Key rotation without a restart and without lost halves (docs/security.md, "Rotating the key"):
# each agent reads a key directory (name order: the first key signs, every key is accepted),
# re-read every 2 s. Under steady traffic h1 -> h2: key B is added beside A (A still signs), then
# renamed to sort first (B signs; A still accepted while records signed with it are in flight),
# then A is removed. Every ping must pair, no record be refused, and each agent end with B alone.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

new_exchange_key "$WORK/a.key"
new_exchange_key "$WORK/b.key"
for i in 1 2; do
  mkdir -m 700 "$WORK/keys$i"
  cp -p "$WORK/a.key" "$WORK/keys$i/20-a.key"
done
key_ids() { agent_status "$1" | jq -c .exchange.trust.key_ids; }

lab_up 2
start_kafka 2
for i in 1 2; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" --only-domains --window 5s \
    --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-key-file "$WORK/keys$i"
done
wait_exchange_settled 2 x1 x2
key_a=$(key_ids x1)
note "keys at start: $key_a"

spans() { local s=0 a v; for a in x1 x2; do v=$(pair_from $a h1 h2 spans); [ "$v" != none ] && s=$((s + v)); done; echo $s; }
in_host 2 "$TRAFFIC" echo-server --listen 10.77.0.2:7600 --duration 60 >/dev/null & BACKGROUND+=($!)
sleep 0.3
COUNT=2400  # 12 s at 200/s
in_host 1 "$TRAFFIC" ping --connect 10.77.0.2:7600 --size 64 --rate 200 --count $COUNT >/dev/null & ping=$!
BACKGROUND+=($ping)
sleep 2
for i in 1 2; do cp -p "$WORK/b.key" "$WORK/keys$i/30-b.key"; done
both() { [ "$(agent_status "$1" | jq '.exchange.trust.key_ids | length')" = 2 ]; }
wait_until 5 both x1 && wait_until 5 both x2 || fail "key B not picked up: $(key_ids x1) $(key_ids x2)"
note "B added: x1 $(key_ids x1), x2 $(key_ids x2)"
sleep 1
for i in 1 2; do mv "$WORK/keys$i/30-b.key" "$WORK/keys$i/10-b.key"; done
b_signs() { [ "$(agent_status "$1" | jq -c '.exchange.trust.key_ids[0]')" != "$(jq -c '.[0]' <<<"$key_a")" ]; }
wait_until 5 b_signs x1 && wait_until 5 b_signs x2 || fail "B does not sign: $(key_ids x1) $(key_ids x2)"
note "B signs: x1 $(key_ids x1), x2 $(key_ids x2)"
sleep 2
for i in 1 2; do rm "$WORK/keys$i/20-a.key"; done
b_only() { [ "$(agent_status "$1" | jq '.exchange.trust.key_ids | length')" = 1 ]; }
wait_until 5 b_only x1 && wait_until 5 b_only x2 || fail "A not dropped: $(key_ids x1) $(key_ids x2)"
note "A removed: x1 $(key_ids x1), x2 $(key_ids x2)"
wait $ping || fail "ping failed"
all_paired() { [ "$(spans)" -ge $COUNT ]; }
wait_until 5 all_paired || true
refused=$(for a in x1 x2; do agent_status $a | jq '[.exchange.records_rejected[]] | add'; done | paste -sd+ | bc)
dropped=$(for a in x1 x2; do agent_status $a | jq '[.exchange.dropped[]] | add'; done | paste -sd+ | bc)
note "h1 -> h2: $(spans) of $COUNT pings paired; records refused $refused, halves dropped $dropped"
[ "$refused" -eq 0 ] || fail "$refused records refused during the rotation"
[ "$(spans)" -eq $COUNT ] || fail "$(spans) of $COUNT pings paired across the rotation"
grep -q "exchange keys changed" "$WORK/agent-x1.log" || fail "x1 did not log the key change"
echo "exchange_trust_rotation: 1 passed, 0 failed"
