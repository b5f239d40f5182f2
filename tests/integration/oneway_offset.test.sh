#!/usr/bin/env bash
# A one-way ZeroMQ PUSH/PULL hop between two lab hosts on one shared clock (true offset 0): the
# reverse direction carries only the handshake, so the interval is one-sided, or two-sided but
# widening with the drift allowance as the handshake ages. `skewscope top` must never print an
# offset without its bound (the midpoint of such an interval walked away from 0 by ~100 µs a
# second), --json must say why there is none, and /metrics must have no offset sample for it.
# Then request/response traffic on the same pair: OFFSET ± BOUND is shown and holds 0.
source "$(dirname "$0")/lib.sh"
lab_up 2
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains
ONEWAY_SECONDS=${ONEWAY_SECONDS:-10}

# pair_of JSON: the a->b tcp pair of one `top --once --json`, or null.
pair_of() {
  jq -c '[.pairs[] | select(.src=="a" and .dst=="b" and .transport=="tcp")][0]' <<<"$1"
}

# poll: a `top --once` table between two `top --once --json` polls; prints the a->b pair of the
# second JSON with the table's OFFSET cell (field 10, "-" or "VALUE ± BOUND") added as
# .table_offset. The pair may settle between two polls (request/response traffic settles it within
# seconds), so the table is compared only when both JSON polls agree on whether an offset is shown;
# otherwise it polls again (a few times at most: a state changes once, not every poll).
poll() {
  local before after table cell
  for _ in 1 2 3 4 5; do
    before=$(pair_of "$("$SKEWSCOPE" top --agent "$AGENT_URL" --once --json)")
    table=$("$SKEWSCOPE" top --agent "$AGENT_URL" --once)
    after=$(pair_of "$("$SKEWSCOPE" top --agent "$AGENT_URL" --once --json)")
    [ "$(jq '. != null and .offset_seconds != null' <<<"$before")" = \
      "$(jq '. != null and .offset_seconds != null' <<<"$after")" ] && break
  done
  cell=$(awk '$1 == "a" && $2 == "b" && $3 == "tcp" { print ($11 == "±") ? $10 " ± " $12 : $10 }' <<<"$table")
  jq -c --arg cell "$cell" 'if . == null then null else . + {table_offset: $cell} end' <<<"$after"
}

# Checks one poll: an offset only with a bound, the bound holds 0, the table agrees, and a
# missing offset has a reason. Prints "shown", the reason, or "none" (no pair yet).
check_poll() {
  local p=$1
  [ "$p" != null ] || { echo none; return; }
  jq -e '(.offset_seconds == null) == (.offset_bound_seconds == null)' <<<"$p" >/dev/null ||
    fail "offset without its bound: $p"
  if jq -e '.offset_seconds != null' <<<"$p" >/dev/null; then
    jq -e '.offset_missing == null and (.offset_seconds - .offset_bound_seconds) <= 1e-9
           and (.offset_seconds + .offset_bound_seconds) >= -1e-9' <<<"$p" >/dev/null ||
      fail "shown offset ± bound does not hold the true offset 0: $p"
    jq -e '.table_offset | test("±")' <<<"$p" >/dev/null || fail "table shows no bound: $p"
    echo shown
  else
    jq -e '.offset_missing != null and .at_risk == null and .at_risk_basis == "not_assessed"' <<<"$p" >/dev/null ||
      fail "no offset, but no reason (or an at_risk verdict): $p"
    jq -e '.table_offset == "-"' <<<"$p" >/dev/null || fail "table prints an offset JSON does not have: $p"
    jq -r .offset_missing <<<"$p"
  fi
}

# Phase 1: one-way.
in_host 2 "$TRAFFIC" zmq-pull --bind tcp://$B:7100 --duration $((ONEWAY_SECONDS + 5)) >"$WORK/pull.out" &
BACKGROUND+=($!)
in_host 1 "$TRAFFIC" zmq-push --connect tcp://$B:7100 --size 200 --rate 200 --duration $((ONEWAY_SECONDS + 3)) \
  >"$WORK/push.out" &
BACKGROUND+=($!)
reasons=() widths=()
end=$((SECONDS + ONEWAY_SECONDS))
while [ $SECONDS -lt $end ]; do
  p=$(poll)
  r=$(check_poll "$p")  # a failed check exits the substitution: set -e passes it on here
  reasons+=("$r")
  # Half-width of whatever the interval is: two-sided (upper − lower)/2, or one-sided (no width).
  widths+=("$(jq -r 'if . == null then "-" elif .offset_lower_bound_seconds != null and .offset_upper_bound_seconds != null
                     then ((.offset_upper_bound_seconds - .offset_lower_bound_seconds) / 2 * 1e6 | floor | tostring) + "us"
                     else "one-sided" end' <<<"$p")")
  sleep 0.5
done
note "one-way a->b, per poll: ${reasons[*]}"
note "one-way a->b interval half-width, per poll: ${widths[*]}"
note "last poll: $p"
last=${reasons[-1]}
case "$last" in unsettled | one_sided) ;; *) fail "one-way pair after ${ONEWAY_SECONDS}s: expected unsettled or one_sided, got $last" ;; esac
# The interval must also hold 0 when it is not shown.
jq -e '(.offset_lower_bound_seconds // -1) <= 1e-9 and (.offset_upper_bound_seconds // 1) >= -1e-9' <<<"$p" >/dev/null ||
  fail "the one-way interval does not hold the true offset 0: $p"
metrics=$(curl -sS --max-time 5 "$AGENT_URL/metrics")
p=$(poll)
r=$(check_poll "$p")
[ "$r" != shown ] || fail "one-way pair became settled between polls: $p"
! grep -E '^skewscope_clock_offset(_bound)?_seconds\{src="a",dst="b"\}' <<<"$metrics" ||
  fail "/metrics exports an offset for the one-way pair"
echo "ok: one-way pair: no offset without its bound ($last), none in /metrics"

# Phase 2: request/response on the same pair of hosts.
in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 30 >/dev/null &
BACKGROUND+=($!)
in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --rate 500 --duration 25 >/dev/null &
BACKGROUND+=($!)
shown_now() {  # inside `until`, errexit is off: pass a failed check on by hand
  p=$(poll); r=$(check_poll "$p") || exit 1; [ "$r" = shown ]
}
wait_until 20 shown_now || fail "request/response: no OFFSET ± BOUND within 20 s: $p"
for _ in 1 2 3 4 5 6; do p=$(poll); check_poll "$p" >/dev/null; sleep 0.5; done  # and it stays honest
note "request/response a->b: $(jq -c '{offset_seconds, offset_bound_seconds, delta_t_min_seconds, table_offset}' <<<"$p")"
echo "ok: request/response pair shows OFFSET ± BOUND holding 0"
echo "oneway_offset: 1 passed, 0 failed"
