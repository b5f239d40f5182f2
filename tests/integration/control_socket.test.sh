#!/usr/bin/env bash
# Every input a clear error, nothing destroyed:
#  - a regular file at --control-socket is left untouched and the agent refuses to start;
#  - a second agent on a live control socket is refused, the first keeps answering;
#  - a client trickling a byte every 1.5 s does not hold `skewscope simulate` (answered < 1 s),
#    and is itself cut off at the line deadline;
#  - `simulate x=2555555h` is refused (client and agent side), `simulate x=0` accepted;
#  - --max-pending -1, NaN / inf options: exit 2 with a message;
#  - --listen bogus.invalid:1: the message names the resolver's error, never "Success";
#  - b's clock 24 h behind (the limit) in a two-host lab: /api/v1/spans keeps positive
#    timestamps, and every correction is capped at 1 s and flagged.
source "$(dirname "$0")/lib.sh"

now_ms() { date +%s%3N; }

# expect_usage_error PATTERN ARGS...: `skewscope agent ARGS` exits 2 and stderr matches PATTERN.
expect_usage_error() {
  local pattern=$1; shift
  local rc=0
  local listen=(--listen 127.0.0.1:0)  # never the default 0.0.0.0, should a check be missing
  case " $* " in *" --listen "*) listen=() ;; esac
  timeout 10 "$SKEWSCOPE" agent "${listen[@]}" --control-socket "$WORK/unused.sock" "$@" \
    >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "agent $* exited $rc, expected 2"; }
  grep -Eq -e "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "agent $*: no message matching '$pattern'"; }
  note "agent $*: $(head -1 "$WORK/err")"
}

# --- Option values: refused before anything starts.
expect_usage_error '--max-pending.*-1' --max-pending -1
expect_usage_error '--max-pending' --max-pending 99999999999
expect_usage_error '--at-risk-share.*nan' --at-risk-share nan
expect_usage_error '--max-drift-ppm.*inf' --max-drift-ppm inf
expect_usage_error '--window' --window 2555555h
expect_usage_error '--send-max-age' --send-max-age=-1s
expect_usage_error '--simulate-clock.*out of range' --host-name x --simulate-clock x=2555555h
expect_usage_error "cannot resolve 'bogus.invalid': [A-Za-z]" --listen bogus.invalid:1
grep -q 'Success' "$WORK/err" && fail "--listen bogus.invalid:1 still says Success"

# --- A regular file at the socket path: refused, untouched.
precious=$WORK/precious.sock
echo "not a socket, keep me" >"$precious"
rc=0
timeout 20 "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$precious" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "agent with a regular file at --control-socket: exit $rc"
grep -q "regular file" "$WORK/err" || { cat "$WORK/err"; fail "no clear error about the regular file"; }
[ "$(cat "$precious")" = "not a socket, keep me" ] || fail "the regular file at --control-socket was changed"
note "regular file: $(head -1 "$WORK/err")"

# --- A running agent.
start_agent --host-name x
wait_until 10 test -S "$CONTROL" || fail "no control socket"

# A second agent on the same socket is refused; the first still answers.
rc=0
timeout 20 "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$CONTROL" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "second agent on a live control socket: exit $rc"
grep -q "in use" "$WORK/err" || { cat "$WORK/err"; fail "no clear error about the live socket"; }
"$SKEWSCOPE" simulate x=1ms --control-socket "$CONTROL" >/dev/null || fail "first agent stopped answering"

# A slow client: one byte every 1.5 s, never a newline. It is cut off at the deadline (2 s).
python3 - "$CONTROL" >"$WORK/slow.out" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
start = time.monotonic()
print("connected", flush=True)
reply = b""
for _ in range(6):
    try:
        s.send(b"s")
    except OSError as e:
        print("send failed:", e, flush=True)
        break
    s.settimeout(1.5)
    try:
        data = s.recv(4096)
        if not data:
            break
        reply += data
    except socket.timeout:
        pass
    except OSError as e:  # the byte just sent landed after the reply, before the agent's close:
        print("recv:", e, flush=True)  # a reset (unread input at close), the reply already read
        break
