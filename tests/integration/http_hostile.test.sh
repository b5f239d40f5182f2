#!/usr/bin/env bash
# The HTTP endpoint under hostile and slow clients (loopback only, no lab):
#  - /api/v1/spans is off by default (404 naming the flag), on with --enable-spans-api;
#  - a second agent cannot take the port, an unresolvable --listen names the resolver's error;
#  - tests/tools/http_hostile: header floods rejected, no Range amplification, /metrics answered
#    within 1 s while 200 slow clients from 50 addresses are connected, bounded RSS growth;
#  - SIGTERM with 200 slow clients connected: the agent exits within 3 s;
#  - --web.config.file: HTTPS only, 401 without or with wrong credentials, 200 with them.
source "$(dirname "$0")/lib.sh"
HOSTILE=$BUILD/tests/tools/http_hostile

start_agent
port=${AGENT_URL##*:}

spans=$(curl -s -w ' %{http_code}' "$AGENT_URL/api/v1/spans?limit=1")
note "spans without the flag: $spans"
[ "${spans##* }" = 404 ] || fail "/api/v1/spans answered ${spans##* } without --enable-spans-api"
echo "$spans" | grep -q -- '--enable-spans-api' || fail "the 404 does not name --enable-spans-api"

out=$(timeout 10 "$SKEWSCOPE" agent --listen "127.0.0.1:$port" --control-socket "$WORK/second.sock" 2>&1) && rc=0 || rc=$?
note "second agent on port $port: exit $rc: $out"
[ "$rc" -ne 0 ] || fail "a second agent started on a port the first one holds"
echo "$out" | grep -q "Address already in use" || fail "port conflict not reported as such"
out=$(timeout 10 "$SKEWSCOPE" agent --listen bogus.invalid:1 --control-socket "$WORK/third.sock" 2>&1) && rc=0 || rc=$?
note "unresolvable listen address: exit $rc: $out"
[ "$rc" -ne 0 ] || fail "agent started on an unresolvable address"
echo "$out" | grep -q "cannot resolve 'bogus.invalid': Name or service not known" || fail "resolver failure not reported"
echo "$out" | grep -q "Success" && fail "resolver failure reported as Success"

"$HOSTILE" --target "127.0.0.1:$port" --pid "$AGENT_PID" | tee "$WORK/hostile.out" || fail "http_hostile found a failure"

# Shutdown while 200 slow clients hold connections.
"$HOSTILE" --target "127.0.0.1:$port" --slow 200 --hold-seconds 40 >"$WORK/hold.out" 2>&1 &
BACKGROUND+=($!)
wait_until 15 grep -q "^holding 200" "$WORK/hold.out" || { cat "$WORK/hold.out"; fail "could not hold 200 slow clients"; }
sleep 1
start_ns=$(date +%s%N)
kill -TERM "$AGENT_PID"
while kill -0 "$AGENT_PID" 2>/dev/null && [ $(($(date +%s%N) - start_ns)) -lt 10000000000 ]; do sleep 0.02; done
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
if kill -0 "$AGENT_PID" 2>/dev/null; then fail "agent still running 10 s after SIGTERM with 200 slow clients"; fi
wait "$AGENT_PID" && rc=0 || rc=$?
AGENT_PID=
note "SIGTERM with 200 slow clients connected: exited after $elapsed_ms ms (exit status $rc)"
[ "$elapsed_ms" -lt 3000 ] || fail "agent took $elapsed_ms ms to exit after SIGTERM (bound 3000 ms)"

start_agent --enable-spans-api
code=$(curl -s -o "$WORK/spans.json" -w '%{http_code}' "$AGENT_URL/api/v1/spans?limit=1")
[ "$code" = 200 ] || fail "/api/v1/spans answered $code with --enable-spans-api"
jq -e '.spans | type == "array"' "$WORK/spans.json" >/dev/null || fail "/api/v1/spans is not a span list"

# TLS and basic auth (exporter-toolkit web config); the bcrypt hash from Python's crypt (libcrypt).
kill "$AGENT_PID"; wait "$AGENT_PID" || true; AGENT_PID=
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/server.key" -out "$WORK/server.crt" 2>/dev/null
hash=$(python3 -W ignore -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))")
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prom: %s\n' \
  "$hash" >"$WORK/web.yml"
start_agent --web.config.file "$WORK/web.yml"
url=https://127.0.0.1:${AGENT_URL##*:}/metrics
code() { curl -s --cacert "$WORK/server.crt" -o /dev/null -w '%{http_code}' "$@" "$url" || true; }
[ "$(code)" = 401 ] || fail "no credentials: $(code) instead of 401"
[ "$(code -u prom:wrong)" = 401 ] || fail "wrong password not refused"
[ "$(code -u prom:s3cret)" = 200 ] || fail "right password refused"
plain=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${AGENT_URL##*:}/metrics" || true)
[ "$plain" != 200 ] || fail "plain HTTP served with tls_server_config"
printf 'basic_auth_users:\n  prom: plaintext\n' >"$WORK/bad.yml"
out=$(timeout 10 "$SKEWSCOPE" agent --listen 127.0.0.1:0 --web.config.file "$WORK/bad.yml" 2>&1) && rc=0 || rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "not a bcrypt hash" || fail "bad web config: exit $rc: $out"
note "ok"
