#!/usr/bin/env bash
# A policy's degraded mode reaches real receivers (docs/policies.md, "Degraded mode"): Debian's
# prometheus-alertmanager (POST /api/v2/alerts) and a plain JSON webhook (a small recorder here).
#  - met on a shared clock: nothing is sent;
#  - 5 ms of simulated error: violated, and after the hysteresis one firing alert, active in
#    Alertmanager with the policy's labels, and one firing webhook body with the evidence;
#  - the error removed: met again, the alert resolved (Alertmanager lists it no more and notifies
#    its own receiver "resolved"), the webhook told "resolved";
#  - a receiver that refuses connections: its deliveries fail, are counted and retried with
#    backoff, and the capture goes on meanwhile;
#  - a receiver that never answers holds neither the capture nor the agent's stop (exit 0 within
#    its 3 s shutdown deadline).
source "$(dirname "$0")/lib.sh"
# json_ok URL FILTER: the URL answers 200 with JSON that FILTER finds true (an empty or failed
# answer is false: jq -e alone accepts empty input).
json_ok() { local body; body=$(curl -sf --max-time 5 "$1") && [ -n "$body" ] && jq -e "$2" <<<"$body" >/dev/null; }
ALERTMANAGER=${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}
[ -x "$ALERTMANAGER" ] || fail "needs Alertmanager (Debian package prometheus-alertmanager)"

