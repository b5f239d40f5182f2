#!/usr/bin/env bash
# The client commands reach an agent served with --web.config.file (TLS + basic auth), on
# loopback, with a throwaway CA made here (docs/contract.md, "Reaching a secured agent"):
#   status, top --once and whatif succeed with --ca-file and --basic-auth-user/-password-file, with
#     the URL's userinfo (percent-decoded) and with SSL_CERT_FILE;
#   they exit 3 naming the cause for a closed port or an unknown host, naming TLS for an unknown CA, a plain-HTTP agent addressed with https:// and the
#     reverse, and naming the credentials for a wrong password or none; the password never shows;
#   bad flags (a password file others can read, a missing CA file, --cert without --key, a key that
#     is not PEM, credentials twice) exit 2 naming the flag.
source "$(dirname "$0")/lib.sh"

# expect_exit CODE CMD...: runs CMD (output to $WORK/out, $WORK/err), fails unless it exits CODE
expect_exit() {
  local want=$1 rc=0; shift
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$* exited $rc, expected $want"; }
}
expect_err() { grep -q -- "$1" "$WORK/err" || { cat "$WORK/err" >&2; fail "stderr does not say '$1'"; }; }
never_shows_password() {
  ! grep -q 's3cret' "$WORK/out" "$WORK/err" || fail "the password shows in the output"
}

# A CA, a server certificate it signs for 127.0.0.1, and a second CA that signed nothing here.
make_test_pki
# The password has characters a URL must escape ('@', ':', '%'); the bcrypt hash from libcrypt.
password='s3cret@:%x'
hash=$(python3 -W ignore -c "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))" "$password")
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prom: %s\n' \
  "$hash" >"$WORK/web.yml"
printf '%s\n' "$password" >"$WORK/password"
chmod 600 "$WORK/password"
printf 'wrong\n' >"$WORK/wrong-password"
chmod 600 "$WORK/wrong-password"

start_agent --web.config.file "$WORK/web.yml"
https=https://127.0.0.1:${AGENT_URL##*:}
userinfo_url=https://prom:s3cret%40%3A%25x@127.0.0.1:${AGENT_URL##*:}
auth=(--basic-auth-user prom --basic-auth-password-file "$WORK/password")
[ "$(curl -s --cacert "$WORK/test-ca.crt" -u "prom:$password" -o /dev/null -w '%{http_code}' "$https/api/v1/status")" = 200 ] ||
  fail "curl with the CA and the password does not get 200: the lab itself is wrong"

# A verdict (0 healthy, 1 not) with the status JSON on stdout: the agent was reached.
expect_verdict() {
  local rc=0
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } || { cat "$WORK/err" >&2; fail "$* exited $rc, expected a verdict (0 or 1)"; }
  jq -e '.pairs | type == "array"' "$WORK/out" >/dev/null || fail "$*: no status JSON"
}

# --- Reached: CA by flag, by SSL_CERT_FILE; credentials by flags, by URL userinfo.
expect_verdict "$SKEWSCOPE" status --agent "$https" --json --ca-file "$WORK/test-ca.crt" "${auth[@]}"
note "ok: status with --ca-file and a password file"
expect_verdict "$SKEWSCOPE" status --agent "$userinfo_url" --json --ca-file "$WORK/test-ca.crt"
note "ok: status with the URL's userinfo"
expect_verdict env SSL_CERT_FILE="$WORK/test-ca.crt" "$SKEWSCOPE" status --agent "$https" --json "${auth[@]}"
note "ok: status with SSL_CERT_FILE"
expect_verdict "$SKEWSCOPE" status --agent "$userinfo_url" --agent "$userinfo_url" --json --ca-file "$WORK/test-ca.crt"
jq -e '[.agents[] | select(.reachable == true)] | length == 2' "$WORK/out" >/dev/null || fail "merged status: not both reached"
never_shows_password
note "ok: merged status (the same agent twice), no password in the agents list"
expect_exit 0 "$SKEWSCOPE" top --once --json --agent "$https" --ca-file "$WORK/test-ca.crt" "${auth[@]}"
jq -e '.pairs | type == "array"' "$WORK/out" >/dev/null || fail "top --once --json: no status line"
expect_exit 0 "$SKEWSCOPE" whatif --clock-error gaussian:1ms --json --agent "$userinfo_url" --ca-file "$WORK/test-ca.crt"
jq -e 'type == "object"' "$WORK/out" >/dev/null || fail "whatif: no JSON"
note "ok: top --once and whatif"

# --- TLS failures: exit 3, saying TLS and why.
expect_exit 3 "$SKEWSCOPE" status --agent "$https" --ca-file "$WORK/other-ca.crt" "${auth[@]}"
expect_err "TLS: cannot verify the certificate of the agent at $https: unable to get local issuer certificate (trusting --ca-file $WORK/other-ca.crt)"
note "$(cat "$WORK/err")"
expect_exit 3 env SSL_CERT_FILE="$WORK/other-ca.crt" "$SKEWSCOPE" top --once --agent "$https" "${auth[@]}"
expect_err "TLS: cannot verify the certificate.*(trusting SSL_CERT_FILE $WORK/other-ca.crt"
expect_exit 3 env -u SSL_CERT_FILE -u SSL_CERT_DIR "$SKEWSCOPE" status --agent "$https" "${auth[@]}"
expect_err "TLS: cannot verify the certificate.*(trusting the system's CA store)"
expect_exit 3 "$SKEWSCOPE" status --agent "http://127.0.0.1:${AGENT_URL##*:}" "${auth[@]}"
expect_err "closed the connection without an HTTP answer (if it serves HTTPS, use https://)"
note "ok: unknown CA and plain HTTP to a TLS agent exit 3 naming TLS"

