#!/usr/bin/env bash
# The command line and HTTP surface a user meets, against a real agent watching a two-host lab
# with host b's clock simulated 50 ms ahead (so a->b spans are positive and b->a negative):
#   skewscope status / whatif / top: exit 3 when no agent answers;
#   skewscope doctor: the kernel's features and the hooks it would use;
#   GET /api/v1/spans: raw timestamps of real messages, corrections consistent and never an
#     inversion made from a message received after it was sent; bad limits refused;
#     (if the agent has --enable-spans-api: off without it);
#   GET /api/v1/whatif and skewscope whatif: the same table, inversion probabilities as the
#     error models predict for +-50 ms spans; bad models refused;
#   skewscope top --once [--json] and status: the same pairs, exit status follows health.
source "$(dirname "$0")/lib.sh"
B=10.77.0.2
passed=0
ok() { passed=$((passed + 1)); note "ok: $*"; }

# expect_exit CODE CMD...: runs CMD (output to $WORK/out, $WORK/err), fails unless it exits CODE
expect_exit() {
  local want=$1 rc=0; shift
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$* exited $rc, expected $want"; }
}
http_code() { curl -s --max-time 5 -o "$WORK/body" -w '%{http_code}' "$AGENT_URL$1"; }

# --- No agent: a loopback port nobody listens on (bound and closed again just now).
dead_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dead=http://127.0.0.1:$dead_port
expect_exit 3 "$SKEWSCOPE" status --agent "$dead"
grep -q "cannot reach the agent" "$WORK/err" || fail "status: no reason given on stderr"
expect_exit 3 "$SKEWSCOPE" status --agent "$dead" --json
[ ! -s "$WORK/out" ] || fail "status --json printed something for an unreachable agent"
expect_exit 3 "$SKEWSCOPE" top --once --json --agent "$dead"
expect_exit 3 "$SKEWSCOPE" whatif --clock-error gaussian:1ms --agent "$dead"
expect_exit 2 "$SKEWSCOPE" whatif --clock-error bogus:1ms --agent "$dead"
ok "status, top, whatif: exit 3 with no agent; whatif: exit 2 on a bad model"
expect_exit 2 "$SKEWSCOPE" agent --estimate-interval 10ms
grep -q -- "--estimate-interval must be from 100ms to 10s" "$WORK/err" || fail "agent --estimate-interval 10ms: $(cat "$WORK/err")"
expect_exit 2 "$SKEWSCOPE" agent --estimate-interval soon
grep -q "malformed duration 'soon'" "$WORK/err" || fail "agent --estimate-interval soon: $(cat "$WORK/err")"
ok "agent: exit 2 on an estimate interval out of range or malformed"
expect_exit 2 "$SKEWSCOPE" agent --payload-bytes 524289
grep -q -- "--payload-bytes must be from 0 (off) to 524288" "$WORK/err" || fail "agent --payload-bytes 524289: $(cat "$WORK/err")"
ok "agent: exit 2 on --payload-bytes beyond 512 KiB"

# --- doctor
expect_exit 0 "$SKEWSCOPE" doctor
grep -qx "kernel $(uname -r)" "$WORK/out" || fail "doctor: no 'kernel $(uname -r)' line"
grep -q "^features:" "$WORK/out" && grep -q "^hooks:" "$WORK/out" || fail "doctor: sections missing"
grep -Eq "^  yes syscall tracepoints" "$WORK/out" || fail "doctor: syscall tracepoints not reported"
# sock_tp where the socket-layer tracepoints exist, else a syscall variant hooking write.
variant=$(sed -n 's/^variant: //p' "$WORK/out")
case $variant in
  sock_tp) grep -Eq "^  use  sock_send_end " "$WORK/out" || fail "doctor: variant sock_tp but sock_send_end not chosen" ;;
  btf|core_read|raw_tp) grep -Eq "^  use  (enter_write|sys_enter_tcp) " "$WORK/out" || fail "doctor: the write tracepoint is not chosen" ;;
  *) fail "doctor: no 'variant:' line naming a variant (got '$variant')" ;;
esac
# Payload capture rides on the same variant (its programs, with the copy, load here too).
grep -qx "variant with --payload-bytes: $variant" "$WORK/out" ||
  fail "doctor: payload capture must run the same variant ($variant)"
usable=$(sed -n 's/^\([0-9]*\) of \([0-9]*\) programs usable$/\1 \2/p' "$WORK/out")
[ -n "$usable" ] || fail "doctor: no 'N of M programs usable' line"
read -r n_use n_all <<<"$usable"
[ "$n_use" -eq "$(grep -c '^  use  ' "$WORK/out")" ] && [ "$n_all" -eq "$(grep -Ec '^  (use|skip) ' "$WORK/out")" ] ||
  fail "doctor: the summary ($usable) does not match the listed hooks"
