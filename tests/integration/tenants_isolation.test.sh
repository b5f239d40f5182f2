#!/usr/bin/env bash
# Tenants isolated at the endpoint (docs/tenants.md): four lab hosts, a1 a2 of tenant a and b1 b2
# of tenant b, each pair pinging; basic-auth users alice (tenant a), bob (tenant b), ops (all).
#  - every route: alice sees a's pairs, domains, spans, policies and metrics and nothing of b's;
#    ?tenant=b is 403, the operator's routes (whatif) are 403; ops sees both tenants;
#  - alice's view is the same with b's traffic running and stopped (on the fields that do not
#    move with time: pairs, health, domains, policies and verdicts, metric series);
#  - the client commands (status, gate, explain) with --basic-auth-user alice and --tenant;
#  - bad tenant flags are usage errors (exit 2).
source "$(dirname "$0")/lib.sh"

lab_up 4
A2=10.77.0.2
B2=10.77.0.4
bcrypt_of() { python3 -W ignore -c "import crypt; print(crypt.crypt('$1', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))"; }
printf 'basic_auth_users:\n  alice: %s\n  bob: %s\n  ops: %s\n' "$(bcrypt_of pa)" "$(bcrypt_of pb)" "$(bcrypt_of po)" >"$WORK/web.yml"
cat >"$WORK/policies.yaml" <<'YAML'
policies:
  - name: a-orders
    tenant: a
    precision: 10ms
    domains: "*"
  - name: b-billing
    tenant: b
    precision: 10ms
    domains: "*"
  - name: fleet
    precision: 10ms
    domains: "*"
YAML
TENANTS=(--tenant a=a? --tenant b=b?)
DOMAINS=(--domain a1=netns:"$(netns_path 1)" --domain a2=netns:"$(netns_path 2)"
  --domain b1=netns:"$(netns_path 3)" --domain b2=netns:"$(netns_path 4)" --only-domains)

# Bad tenant flags: exit 2 with a message that names the problem, before anything is attached.
usage() {  # usage "EXPECTED TEXT" ARGS...
  local want=$1 out rc; shift
  out=$(timeout 10 "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/bad.sock" "$@" 2>&1) && rc=0 || rc=$?
  [ "$rc" -eq 2 ] && grep -qF "$want" <<<"$out" || fail "agent $*: want exit 2 with '$want', got $rc: $out"
}
usage "overlap" --tenant a='a*' --tenant b='*1'
usage "empty domain glob" --tenant a=a1,
usage "must be 1-63" --tenant =a1
usage "declared twice" --tenant a=a1 --tenant a=a2
usage "not a basic-auth user" "${TENANTS[@]}" --web.config.file "$WORK/web.yml" --tenant-user mallory=a
usage "no tenant named 'c'" "${TENANTS[@]}" --web.config.file "$WORK/web.yml" --tenant-user alice=c
usage "needs basic_auth_users" "${TENANTS[@]}" --tenant-user alice=a
printf 'tenants:\n  a: ["a?"]\npolicies:\n  - {name: p, precision: 1ms, domains: "*"}\n' >"$WORK/both.yaml"
usage "declared both" "${TENANTS[@]}" --policy-file "$WORK/both.yaml"
printf 'policies:\n  - {name: p, tenant: c, precision: 1ms, domains: "*"}\n' >"$WORK/undeclared.yaml"
usage "names tenant 'c', which is not declared" "${TENANTS[@]}" --policy-file "$WORK/undeclared.yaml"

start_agent "${DOMAINS[@]}" "${TENANTS[@]}" --web.config.file "$WORK/web.yml" --tenant-user alice=a \
  --tenant-user bob=b --window 2s --send-max-age 1s --enable-spans-api --policy-file "$WORK/policies.yaml"

get() {  # get USER:PASS PATH: the body (any status)
  curl -s --max-time 5 -u "$1" "$AGENT_URL$2"
}
code() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' -u "$1" "$AGENT_URL$2" || true; }
in_bg() { local i=$1; shift; ip netns exec "$LAB_NAME-h$i" "$@" & BACKGROUND+=("$!"); }
start_pings() {  # start_pings CLIENT_HOST SERVER_ADDR SERVER_HOST PORT: prints the ping's pid
  in_bg "$3" "$TRAFFIC" echo-server --listen "$2:$4" --duration 60 >/dev/null
  sleep 0.3
  in_bg "$1" "$TRAFFIC" ping --connect "$2:$4" --size 64 --rate 200 --duration 60 >/dev/null
}
start_pings 1 $A2 2 7401
start_pings 3 $B2 4 7402
B_PING=$!

healthy_pair() { get ops:po /api/v1/status | jq -e --arg s "$1" --arg d "$2" \
  'any(.pairs[]; .src == $s and .dst == $d and .health == 1)' >/dev/null; }