# The recorder: each POST's body is one line of $WORK/hooks/<last path segment>.jsonl.
mkdir -p "$WORK/hooks"
python3 - "$WORK/hooks" >"$WORK/recorder.log" 2>&1 <<'PY' &
import http.server, os, sys
folder = sys.argv[1]
class Recorder(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(os.path.join(folder, self.path.rsplit("/", 1)[-1] + ".jsonl"), "ab") as out:
            out.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
with open(os.path.join(folder, "port"), "w") as out:
    out.write(str(server.server_address[1]))
server.serve_forever()
PY
BACKGROUND+=("$!")
wait_until 10 test -s "$WORK/hooks/port" || fail "the recorder did not start"
HOOKS=http://127.0.0.1:$(cat "$WORK/hooks/port")
# A receiver that never answers: the kernel completes the handshake (backlog), nothing reads.
python3 - "$WORK/silent.port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(120)
PY
BACKGROUND+=("$!")
wait_until 10 test -s "$WORK/silent.port" || fail "the silent receiver did not start"

AM_PID=
stop_alertmanager() {
  [ -n "$AM_PID" ] || return 0
  kill "$AM_PID" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$AM_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$AM_PID" 2>/dev/null || true
  wait "$AM_PID" 2>/dev/null || true
}
trap 'rc_=$?; set +e; [ $rc_ -ne 0 ] && tail -20 "$WORK/alertmanager.log"; stop_alertmanager; (exit $rc_); cleanup' EXIT INT TERM
cat >"$WORK/alertmanager.yml" <<YAML
route:
  receiver: recorder
  group_by: [alertname, policy]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: recorder
    webhook_configs:
      - url: $HOOKS/alertmanager
        send_resolved: true
YAML
"$ALERTMANAGER" --config.file="$WORK/alertmanager.yml" --storage.path="$WORK/alertmanager-data" \
  --web.listen-address=127.0.0.1:0 --cluster.listen-address= >"$WORK/alertmanager.log" 2>&1 &
AM_PID=$!
AM=$(prometheus_style_url "$AM_PID" "$WORK/alertmanager.log" alertmanager)
wait_until 20 curl -sf --max-time 2 -o /dev/null "$AM/-/ready" || fail "alertmanager not ready"

cat >"$WORK/policies.yaml" <<YAML
policies:
  - name: audit
    tenant: payments
    precision: 1ms
    domains: [a, b]
    degraded:
      alertmanager: $AM
      webhook: $HOOKS/plain
  - name: unreachable-hook
    precision: 1ms
    domains: [a, b]
    degraded:
      webhook: http://127.0.0.1:1/refused
  - name: silent-hook
    precision: 1ms
    domains: [a, b]
    degraded:
      webhook: http://127.0.0.1:$(cat "$WORK/silent.port")/never
YAML
lab_up 2
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 2s --send-max-age 1s --policy-file "$WORK/policies.yaml"
policy() { curl -sf --max-time 5 "$AGENT_URL/api/v1/policies?policy=$1" | jq -c '.policies[0]'; }
metric() { curl -sf --max-time 5 "$AGENT_URL/metrics" | sed -n "s/^$1 //p"; }
am_alerts() { curl -sf --max-time 5 "$AM/api/v2/alerts" --get --data-urlencode 'filter=alertname="SkewscopePolicyNotMet"'; }
lines() { [ -f "$WORK/hooks/$1.jsonl" ] && wc -l <"$WORK/hooks/$1.jsonl" || echo 0; }
has_lines() { [ "$(lines "$1")" = "$2" ]; }  # evaluated on every try of wait_until
in_bg() { local i=$1; shift; ip netns exec "$LAB_NAME-h$i" "$@" & BACKGROUND+=("$!"); }
in_bg 2 "$TRAFFIC" echo-server --listen $B:7320 --duration 60 >/dev/null
sleep 0.3
in_bg 1 "$TRAFFIC" ping --connect $B:7320 --size 64 --rate 200 --duration 60 >/dev/null

# Met: the policy was unknown only before the first spans (under the hysteresis), nothing sent.
wait_until 10 json_ok "$AGENT_URL/api/v1/policies?policy=audit" '.policies[0].verdict == "met"' ||
  fail "audit should be met on a shared clock: $(policy audit)"
sleep 1
[ "$(lines plain)" = 0 ] && [ "$(am_alerts | jq length)" = 0 ] || fail "nothing should be sent while the policy is met"

# Violated: one firing alert after the hysteresis.
"$SKEWSCOPE" simulate --control-socket "$CONTROL" b=+5ms >/dev/null
wait_until 15 json_ok "$AM/api/v2/alerts" 'map(select(.labels.policy == "audit" and .status.state == "active")) | length == 1' ||
  fail "Alertmanager should hold one active alert for audit: $(am_alerts)"
alert=$(am_alerts | jq -c '.[0]')
note "Alertmanager: $(jq -c '{labels, state: .status.state, verdict: .annotations.verdict, reason: .annotations.reason}' <<<"$alert")"
jq -e --arg host "$(hostname)" '.labels.tenant == "payments" and .labels.instance != "" and .annotations.verdict == "violated"
  and .annotations.reason == "inversion" and (.generatorURL | endswith("/api/v1/policies"))' <<<"$alert" >/dev/null ||
  fail "the alert should carry the policy, tenant, verdict and reason: $alert"
wait_until 5 has_lines plain 1 || fail "the webhook should get one firing body, got $(lines plain)"
jq -e '.status == "firing" and .policy == "audit" and .tenant == "payments" and .state.verdict == "violated"
  and (.state.pairs[0].negative_spans > 0)' <"$WORK/hooks/plain.jsonl" >/dev/null ||
  fail "the webhook body should say firing with the evidence: $(cat "$WORK/hooks/plain.jsonl")"
wait_until 10 sh -c "test -s '$WORK/hooks/alertmanager.jsonl' && grep -q '\"status\":\"firing\"' '$WORK/hooks/alertmanager.jsonl'" ||
  fail "Alertmanager should notify its receiver of the firing alert"

# Resolved once met again (the window is 2 s, then the hysteresis).
"$SKEWSCOPE" simulate --control-socket "$CONTROL" b=0 >/dev/null
wait_until 15 has_lines plain 2 || fail "the webhook should get a resolved body: $(cat "$WORK/hooks/plain.jsonl")"
tail -1 "$WORK/hooks/plain.jsonl" | grep . | jq -e '.status == "resolved" and .state.verdict == "met" and (.resolved_at | type) == "string"' >/dev/null ||
  fail "the second body should say resolved: $(tail -1 "$WORK/hooks/plain.jsonl")"
wait_until 10 sh -c "[ \"\$(curl -sf --max-time 5 '$AM/api/v2/alerts' | jq 'map(select(.labels.policy == \"audit\")) | length')\" = 0 ]" ||
  fail "Alertmanager should no longer list the resolved alert: $(am_alerts)"
wait_until 10 grep -q '"status":"resolved"' "$WORK/hooks/alertmanager.jsonl" ||
  fail "Alertmanager should notify its receiver that the alert resolved"
delivered=$(metric 'skewscope_policy_webhook_deliveries_total{receiver="alertmanager",result="delivered"}')
[ "$delivered" -ge 2 ] || fail "fire and resolve should count as delivered to Alertmanager, got $delivered"

# The refusing receiver: failures counted and retried with backoff (1 s, 2 s, ...), capture unharmed.
failed=$(metric 'skewscope_policy_webhook_deliveries_total{receiver="webhook",result="failed"}')
note "deliveries: alertmanager delivered $delivered, webhook failed $failed"
[ "$failed" -ge 2 ] || fail "deliveries to a refusing receiver should fail, be counted and retried, got $failed"
[ "$failed" -le 16 ] || fail "retries should back off, not spin: $failed failures"
spans=$(status_json | jq '[.pairs[] | select(.src == "a" and .dst == "b")][0].spans')
sleep 1
[ "$(status_json | jq '[.pairs[] | select(.src == "a" and .dst == "b")][0].spans')" -gt "$spans" ] ||
  fail "the capture should go on while deliveries fail"

# A stop while the silent receiver may hold a POST: within the shutdown deadline, exit 0.
"$SKEWSCOPE" simulate --control-socket "$CONTROL" b=+5ms >/dev/null  # fire again: POSTs in flight
sleep 4
start_ns=$(date +%s%N)
kill "$AGENT_PID"
set +e; wait "$AGENT_PID"; rc=$?; set -e
AGENT_PID=
took_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
note "stopped in ${took_ms} ms with deliveries pending"
[ $rc -eq 0 ] || fail "the agent should stop cleanly with a receiver that never answers, exit $rc"
[ "$took_ms" -lt 3000 ] || fail "the stop took ${took_ms} ms: a receiver held it"
echo "policy_alertmanager: 1 passed, 0 failed"