ok "doctor: kernel, features, $n_use of $n_all hooks, variant $variant"

# --- A lab and an agent
lab_up 2
domains=(--domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains)
spans_flag=()
agent_help=$("$SKEWSCOPE" agent --help)  # whole, then matched: grep -q would cut the pipe (pipefail)
if grep -q -- '--enable-spans-api' <<<"$agent_help"; then
  # Per-message data of the whole host: off unless asked for.
  start_agent "${domains[@]}"
  code=$(http_code /api/v1/spans)
  [ "$code" != 200 ] || fail "/api/v1/spans answered 200 without --enable-spans-api"
  kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true; AGENT_PID=
  ok "/api/v1/spans off without --enable-spans-api (HTTP $code)"
  spans_flag=(--enable-spans-api)
fi
start_agent "${domains[@]}" --window 30s --simulate-clock b=+50ms "${spans_flag[@]}"

# Traffic for the whole test, so that the window is never empty (the checks take a while on a
# loaded machine).
in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 300 >/dev/null &
BACKGROUND+=("$!")
sleep 0.3
in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --rate 100 --duration 280 >"$WORK/ping.out" &
BACKGROUND+=("$!")
spans_seen() { [ "$(pair_field a b spans)" -ge 300 ] 2>/dev/null && [ "$(pair_field b a spans)" -ge 300 ] 2>/dev/null; }
wait_until 30 spans_seen || fail "the agent did not pair 300 pings both ways"

# --- /api/v1/spans
[ "$(http_code '/api/v1/spans?limit=50')" = 200 ] || fail "/api/v1/spans?limit=50: HTTP $(cat "$WORK/body")"
jq -e '.spans | length == 50' "$WORK/body" >/dev/null || fail "/api/v1/spans?limit=50 did not return 50 spans"
# Field by field, for every span (in Python: nanosecond timestamps need exact integers): names,
# transport, size, the span is recv - send, and a correction (when made) is recv -
# corrected_recv, has a bound, and never turns a forward message into an inversion; b's clock
# 50 ms ahead makes b->a spans negative and a->b ones positive (all but a message delayed over
# 50 ms on a loaded machine: at most 1 in 10 tolerated).
bad=$(python3 - "$WORK/body" <<'PY'
import json, sys
spans = json.load(open(sys.argv[1]))["spans"]
wrong_sign = 0
for s in spans:
    ok = ((s["src"], s["dst"]) in (("a", "b"), ("b", "a")) and s["transport"] == "tcp" and s["bytes"] == 64
          and isinstance(s["send_ns"], int) and isinstance(s["recv_ns"], int)
          and abs(s["span_seconds"] - (s["recv_ns"] - s["send_ns"]) * 1e-9) < 1e-9)
    # A message delayed by more than 50 ms (a loaded machine) keeps its sign: a few may.
    wrong_sign += not (s["span_seconds"] > 0 if s["src"] == "a" else s["span_seconds"] < 0)
    if s["corrected"]:
        ok = ok and s["recv_ns"] - s["correction_ns"] == s["corrected_recv_ns"] and s["correction_bound_ns"] >= 0
        ok = ok and not (s["recv_ns"] >= s["send_ns"] and s["corrected_recv_ns"] < s["send_ns"])
    else:
        ok = ok and s.get("corrected_recv_ns") is None
    if not ok:
        print(json.dumps(s))
if wrong_sign * 10 > len(spans):
    print(f"{wrong_sign} of {len(spans)} spans have the sign the simulated offset does not give")
PY
)
n_corr=$(jq '[.spans[] | select(.corrected)] | length' "$WORK/body")
[ "$(http_code /api/v1/spans)" = 200 ] && jq -e '.spans | length >= 1 and length <= 100' "$WORK/body" >/dev/null ||
  fail "/api/v1/spans without a limit: not 1-100 spans"
for badlimit in 0 -1 abc 1e3 99999999999999999999 ''; do
  code=$(http_code "/api/v1/spans?limit=$badlimit")
  [ "$code" = 400 ] || fail "/api/v1/spans?limit=$badlimit answered $code, expected 400"
  jq -e '.error | type == "string"' "$WORK/body" >/dev/null || fail "/api/v1/spans?limit=$badlimit: no error text"
done
ok "/api/v1/spans: 50 consistent spans ($n_corr corrected), bad limits refused"

# --- /api/v1/whatif and skewscope whatif
[ "$(http_code '/api/v1/whatif?clock_error=gaussian:1us%7Claplace:100ms')" = 200 ] ||
  fail "/api/v1/whatif: $(cat "$WORK/body")"
cp "$WORK/body" "$WORK/whatif.json"
jq -e '(.models | map(.distribution)) == ["gaussian", "laplace"]
       and (.models[0].scale_seconds - 1e-6 | fabs) < 1e-12 and (.models[1].scale_seconds - 0.1 | fabs) < 1e-9' \
  "$WORK/whatif.json" >/dev/null || fail "/api/v1/whatif: models not as asked: $(jq -c .models "$WORK/whatif.json")"