met() { get ops:po "/api/v1/policies?policy=$1" | jq -e '.policies[0].verdict == "met"' >/dev/null; }
wait_until 15 healthy_pair a1 a2 || fail "a1 -> a2 never healthy: $(get ops:po /api/v1/status | jq -c .pairs)"
wait_until 15 healthy_pair b1 b2 || fail "b1 -> b2 never healthy: $(get ops:po /api/v1/status | jq -c .pairs)"
wait_until 10 met a-orders || fail "a-orders never met: $(get ops:po /api/v1/policies)"
wait_until 10 met b-billing || fail "b-billing never met: $(get ops:po /api/v1/policies)"
# Both of a's offsets settled (their series appear only then, seconds after the pair is healthy on
# a loaded machine), so that the views compared below do not differ by that alone.
offsets_settled() { [ "$(get alice:pa /metrics | grep -c '^skewscope_clock_offset_seconds{')" -eq 2 ]; }
wait_until 30 offsets_settled || fail "a's offsets never settled: $(get alice:pa /api/v1/status | jq -c '[.pairs[] | {src, dst, offset_missing}]')"

# Every route, for each tenant's user: its own tenant only; nothing that names the other's domains.
ROUTES=(/api/v1/status /metrics "/api/v1/spans?limit=1024" /api/v1/policies)
check_user() {  # check_user USER:PASS OWN OTHER
  local cred=$1 own=$2 other=$3 route body
  for route in "${ROUTES[@]}"; do
    [ "$(code "$cred" "$route")" = 200 ] || fail "${cred%%:*} $route: $(code "$cred" "$route") instead of 200"
    body=$(get "$cred" "$route")
    ! grep -qE "\b${other}[12]\b|tenant=\"$other\"|\"$other-|fleet" <<<"$body" ||
      fail "${cred%%:*} $route shows tenant $other or the operator's: $(grep -oE ".{60}\b${other}[12]\b.{20}|.{40}fleet.{20}" <<<"$body" | head -3)"
    grep -q "${own}1" <<<"$body" || [ "$route" = /api/v1/policies ] || fail "${cred%%:*} $route shows nothing of $own"
    local sep='?'; [[ $route == *\?* ]] && sep='&'
    [ "$(code "$cred" "$route${sep}tenant=$other")" = 403 ] || fail "${cred%%:*} $route?tenant=$other is not 403"
    [ "$(code "$cred" "$route${sep}tenant=nosuch")" = 403 ] || fail "${cred%%:*} $route?tenant=nosuch is not 403"
    [ "$(code "$cred" "$route${sep}tenant=$own")" = 200 ] || fail "${cred%%:*} $route?tenant=$own is not 200"
  done
  [ "$(code "$cred" "/api/v1/whatif?clock_error=gaussian:1ms")" = 403 ] || fail "${cred%%:*}: whatif is not 403"
  [ "$(code "$cred" /)" = 200 ] || fail "${cred%%:*}: the live page is not served"
  get "$cred" /api/v1/status | jq -e --arg t "$own" '.tenant == $t and (.pairs | length) > 0 and
    all(.pairs[]; (.src | startswith($t)) and (.dst | startswith($t))) and (has("exchange") | not) and
    (.capture | has("lost") | not) and (.clocks.domains | keys == [($t + "1"), ($t + "2")])' >/dev/null ||
    fail "${cred%%:*}'s status: $(get "$cred" /api/v1/status | jq -c '{tenant, pairs: [.pairs[] | [.src, .dst]], capture}')"
  get "$cred" /api/v1/policies | jq -e --arg t "$own" '[.policies[].tenant] == [$t] and (has("file") | not)' >/dev/null ||
    fail "${cred%%:*}'s policies: $(get "$cred" /api/v1/policies)"
  get "$cred" "/api/v1/spans?limit=1024" | jq -e --arg t "$own" '(.spans | length) > 0 and
    all(.spans[]; (.src | startswith($t)) and (.dst | startswith($t)))' >/dev/null || fail "${cred%%:*}'s spans"
  ! get "$cred" /metrics | grep -qE '^skewscope_(causality_health|http_|capture_|exchange_|diagnosis|host_suspect)' ||
    fail "${cred%%:*}'s /metrics holds agent-wide series"
}
check_user alice:pa a b
check_user bob:pb b a
note "alice and bob see their own tenant on every route; 403 for the other's and the operator's"

# The operator sees both, and may ask for one tenant's view.
get ops:po /api/v1/status | jq -e '[.pairs[] | .src] | (index("a1") != null) and (index("b1") != null)' >/dev/null ||
  fail "ops does not see both tenants"
get ops:po "/api/v1/status?tenant=b" | jq -e '.tenant == "b" and all(.pairs[]; .src | startswith("b"))' >/dev/null ||
  fail "ops' view of tenant b"
