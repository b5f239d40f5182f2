#!/usr/bin/env bash
# Only agents may speak on the exchange (docs/security.md). Two lab hosts, one agent each, signing
# with one cluster key; a real pair h1 -> h2 under steady traffic. Then, on the real pair's own
# partition, with kcat: forged unsigned records (that would turn the pair violated: see
# exchange_trust_insecure), the same signed then altered (bad signature), signed with a key the
# agents do not hold (unknown signer), a real record produced again (replayed), a signed record over
# 1 MiB (oversized), records signed with the cluster key by a third "agent" that speak for h1 and
# h2 (domain claimed), and 4 x 256 domain names from it (flood). Each must be counted by its
# reason, and the real pair's verdict, its spans and the remote-domain table must not change.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

FORGE=$BUILD/tests/tools/exchange_forge
lab_up 2
start_kafka 2
for i in 1 2; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" --only-domains --window 5s \
    --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-key-file "$EXCHANGE_KEY"
done
grep -q "exchange records signed with key" "$WORK/agent-x1.log" || fail "x1 did not log its signing key"
wait_exchange_settled 2 x1 x2

in_host 2 "$TRAFFIC" echo-server --listen 10.77.0.2:7500 --duration 60 >/dev/null & BACKGROUND+=($!)
sleep 0.3
in_host 1 "$TRAFFIC" ping --connect 10.77.0.2:7500 --size 64 --rate 200 --duration 25 >/dev/null & BACKGROUND+=($!)
wait_until 15 healthy_owner h1 h2 x1 x2 || fail "the real pair h1 -> h2 is not healthy: x1 $(pair_from x1 h1 h2 health), x2 $(pair_from x2 h1 h2 health)"
owner=$OWNER
verdict() { agent_status $owner | jq -c '[.pairs[] | select(.src=="h1" and .dst=="h2" and .transport=="tcp")][0] | [.health, .state, .negative_spans]'; }
before=$(verdict)
note "owner of h1 -> h2: $owner, verdict [health, state, negative spans] $before"

KEY=10.77.0.1\|10.77.0.2
# A real record of the pair's partition (the last one there, before any forgery), to replay below.
part=$(kcat -b "$BOOTSTRAP" -C -t "$TOPIC" -o -1 -e -q -f '%p %k\n' 2>/dev/null | awk -v k="$KEY" '$2 == k { print $1; exit }')
[ -n "$part" ] || fail "no real record of $KEY on the topic"
kcat -b "$BOOTSTRAP" -C -t "$TOPIC" -p "$part" -o -1 -c 1 -e -q -f '%s' >"$WORK/real.rec" 2>/dev/null
[ "$(head -c 3 "$WORK/real.rec" | od -An -tx1 | tr -d ' ')" = 534b02 ] || fail "the captured record is not a signed one"
# The agent's own record, checked apart from its code: the layout and MAC of docs/security.md.
python3 - "$WORK/real.rec" "$EXCHANGE_KEY" "$KEY" <<'PY' || fail "the agent's record does not verify as docs/security.md says"
import hashlib, hmac, struct, sys
rec = open(sys.argv[1], "rb").read()
key = bytes.fromhex(open(sys.argv[2]).read().strip())
kafka_key = sys.argv[3].encode()
assert rec[:4] == b"SK\x02\x00", rec[:4]
assert rec[4:12] == hashlib.sha256(b"skewscope exchange key id" + key).digest()[:8], "key id"
signer_len = rec[36]
(n,) = struct.unpack_from("<I", rec, 37 + signer_len)
body = 41 + signer_len + n
assert len(rec) == body + 32, "length"
assert rec[37:37 + signer_len] in (b"node1", b"node2"), rec[37:37 + signer_len]
assert rec[41 + signer_len:44 + signer_len] == b"SK\x01", "payload is not a version-1 record"
mac = hmac.new(key, b"skewscope.v2\0" + struct.pack("<H", len(kafka_key)) + kafka_key + rec[:body], hashlib.sha256)
assert hmac.compare_digest(mac.digest(), rec[body:]), "MAC"
PY
produce() {  # produce FILE [KCAT-ARGS...]: onto the real pair's partition (the agents' partitioner)
  local file=$1; shift
  kcat -b "$BOOTSTRAP" -P -t "$TOPIC" -k "$KEY" -X partitioner=murmur2_random -X message.max.bytes=4000000 "$@" \
    "$file" || fail "kcat could not produce $file"
}
# The forgery that turns a pair violated: node1's sends 1 s after node2's receives of the same bytes.
forge_pair() {  # forge_pair NAME FORGE-ARGS...: NAME.send and NAME.recv
  local name=$1; shift
  "$FORGE" --out "$WORK/$name.send" --host node1 --domain h1 --kind send --src 10.77.0.1:45999 \
    --dst 10.77.0.2:7999 --count 200 --offset-ms 1000 "$@" || fail "exchange_forge"
  "$FORGE" --out "$WORK/$name.recv" --host node2 --domain h2 --kind recv --src 10.77.0.1:45999 \
    --dst 10.77.0.2:7999 --count 200 "$@" || fail "exchange_forge"
}
forge_pair unsigned
produce "$WORK/unsigned.send"; produce "$WORK/unsigned.recv"