# Spans of +50 ms (a->b) and -50 ms (b->a), plus microseconds of latency (rarely more than 50 ms
# on a loaded machine: 1 % tolerated). Under a 1 us gaussian error none of a->b and all of b->a invert; under laplace(b = 100 ms) per clock a span s >= 0
# inverts with P = 1/2 (1 + s/2b) e^(-s/b) = 0.3785 at 50 ms, and -s with 1 - that.
for want in "a b 0 0.3785" "b a 1 0.6215"; do
  read -r s d p0 p1 <<<"$want"
  row=$(jq -c --arg s "$s" --arg d "$d" '.pairs[] | select(.src == $s and .dst == $d)' "$WORK/whatif.json")
  [ -n "$row" ] || fail "/api/v1/whatif: no row for $s->$d"
  jq -e --argjson p0 "$p0" --argjson p1 "$p1" '.window_spans >= 300 and .samples >= 1
         and ([.inversion_ratio[], .violated_probability[], .observed_negative_ratio] | all(. >= 0 and . <= 1))
         and (.inversion_ratio | length == 2)
         and ((.inversion_ratio[0] - $p0) | fabs) < 0.01
         and ((.inversion_ratio[1] - $p1) | fabs) < 0.01
         and ((.observed_negative_ratio - $p0) | fabs) < 0.01' <<<"$row" >/dev/null ||
    fail "/api/v1/whatif: $s->$d row not as expected (ratios ~ [$p0, $p1]): $row"
done
jq -e '[.misordered_share[], .pairs_violated_share[]] | all(. >= 0 and . <= 1)' "$WORK/whatif.json" >/dev/null ||
  fail "/api/v1/whatif: headline shares outside [0, 1]"
[ "$(http_code /api/v1/whatif)" = 400 ] || fail "/api/v1/whatif without clock_error: not 400"
[ "$(http_code '/api/v1/whatif?clock_error=gaussian:-1ms')" = 400 ] || fail "/api/v1/whatif with a negative scale: not 400"
[ "$(http_code '/api/v1/whatif?clock_error=cauchy:1ms')" = 400 ] || fail "/api/v1/whatif with an unknown model: not 400"
[ "$(http_code '/api/v1/whatif?clock_error=gaussian:1ms&format=text')" = 200 ] && grep -q "gaussian:1ms" "$WORK/body" ||
  fail "/api/v1/whatif?format=text: no table"

expect_exit 0 "$SKEWSCOPE" whatif --clock-error 'gaussian:1us|laplace:100ms' --json --agent "$AGENT_URL"
jq -e --slurpfile api "$WORK/whatif.json" '
    (.models == $api[0].models)
    and ([.pairs[] | "\(.src)>\(.dst)"] | sort) == ([$api[0].pairs[] | "\(.src)>\(.dst)"] | sort)' \
  "$WORK/out" >/dev/null || fail "skewscope whatif --json differs from /api/v1/whatif in models or pairs"
expect_exit 0 "$SKEWSCOPE" whatif --clock-error gaussian:1ms --agent "$AGENT_URL"
grep -q "gaussian:1ms" "$WORK/out" || fail "skewscope whatif: no table"
expect_exit 2 "$SKEWSCOPE" whatif --clock-error gaussian:1parsec --agent "$AGENT_URL"
ok "/api/v1/whatif and skewscope whatif: the same table, probabilities in range, bad input refused"

# --- top --once --json, top --once, status
expect_exit 0 "$SKEWSCOPE" top --once --json --agent "$AGENT_URL"
[ "$(wc -l <"$WORK/out")" -eq 1 ] || fail "top --once --json: not exactly one line"
jq -e '(.pairs | type) == "array" and (.health | type) == "number"
       and ([.pairs[] | select(.transport == "tcp") | "\(.src)>\(.dst)"] | index("a>b") != null and index("b>a") != null)' \
  "$WORK/out" >/dev/null || fail "top --once --json: not a status with the a<->b pairs"
expect_exit 0 "$SKEWSCOPE" top --once --agent "$AGENT_URL"
grep -q "b" "$WORK/out" && [ "$(wc -l <"$WORK/out")" -ge 3 ] || fail "top --once: no table"
# b->a inverted: the pair is violated, health 0, status exits 1.
health=$(status_json | jq .health)
[ "$health" = 0 ] || fail "health $health with every b->a span negative"
[ "$(pair_field b a state)" = violated ] || fail "b->a is $(pair_field b a state), expected violated"
expect_exit 1 "$SKEWSCOPE" status --agent "$AGENT_URL"
ok "top --once [--json], status exit 1 on a violated pair"

echo "cli_surface: $passed passed, 0 failed"
