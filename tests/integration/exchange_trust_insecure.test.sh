#!/usr/bin/env bash
# The exchange without keys (docs/security.md): the agent refuses --exchange without a key or
# --exchange-insecure, a key file others may read, and both options at once (exit 2, before
# anything loads). With --exchange-insecure it runs, says so in its log, its status and /metrics,
# and pairs as before; and it shows what the keys prevent: the forged unsigned records of
# exchange_trust (node1's sends 1 s after node2's receives) are taken and turn the pair violated.
# The domain rules hold even so: a third host speaking for h2 is refused and counted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

FORGE=$BUILD/tests/tools/exchange_forge
refused() {  # refused WHAT EXPECTED-TEXT ARGS...: the agent exits 2 at once, saying EXPECTED-TEXT
  local what=$1 text=$2; shift 2
  set +e; out=$(timeout 20 "$SKEWSCOPE" agent --listen 127.0.0.1:0 --exchange kafka:127.0.0.1:9 "$@" 2>&1); rc=$?; set -e
  [ $rc -eq 2 ] && grep -q -- "$text" <<<"$out" || fail "$what: exit $rc: $out"
  note "refused $what: $(head -1 <<<"$out")"
}
refused "no key" "--exchange-key-file"
(umask 022 && openssl rand -hex 32 >"$WORK/open.key")
refused "a key others may read" "chmod 600" --exchange-key-file "$WORK/open.key"
refused "key and insecure" "exclude each other" --exchange-key-file "$EXCHANGE_KEY" --exchange-insecure
printf 'not a key\n' >"$WORK/bad.key"; chmod 600 "$WORK/bad.key"
refused "a malformed key" "not hex" --exchange-key-file "$WORK/bad.key"
refused "no domain per agent" "exchange-domains-per-agent" --exchange-key-file "$EXCHANGE_KEY" --exchange-domains-per-agent 0

lab_up 2
start_kafka 2
for i in 1 2; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" --only-domains --window 5s \
    --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-insecure
done
grep -q "WARNING: the exchange is INSECURE" "$WORK/agent-x1.log" || fail "x1 did not warn about insecure mode"
wait_exchange_settled 2 x1 x2
for a in x1 x2; do
  metrics=$(curl -sf "${AGENT_URLS[$a]}/metrics")
  grep -q '^skewscope_exchange_insecure 1$' <<<"$metrics" || fail "$a: /metrics does not flag insecure"
  [ "$(agent_status $a | jq -r .exchange.trust.insecure)" = true ] || fail "$a: status does not flag insecure"
done

in_host 2 "$TRAFFIC" echo-server --listen 10.77.0.2:7500 --duration 60 >/dev/null & BACKGROUND+=($!)
sleep 0.3
in_host 1 "$TRAFFIC" ping --connect 10.77.0.2:7500 --size 64 --rate 200 --duration 20 >/dev/null & BACKGROUND+=($!)
wait_until 15 healthy_owner h1 h2 x1 x2 || fail "insecure exchange: the pair h1 -> h2 is not healthy"
owner=$OWNER
note "owner $owner pairs h1 -> h2 without keys: $(pair_from $owner h1 h2 spans) spans"

KEY=10.77.0.1\|10.77.0.2
produce() { kcat -b "$BOOTSTRAP" -P -t "$TOPIC" -k "$KEY" -X partitioner=murmur2_random "$1" || fail "kcat $1"; }
"$FORGE" --out "$WORK/claim.rec" --host node3 --domain h2 --kind recv --src 10.77.0.1:45999 --dst 10.77.0.2:7999 \
  --count 200 || fail "exchange_forge"
produce "$WORK/claim.rec"
"$FORGE" --out "$WORK/forged.send" --host node1 --domain h1 --kind send --src 10.77.0.1:45999 \
  --dst 10.77.0.2:7999 --count 200 --offset-ms 1000 || fail "exchange_forge"
"$FORGE" --out "$WORK/forged.recv" --host node2 --domain h2 --kind recv --src 10.77.0.1:45999 \
  --dst 10.77.0.2:7999 --count 200 || fail "exchange_forge"
produce "$WORK/forged.send"; produce "$WORK/forged.recv"
violated() { [ "$(pair_from $owner h1 h2 negative_spans)" -ge 200 ]; }
wait_until 10 violated || fail "the forged records were not taken in insecure mode: $(pair_from $owner h1 h2 negative_spans) negative spans"
note "insecure: forged records taken, h1 -> h2 health $(pair_from $owner h1 h2 health), $(pair_from $owner h1 h2 negative_spans) negative spans"
claimed() { local s=0 a; for a in x1 x2; do s=$((s + $(agent_status $a | jq -r '.exchange.records_rejected.domain_claimed'))); done; [ $s -ge 1 ]; }
wait_until 10 claimed || fail "node3 speaking for h2 was not refused in insecure mode"
echo "exchange_trust_insecure: 1 passed, 0 failed"
