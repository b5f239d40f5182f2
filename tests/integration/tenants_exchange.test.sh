#!/usr/bin/env bash
# Tenants over the exchange (docs/tenants.md): records carry each domain's tenant (signed with the
# rest of the record); the owner of a host pair takes them only when its own --tenant map agrees.
#  1. both agents declare tenant a = a?: the owner pairs a1 -> a2 and shows it in tenant a's view;
#  2. the agents' maps disagree (a = a? on one, z = a? on the other): every record of the other
#     agent is refused as tenant_mismatch (counted), and no pair is made of them.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && show_agent_logs; (exit $rc_); cleanup' EXIT INT TERM

lab_up 2
start_kafka 2
agents() {  # agents GROUP TENANT_OF_X1 TENANT_OF_X2
  for i in 1 2; do
    local t=$2; [ $i -eq 2 ] && t=$3
    start_named_agent "x$i$1" --host-name node$i --domain a$i=netns:"$(netns_path $i)" --only-domains --window 5s \
      --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID$1" \
      --exchange-key-file "$EXCHANGE_KEY" --tenant "$t=a?"
  done
  GROUP=$1
  settled() { test "$(owned_total "x1$GROUP" "x2$GROUP")" -eq 2; }
  wait_until 60 settled || fail "group $1 did not settle"
}
stop_agents() {  # stop_agents GROUP
  for a in "x1$1" "x2$1"; do kill "${AGENT_PIDS[$a]}" 2>/dev/null || true; wait "${AGENT_PIDS[$a]}" 2>/dev/null || true; done
}
background_pings() {  # background_pings PORT SECONDS: 200/s from a to b, not waited for (lib.sh's pings waits)
  in_host 2 "$TRAFFIC" echo-server --listen 10.77.0.2:"$1" --duration "$2" >/dev/null & BACKGROUND+=($!)
  sleep 0.3
  in_host 1 "$TRAFFIC" ping --connect 10.77.0.2:"$1" --size 64 --rate 200 --duration "$2" >/dev/null & BACKGROUND+=($!)
}
rejected() {  # rejected AGENT: tenant_mismatch records it refused
  agent_status "$1" | jq -r '.exchange.records_rejected.tenant_mismatch // 0'
}

# 1. The same tenants on both agents.
agents m a a
background_pings 7600 12
wait_until 15 healthy_owner a1 a2 x1m x2m || fail "a1 -> a2 is not healthy through the exchange"
owner=$OWNER
curl -sf --max-time 5 "${AGENT_URLS[$owner]}/api/v1/status?tenant=a" |
  jq -e 'any(.pairs[]; .src == "a1" and .dst == "a2" and .health == 1)' >/dev/null ||
  fail "the owner $owner does not report a1 -> a2 in tenant a's view"
[ "$(rejected x1m)" -eq 0 ] && [ "$(rejected x2m)" -eq 0 ] || fail "records refused although the maps agree"
note "maps agree: owner $owner pairs a1 -> a2 under tenant a, no record refused"
stop_agents m

# 2. Disagreeing maps: node1 says a1 is tenant a's, node2 that a? is tenant z's.
agents d a z
background_pings 7601 12
refused_some() { [ $(($(rejected x1d) + $(rejected x2d))) -ge 1 ]; }
wait_until 15 refused_some || fail "no record refused as tenant_mismatch"
for a in x1d x2d; do
  [ "$(pair_from $a a1 a2 health)" = none ] || fail "$a made the pair a1 -> a2 of refused records"
  metrics=$(curl -sf --max-time 5 "${AGENT_URLS[$a]}/metrics") || fail "$a: no /metrics"
  grep -q '^skewscope_exchange_records_rejected_total{reason="tenant_mismatch"} ' <<<"$metrics" ||
    fail "$a: no tenant_mismatch metric"
done
note "maps disagree: $(rejected x1d) + $(rejected x2d) records refused as tenant_mismatch, no pair made"
note "ok"
