#!/usr/bin/env bash
# The merged view over one agent per host joined by a test Kafka (`skewscope status --agent x3`):
#  - every cross-host pair with traffic appears exactly once, known, from the agent that owns it;
#    the agents section shows each agent's partitions; health 1, exit 0;
#  - kill -9 an agent that owns a pair of the two other hosts (host 3's agent if none does): exit 3,
#    health null, the output names it, and the pairs between the two other hosts are shown again,
#    known, by a live agent (after a hand-over when the killed agent owned them).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/exchange_lib.sh"

lab_up 3
start_kafka 6
for i in 1 2 3; do
  start_named_agent x$i --host-name node$i --domain h$i=netns:"$(netns_path $i)" --only-domains --window 3s \
    --send-max-age 2s --exchange "kafka:$BOOTSTRAP" --exchange-group "$RUN_ID" --exchange-key-file "$EXCHANGE_KEY"
done
AGENTS=(--agent "${AGENT_URLS[x1]}" --agent "${AGENT_URLS[x2]}" --agent "${AGENT_URLS[x3]}")
wait_exchange_settled 6 x1 x2 x3

for i in 1 2 3; do in_host $i "$TRAFFIC" echo-server --listen 10.77.0.$i:7300 --duration 120 >/dev/null & BACKGROUND+=($!); done
sleep 0.3
in_host 1 "$TRAFFIC" ping --connect 10.77.0.2:7300 --size 64 --rate 100 --duration 100 >/dev/null & BACKGROUND+=($!)
in_host 2 "$TRAFFIC" ping --connect 10.77.0.3:7300 --size 64 --rate 100 --duration 100 >/dev/null & BACKGROUND+=($!)
in_host 3 "$TRAFFIC" ping --connect 10.77.0.1:7300 --size 64 --rate 100 --duration 100 >/dev/null & BACKGROUND+=($!)

merged() { "$SKEWSCOPE" status "${AGENTS[@]}" --json 2>/dev/null || true; }
# shown_known SRC DST [NOT_FROM_URL]: the pair is in the merged view exactly once, not unknown
shown_known() {
  merged | jq -e --arg s "$1" --arg d "$2" --arg not "${3:-}" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="tcp")] | length == 1 and .[0].state != "unknown" and .[0].agent != $not' >/dev/null
}
all_known() { local p; for p in "h1 h2" "h2 h1" "h2 h3" "h3 h2" "h3 h1" "h1 h3"; do shown_known $p || return 1; done; }
wait_until 40 all_known || { merged | jq -c '.pairs[] | {src, dst, state, agent}'; fail "the cross-host pairs are not all shown, known"; }
out=$(merged)
echo "$out" | jq -c '.pairs[] | {src, dst, state, window_spans, agent}'
echo "$out" | jq -c '.agents[] | {url, pairs, partitions: .exchange.partitions}'
[ "$(echo "$out" | jq '[.agents[].exchange.partitions | length] | add')" -eq 6 ] || fail "agents list does not show 6 partitions"
[ "$(echo "$out" | jq '.health')" = 1 ] || fail "one clock: merged health should be 1"
[ "$(echo "$out" | jq '[.pairs[] | .negative_spans] | add')" -eq 0 ] || fail "negative spans with one clock"
rc=0; "$SKEWSCOPE" status "${AGENTS[@]}" >"$WORK/merged.txt" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/merged.txt"; fail "merged status exit $rc, expected 0"; }
grep -q "exchange connected, partitions" "$WORK/merged.txt" || { cat "$WORK/merged.txt"; fail "no exchange line per agent"; }

# The victim: an agent owning a pair of the two other hosts, so that pair must change hands.
host_of() { local i; for i in 1 2 3; do [ "${AGENT_URLS[x$i]}" = "$1" ] && echo $i; done; true; }
victim=3 handed=
for p in "1 2" "2 3" "3 1"; do
  set -- $p
  owner=$(host_of "$(echo "$out" | jq -r --arg s h$1 --arg d h$2 '[.pairs[] | select(.src==$s and .dst==$d)][0].agent')")
  if [ -n "$owner" ] && [ "$owner" != "$1" ] && [ "$owner" != "$2" ]; then victim=$owner handed="h$1<->h$2"; break; fi
done
survivors=()
for i in 1 2 3; do [ $i -ne "$victim" ] && survivors+=($i); done
note "killing x$victim; ${handed:-no pair of two other hosts is owned by a third agent here,} ${handed:+must change hands}"
dead=${AGENT_URLS[x$victim]}
kill -9 "${AGENT_PIDS[x$victim]}"
wait "${AGENT_PIDS[x$victim]}" 2>/dev/null || true
rc=0; "$SKEWSCOPE" status "${AGENTS[@]}" >"$WORK/gone.txt" 2>&1 || rc=$?
[ $rc -eq 3 ] || { cat "$WORK/gone.txt"; fail "an agent killed: exit $rc, expected 3"; }
grep -q "causality_health unknown: agent $dead unreachable" "$WORK/gone.txt" || { cat "$WORK/gone.txt"; fail "output does not name the killed agent"; }
a=h${survivors[0]} b=h${survivors[1]}
back() { shown_known $a $b "$dead" && shown_known $b $a "$dead"; }
wait_until 40 back || { merged | jq -c '.pairs[] | {src, dst, state, agent}'; fail "$a<->$b not shown again by a live agent"; }
note "after the kill: $(merged | jq -c --arg a $a --arg b $b '[.pairs[] | select((.src == $a or .src == $b) and (.dst == $a or .dst == $b)) | {src, dst, state, agent}]')"
note "ok"
