#!/usr/bin/env bash
# The live page at / in a real browser: headless Chromium (Debian's), in a lab host of its own
# (so it reaches nothing but the agent, through a unix-socket relay), loads the page of an agent
# behind --web.config.file basic auth, answers the challenge as a user would, and the test reads
# the DOM: hosts a and b drawn, the arrow a -> b ok with its labels, then drawn violated within
# 2 s of `simulate b=-5ms`. A screenshot goes to $SKEWSCOPE_ARTIFACTS (else build/artifacts).
# Several agents: a second agent (no auth) names the same two hosts c and d, and the page's agent
# is started with --peer-agent naming it: the page draws a, b, c and d, both agents reachable
# (GET /api/v1/merged, merged by the code of `skewscope status --agent A --agent B`).
source "$(dirname "$0")/lib.sh"

command -v chromium >/dev/null || fail "chromium is not installed: run scripts/setup"
ARTIFACTS=${SKEWSCOPE_ARTIFACTS:-$BUILD/artifacts}
mkdir -p "$ARTIFACTS"

# Basic auth: the bcrypt hash from libcrypt, as the other tests of --web.config.file make it.
password='picture-p@ss'
hash=$(python3 -W ignore -c "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))" "$password")
printf 'basic_auth_users:\n  viewer: %s\n' "$hash" >"$WORK/web.yml"

lab_up 3  # hosts 1 and 2 talk; host 3 runs the browser
B=10.77.0.2
"$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/peer.sock" --window 10s \
  --domain c=netns:"$(netns_path 1)" --domain d=netns:"$(netns_path 2)" --only-domains >"$WORK/peer.log" 2>&1 &
PEER_PID=$!
BACKGROUND+=("$PEER_PID")
PEER_URL=$(agent_url_from_log "$PEER_PID" "$WORK/peer.log" "the peer agent")
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --web.config.file "$WORK/web.yml" --window 10s --peer-agent "$PEER_URL"

# Without credentials the page is refused, with them it is the page and its script.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$AGENT_URL/")
[ "$code" = 401 ] || fail "GET / without credentials answered $code, expected 401"
page=$(curl -sf --max-time 5 -u "viewer:$password" "$AGENT_URL/") || fail "GET / with credentials failed"
grep -q '<svg id="picture"' <<<"$page" || fail "GET / is not the live page"
curl -sf --max-time 5 -u "viewer:$password" -D "$WORK/js.headers" "$AGENT_URL/page.js" -o "$WORK/page.js" ||
  fail "GET /page.js failed"
grep -qi '^content-type: text/javascript' "$WORK/js.headers" || fail "page.js served as $(grep -i content-type "$WORK/js.headers")"
cmp -s "$WORK/page.js" "$SOURCE/agent/api/page/page.js" || fail "the served page.js is not agent/api/page/page.js"

# Steady traffic both ways for the whole test.
in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 60 >/dev/null &
BACKGROUND+=("$!")
sleep 0.3
in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --rate 200 --duration 45 >/dev/null &
BACKGROUND+=("$!")

# The merged view: the peer's pairs beside the agent's own, each kept from the agent that reported it.
merged_has_both() {
  curl -sf --max-time 5 -u "viewer:$password" "$AGENT_URL/api/v1/merged" | jq -e --arg peer "$PEER_URL" '
    ([.pairs[] | select(.src == "c" and .dst == "d" and .agent == $peer)] | length) >= 1 and
    ([.pairs[] | select(.src == "a" and .dst == "b")] | length) >= 1 and
    ([.agents[] | select(.reachable)] | length) == 2' >/dev/null
}
wait_until 10 merged_has_both || { curl -s -u "viewer:$password" "$AGENT_URL/api/v1/merged" | jq -c '{agents, pairs: [.pairs[] | {src, dst, agent}]}';
  fail "GET /api/v1/merged does not hold both agents' pairs"; }
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$AGENT_URL/api/v1/merged")
[ "$code" = 401 ] || fail "GET /api/v1/merged without credentials answered $code, expected 401"

# The browser's host reaches the agent only through this relay: a unix socket is not in any
# network namespace, so host 3 needs no route out of the lab.
socat UNIX-LISTEN:"$WORK/agent.sock",fork TCP:127.0.0.1:"${AGENT_URL##*:}" 2>"$WORK/relay-root.log" &
BACKGROUND+=("$!")
in_host 3 socat TCP-LISTEN:9477,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$WORK/agent.sock" 2>"$WORK/relay-h3.log" &
BACKGROUND+=("$!")
wait_until 10 test -S "$WORK/agent.sock" || fail "the relay did not start"

# Chromium: no sandbox (root), a profile of its own, nothing in the background that would call out.
in_host 3 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --user-data-dir="$WORK/chrome" --remote-debugging-port=0 --remote-allow-origins='*' \
  --no-first-run --disable-background-networking --disable-component-update --disable-sync \
  --disable-default-apps --disable-extensions about:blank >"$WORK/chrome.log" 2>&1 &
BACKGROUND+=("$!")

shot=$ARTIFACTS/picture_live.png
result=$(in_host 3 /usr/bin/python3 "$SOURCE/tests/integration/picture_cdp.py" "$WORK/chrome/DevToolsActivePort" \
  "http://127.0.0.1:9477/" viewer "$password" a b "$shot" -- \
  "$SKEWSCOPE" simulate b=-5ms --control-socket "$CONTROL") || {
  echo "$result"; tail -5 "$WORK/chrome.log"; fail "the browser check failed"; }
note "browser: $result"
note "screenshot: $shot ($(stat -c %s "$shot") bytes)"

echo "$result" | jq -e '.hosts == ["a", "b", "c", "d"]' >/dev/null ||
  fail "hosts drawn (this agent's a, b and its peer's c, d): $(echo "$result" | jq -c .hosts)"
echo "$result" | jq -e '.arrows >= 4' >/dev/null || fail "fewer than 4 arrows drawn (2 per agent)"
echo "$result" | jq -e '.agents_reachable == "2"' >/dev/null ||
  fail "the page's agents line says $(echo "$result" | jq -c .agents_reachable) reachable, expected 2"
echo "$result" | jq -e '.auth_challenges >= 1' >/dev/null || fail "the page was not behind basic auth"
echo "$result" | jq -e '.label | test("Δt_min")' >/dev/null || fail "no Δt_min on the arrows"
echo "$result" | jq -e '.label | test("θ |offset")' >/dev/null || fail "no offset on the arrows"
echo "$result" | jq -e '.sparklines >= 2' >/dev/null || fail "no sparkline per pair"
echo "$result" | jq -e '.row_state == "violated"' >/dev/null || fail "the table row of a -> b is not violated"
echo "$result" | jq -e '.violated_after_seconds <= 2' >/dev/null ||
  fail "the arrow turned violated $(echo "$result" | jq .violated_after_seconds) s after simulate (limit 2 s)"
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
note "ok"