forge_pair altered --key-file "$EXCHANGE_KEY" --sequence 900000001
for f in altered.send altered.recv; do  # one byte of the batch changed (a half's time)
  size=$(stat -c %s "$WORK/$f")
  printf '\x7f' | dd of="$WORK/$f" bs=1 seek=$((size - 40)) conv=notrunc status=none
  produce "$WORK/$f"
done

new_exchange_key "$WORK/other.key"
forge_pair stranger --key-file "$WORK/other.key"
produce "$WORK/stranger.send"; produce "$WORK/stranger.recv"

produce "$WORK/real.rec" -p "$part"  # a real record, as it was (captured before the forgeries)

"$FORGE" --out "$WORK/big.rec" --host node1 --domain h1 --kind send --src 10.77.0.1:45999 --dst 10.77.0.2:7999 \
  --pad 1100000 --key-file "$EXCHANGE_KEY" || fail "exchange_forge"
produce "$WORK/big.rec"

# An agent holding the cluster key, speaking for the others' domains, then flooding names.
for f in claimer.send claimer.recv; do
  "$FORGE" --out "$WORK/$f" --host node3 --domain "$([ $f = claimer.send ] && echo h1 || echo h2)" \
    --kind "${f#claimer.}" --src 10.77.0.1:45999 --dst 10.77.0.2:7999 --count 200 \
    --offset-ms "$([ $f = claimer.send ] && echo 1000 || echo 0)" --key-file "$EXCHANGE_KEY" \
    --sequence "$([ $f = claimer.send ] && echo 1 || echo 2)" || fail "exchange_forge"
  produce "$WORK/$f"
done
for r in 0 1 2 3; do
  "$FORGE" --out "$WORK/flood$r.rec" --host node3 --domain "phantom$r" --kind send --src 10.77.0.1:45999 \
    --dst 10.77.0.2:7999 --count 4 --extra-domains 255 --key-file "$EXCHANGE_KEY" --sequence $((10 + r)) ||
    fail "exchange_forge"
  produce "$WORK/flood$r.rec"
done

rejected() { local s=0 a; for a in x1 x2; do s=$((s + $(agent_status $a | jq -r ".exchange.records_rejected.$1 // 0"))); done; echo $s; }
at_least() { test "$(rejected "$1")" -ge "$2"; }
for want in unsigned:2 bad_signature:2 unknown_signer:2 replayed:1 oversized:1 domain_claimed:2 signer_domains_full:4; do
  wait_until 15 at_least "${want%%:*}" "${want##*:}" ||
    fail "${want%%:*}: $(rejected "${want%%:*}") counted, expected ${want##*:}"
  note "rejected ${want%%:*}: $(rejected "${want%%:*}")"
done
metrics=$(curl -sf "${AGENT_URLS[$owner]}/metrics")
grep -q '^skewscope_exchange_records_rejected_total{reason="bad_signature"} [1-9]' <<<"$metrics" ||
  fail "/metrics lacks the bad_signature rejections"
grep -q '^skewscope_exchange_insecure 0$' <<<"$metrics" || fail "/metrics: skewscope_exchange_insecure is not 0"

sleep 1
after=$(verdict)
note "verdict after the forgeries: $after"
[ "$after" = "$before" ] || fail "the real pair's verdict changed: $before -> $after"
for a in x1 x2; do
  n=$(agent_status $a | jq -r .exchange.remote_domains)
  [ "$n" -le 2 ] || fail "$a interned $n remote domains (phantoms from the flood)"
  phantom=$(agent_status $a | jq -r '[.pairs[] | select(.src | test("phantom"))] | length')
  [ "$phantom" = 0 ] || fail "$a reports $phantom phantom pairs"
done
[ "$(agent_status $owner | jq -r .exchange.trust.insecure)" = false ] || fail "status says insecure"
echo "exchange_trust: 1 passed, 0 failed"