[ "$(code ops:po "/api/v1/status?tenant=nosuch")" = 404 ] || fail "ops asking for an unknown tenant: not 404"
[ "$(code ops:po "/api/v1/whatif?clock_error=gaussian:1ms")" = 200 ] || fail "ops: whatif refused"
# (Bodies go to grep whole: grep -q on a pipe can end the writer with SIGPIPE, failing under pipefail.)
grep -q '^skewscope_policy_met{policy="fleet",tenant=""} ' <<<"$(get ops:po /metrics)" || fail "ops' /metrics lacks fleet"

# The client commands: alice's own view; another tenant's is refused.
printf 'pa\n' >"$WORK/alice.pw"; chmod 600 "$WORK/alice.pw"
as_alice=(--agent "$AGENT_URL" --basic-auth-user alice --basic-auth-password-file "$WORK/alice.pw")
"$SKEWSCOPE" status "${as_alice[@]}" --json | jq -e '.tenant == "a"' >/dev/null || fail "status as alice"
table=$("$SKEWSCOPE" status "${as_alice[@]}" || true)
grep -q "tenant a" <<<"$table" || fail "status table as alice: $table"
! grep -q "b1" <<<"$table" || fail "status table as alice shows b1: $table"
rc=0; "$SKEWSCOPE" status "${as_alice[@]}" --tenant b >"$WORK/out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q 403 "$WORK/out" || fail "status --tenant b as alice: exit $rc: $(cat "$WORK/out")"
rc=0; "$SKEWSCOPE" gate --policy a-orders --wait 10s "${as_alice[@]}" >"$WORK/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || fail "gate a-orders as alice: exit $rc: $(cat "$WORK/out")"
rc=0; "$SKEWSCOPE" gate --policy b-billing "${as_alice[@]}" >"$WORK/out" 2>&1 || rc=$?
[ $rc -eq 4 ] || fail "gate b-billing as alice (no such policy in her view): exit $rc: $(cat "$WORK/out")"
rc=0; "$SKEWSCOPE" gate --policy b-billing "${as_alice[@]}" --tenant b >"$WORK/out" 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "gate b-billing --tenant b as alice: exit $rc: $(cat "$WORK/out")"
table=$("$SKEWSCOPE" top --once "${as_alice[@]}" || true)
grep -q "tenant a" <<<"$table" || fail "top as alice: $table"
rc=0; "$SKEWSCOPE" explain "${as_alice[@]}" >"$WORK/out" 2>&1 || rc=$?
! grep -q "b[12]" "$WORK/out" || fail "explain as alice names tenant b's hosts: $(cat "$WORK/out")"
note "status, top, gate and explain as alice see tenant a only"

# Alice's view, on the fields that do not move with time, with b's traffic running and stopped.
alice_view() {
  {
    get alice:pa /api/v1/status | jq -cS '{tenant, health, unknown_reason, pairs: [.pairs[] | {src, dst, transport,
      health, state}], capture: {up: .capture.up, lost_by_domain: .capture.lost_by_domain,
      domains: (.capture.window_pairing.domains | keys)}, clocks: (.clocks.domains | keys), keys: keys}'
    get alice:pa /api/v1/policies | jq -cS '[.policies[] | {name, tenant, verdict, reason,
      pairs: [.pairs[] | {src, dst, transport, verdict}]}]'
    get alice:pa /metrics | sed -n 's/^\([a-z_]*{[^}]*}\) .*/\1/p' | grep -v '_bucket{' | sort
    get alice:pa "/api/v1/spans?limit=1024" | jq -c '[.spans[] | [.src, .dst, .transport]] | unique'
  } >"$1"
}
# Taken once two reads in a row agree: on a loaded machine a half lost in the ring buffer (of any
# domain) makes a pair's health unknown for a window, which is true of alice's pair too.
alice_view "$WORK/with_b"
settled_view() {
  alice_view "$WORK/next"
  cmp -s "$WORK/with_b" "$WORK/next" || { mv "$WORK/next" "$WORK/with_b"; return 1; }
}
wait_until 10 settled_view || fail "alice's view does not settle while both tenants have traffic"
kill "$B_PING"
b_silent() { get ops:po /api/v1/status | jq -e 'all(.pairs[]; (.src | startswith("b")) | not) or
  all(.pairs[] | select(.src | startswith("b")); .window_spans == 0)' >/dev/null; }
wait_until 10 b_silent || fail "b's pairs still have spans in the window after its traffic stopped"
# Whatever b's traffic moved is gone for good now: a view that depended on it would never again
# be the one taken with it, so waiting for equality hides only transient losses, not a leak.
same_view() { alice_view "$WORK/without_b"; cmp -s "$WORK/with_b" "$WORK/without_b"; }
wait_until 10 same_view || {
  diff -u "$WORK/with_b" "$WORK/without_b" >&2
  fail "alice's view changed when tenant b's traffic stopped"
}
note "alice's view is the same with and without tenant b's traffic ($(wc -l <"$WORK/with_b") lines compared)"
note "ok"