print("closed after %.1f s: %s" % (time.monotonic() - start, reply.decode(errors="replace").strip()), flush=True)
PY
slow=$!
BACKGROUND+=("$slow")
wait_until 5 grep -q connected "$WORK/slow.out" || fail "slow client did not connect"
sleep 0.2
t0=$(now_ms)
"$SKEWSCOPE" simulate x=5ms --control-socket "$CONTROL" >"$WORK/sim.out" 2>&1 || { cat "$WORK/sim.out"; fail "simulate failed"; }
elapsed=$(($(now_ms) - t0))
note "simulate with a slow client connected: $elapsed ms: $(cat "$WORK/sim.out")"
[ "$elapsed" -lt 1000 ] || fail "simulate took $elapsed ms with a slow client connected (expected < 1 s)"
wait "$slow" || true
note "slow client: $(tail -1 "$WORK/slow.out")"
grep -q "error: no complete command" "$WORK/slow.out" || fail "slow client was not cut off at the deadline"

# simulate x=2555555h: refused by the client, and by the agent when sent raw.
rc=0
"$SKEWSCOPE" simulate x=2555555h --control-socket "$CONTROL" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -eq 2 ] || fail "simulate x=2555555h exited $rc, expected 2"
grep -q "out of range" "$WORK/err" || { cat "$WORK/err"; fail "simulate x=2555555h: no clear message"; }
note "simulate x=2555555h: $(cat "$WORK/err")"
raw=$(python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect(sys.argv[1])
s.sendall(b"simulate x=2555555h\n"); print(s.recv(4096).decode().strip())' "$CONTROL")
note "agent, raw simulate x=2555555h: $raw"
case "$raw" in "error: "*"out of range"*) ;; *) fail "agent accepted simulate x=2555555h: $raw" ;; esac

# simulate x=0: accepted, and the agent reports the offset back to zero.
"$SKEWSCOPE" simulate x=0 --control-socket "$CONTROL" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "simulate x=0 refused"; }
note "simulate x=0: $(cat "$WORK/out")"

kill "$AGENT_PID"
wait "$AGENT_PID" || true
AGENT_PID=
[ -e "$CONTROL" ] && fail "the agent left its control socket behind"

# --- The largest offset allowed, end to end: b's clock 24 h behind. Every timestamp in
# /api/v1/spans stays a positive time, and corrections (the pair is 24 h apart) are capped at 1 s.
lab_up 2
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --enable-spans-api --simulate-clock b=-24h
in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 60 >/dev/null &
BACKGROUND+=("$!")
in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --count 300 >"$WORK/ping.out"
spans_json() { curl -sf --max-time 5 "$AGENT_URL/api/v1/spans?limit=200" >"$WORK/spans.json"; }
some_corrected() { spans_json && jq -e '[.spans[] | select(.corrected)] | length > 0' "$WORK/spans.json" >/dev/null; }
wait_until 15 some_corrected || { head -c 600 "$WORK/spans.json"; fail "no corrected span in /api/v1/spans"; }
bad=$(python3 - "$WORK/spans.json" <<'PY'
import json, sys
day, cap = 86_400_000_000_000, 1_000_000_000
for s in json.load(open(sys.argv[1]))["spans"]:
    ok = s["send_ns"] > 0 and s["recv_ns"] > 0
    # b reads 24 h behind: a->b spans are about -24 h, b->a about +24 h.
    ok = ok and abs(abs(s["recv_ns"] - s["send_ns"]) - day) < 1_000_000_000
    if s["corrected"]:
        ok = ok and s["capped"] and abs(s["correction_ns"]) == cap and s["corrected_recv_ns"] > 0
        ok = ok and s["recv_ns"] - s["correction_ns"] == s["corrected_recv_ns"]
    if not ok:
        print(json.dumps(s))
PY
)
[ -z "$bad" ] || fail "spans with b 24 h behind: $bad"
note "b at -24h: $(jq '.spans | length' "$WORK/spans.json") spans with positive timestamps, \
$(jq '[.spans[] | select(.capped)] | length' "$WORK/spans.json") corrections capped at 1 s"
note "ok"