# --- Authentication failures: exit 3, saying which.
expect_exit 3 "$SKEWSCOPE" status --agent "$https" --ca-file "$WORK/test-ca.crt" \
  --basic-auth-user prom --basic-auth-password-file "$WORK/wrong-password"
expect_err "the agent at $https refused the credentials (HTTP 401)"
note "$(cat "$WORK/err")"
expect_exit 3 "$SKEWSCOPE" status --agent "https://prom:s3cret@127.0.0.1:${AGENT_URL##*:}" --ca-file "$WORK/test-ca.crt"
expect_err "refused the credentials"
never_shows_password
expect_exit 3 "$SKEWSCOPE" status --agent "$https" --ca-file "$WORK/test-ca.crt"
expect_err "the agent at $https needs credentials (HTTP 401)"
expect_exit 3 "$SKEWSCOPE" whatif --clock-error gaussian:1ms --agent "$https" --ca-file "$WORK/test-ca.crt"
expect_err "needs credentials"
note "ok: wrong and missing credentials exit 3 naming them"

# --- Unreachable, with the same options: exit 3 saying so, not TLS.
dead_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect_exit 3 "$SKEWSCOPE" status --agent "https://127.0.0.1:$dead_port" --ca-file "$WORK/test-ca.crt" "${auth[@]}"
expect_err "cannot reach the agent at https://127.0.0.1:$dead_port: connection refused or no route"
expect_exit 3 "$SKEWSCOPE" status --agent "https://prom:s3cret@bogus.invalid:9477" --ca-file "$WORK/test-ca.crt"
expect_err "cannot reach the agent at https://bogus.invalid:9477: cannot resolve 'bogus.invalid'"
never_shows_password
note "ok: a closed port and an unknown host exit 3 as unreachable"

# --- Bad flags: exit 2 naming the flag.
chmod 644 "$WORK/password"
expect_exit 2 "$SKEWSCOPE" status --agent "$https" --ca-file "$WORK/test-ca.crt" "${auth[@]}"
expect_err "readable or writable by other users"
chmod 600 "$WORK/password"
expect_exit 2 "$SKEWSCOPE" status --agent "$https" --ca-file "$WORK/missing.crt" "${auth[@]}"
expect_err "ca-file"
expect_exit 2 "$SKEWSCOPE" status --agent "$https" --cert "$WORK/server.crt" "${auth[@]}"
expect_err "--cert and --key go together"
printf 'not a key\n' >"$WORK/bad.key"
expect_exit 2 "$SKEWSCOPE" top --once --agent "$https" --cert "$WORK/server.crt" --key "$WORK/bad.key"
expect_err "--key"
expect_exit 2 "$SKEWSCOPE" status --agent "$https" --cert "$WORK/server.crt" --key "$WORK/other-ca.key"
expect_err "cannot load --cert"
expect_exit 2 "$SKEWSCOPE" status --agent "$userinfo_url" "${auth[@]}"
expect_err "credentials given twice"
never_shows_password
expect_exit 2 "$SKEWSCOPE" status --agent "$https" --basic-auth-user prom
expect_err "needs --basic-auth-password-file"
note "ok: bad flags exit 2"

# --- https:// to a plain-HTTP agent.
agent_stop
start_agent
expect_exit 3 "$SKEWSCOPE" status --agent "https://127.0.0.1:${AGENT_URL##*:}" --ca-file "$WORK/test-ca.crt"
expect_err "TLS: handshake with the agent"
note "$(cat "$WORK/err")"
expect_verdict "$SKEWSCOPE" status --agent "$AGENT_URL" --json
note "ok: https:// to a plain agent exits 3 naming the handshake; http:// still works"

# --- A client certificate (--cert/--key), where the agent's endpoint asks for one: the agent's
# web config has no client CA, so a TLS front that requires one (openssl s_server -Verify) serves
# the plain agent's own status JSON as a file.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=operator \
  -keyout "$WORK/client.key" -out "$WORK/client.csr" 2>/dev/null
openssl x509 -req -in "$WORK/client.csr" -CA "$WORK/test-ca.crt" -CAkey "$WORK/test-ca.key" -CAcreateserial \
  -days 1 -out "$WORK/client.crt" 2>/dev/null
mkdir -p "$WORK/www/api/v1"
curl -s "$AGENT_URL/api/v1/status" >"$WORK/www/api/v1/status"
front_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$WORK/www" && exec openssl s_server -quiet -WWW -accept "127.0.0.1:$front_port" -Verify 1 -verify_return_error \
  -CAfile "$WORK/test-ca.crt" -cert "$WORK/server.crt" -key "$WORK/server.key" >"$WORK/front.log" 2>&1) &
BACKGROUND+=($!)
wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$front_port" 2>/dev/null || fail "openssl s_server did not listen"
front=https://127.0.0.1:$front_port
expect_exit 3 "$SKEWSCOPE" status --agent "$front" --ca-file "$WORK/test-ca.crt"
expect_err "TLS: .*agent at $front"
expect_err "client certificate"
note "$(cat "$WORK/err")"
expect_verdict "$SKEWSCOPE" status --agent "$front" --json --ca-file "$WORK/test-ca.crt" \
  --cert "$WORK/client.crt" --key "$WORK/client.key"
note "ok: a front that requires a client certificate: refused without --cert/--key, reached with them"
note "ok"
