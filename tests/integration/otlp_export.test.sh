#!/usr/bin/env bash
# OTLP/HTTP trace export (docs/otlp.md), checked by an independent decoder: the test receiver
# (tests/tools/otlp-receiver) decodes every request with the OpenTelemetry project's own generated
# classes (npm @opentelemetry/otlp-transformer@0.52.1).
#  - a two-host lab with a ping: the spans the receiver decoded are the agent's paired spans, as
#    many as the status counts, with the very raw times /api/v1/spans gives, every attribute
#    present with its type, the sockets as network.peer.* (the sender) and network.local.*, the resource from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES, the
#    headers of OTEL_EXPORTER_OTLP_HEADERS, gzip;
#  - --otlp-metrics (OTEL_METRIC_EXPORT_INTERVAL=1000): the gauges the receiver decoded from
#    /v1/metrics carry each pair's health, state, offset, bound and Δt_min equal to the status JSON's;
#  - the receiver's first 3 answers are 503 with Retry-After: 1 (a storm): retried, counted, none lost;
#  - after `simulate b=-50ms` the a -> b spans arrive with skewscope.negative=true, state violated;
#  - with a policy covering a and b (--policy-file) every span carries skewscope.trusted (bool),
#    and once the policy is violated a ping's spans arrive trusted=false; without a policy the
#    attribute is absent;
#  - a receiver that accepts and never answers: the same ping takes no longer than with a live
#    one, every span still pairs, the status answers at once, the exporter's failures are counted;
#  - https: with --otlp-ca-file naming the receiver's CA every span arrives; with another CA the
#    certificate is refused, counted, and the error says so.
source "$(dirname "$0")/lib.sh"

RECEIVER_DIR=$SOURCE/tests/tools/otlp-receiver
[ -f "$RECEIVER_DIR/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ] ||
  fail "the test receiver's npm package is not installed: run scripts/setup (npm install in $RECEIVER_DIR)"
command -v node >/dev/null || fail "node is not installed: run scripts/setup"

SPANS=$WORK/received.jsonl
POINTS=$WORK/points.jsonl
: >"$SPANS"
: >"$POINTS"
node "$RECEIVER_DIR/receiver.js" --out "$SPANS" --port-file "$WORK/receiver.port" --metrics-out "$POINTS" \
  --fail-first 3 --fail-status 503 --retry-after 1 >"$WORK/receiver.log" 2>&1 &
RECEIVER_PID=$!
BACKGROUND+=("$RECEIVER_PID")
wait_until 10 test -s "$WORK/receiver.port" || { cat "$WORK/receiver.log"; fail "the OTLP receiver did not start"; }
RECEIVER=http://127.0.0.1:$(cat "$WORK/receiver.port")
receiver_stats() { curl -sf --max-time 2 "$RECEIVER/stats"; }

lab_up 2
B=10.77.0.2
cat >"$WORK/policies.yaml" <<'YAML'
policies:
  - name: otlp-lab
    precision: 10ms
    domains: [a, b]
YAML
OTEL_SERVICE_NAME=skewscope-otlp-test \
OTEL_RESOURCE_ATTRIBUTES="deployment.environment=lab%20one,service.name=overridden" \
OTEL_EXPORTER_OTLP_HEADERS="x-tenant=blue" OTEL_METRIC_EXPORT_INTERVAL=1000 \
  start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --enable-spans-api --otlp-endpoint "$RECEIVER" --otlp-compression gzip --policy-file "$WORK/policies.yaml" \
  --otlp-metrics

# ping_lab COUNT PORT: COUNT requests a -> b, each echoed back b -> a (2 x COUNT spans); prints seconds.
ping_lab() {
  in_host 2 "$TRAFFIC" echo-server --listen $B:"$2" --duration 60 >/dev/null &
  local server=$!
  BACKGROUND+=("$server")
  local t0 t1
  sleep 0.3
  t0=$(date +%s%N)
  in_host 1 "$TRAFFIC" ping --connect $B:"$2" --size 64 --count "$1" --rate 500 >"$WORK/ping.out"
  t1=$(date +%s%N)
  kill "$server" 2>/dev/null || true
  echo "scale=3; ($t1 - $t0) / 1000000000" | bc
}
status() { curl -sf --max-time 5 "$AGENT_URL/api/v1/status"; }
paired_spans() { status | jq '[.pairs[] | select(.transport == "tcp") | .spans] | add // 0'; }
otlp_field() { status | jq -r ".otlp.$1"; }
received() { wc -l <"$SPANS"; }
# For wait_until, which runs its command again and again: the values are read on each try.
paired_at_least() { [ "$(paired_spans)" -ge "$1" ]; }
failed_requests() { [ "$(otlp_field requests_failed)" -ge 1 ]; }

# --- A live receiver behind a 503 storm.
live_seconds=$(ping_lab 200 7000)
wait_until 15 paired_at_least 400 || fail "the agent paired $(paired_spans) spans, expected 400"
all_out() { [ "$(otlp_field spans_exported)" -eq "$(paired_spans)" ]; }
wait_until 20 all_out || { status | jq .otlp; receiver_stats; fail "not every paired span was exported"; }
paired=$(paired_spans)
[ "$(received)" -eq "$paired" ] || fail "the receiver decoded $(received) spans, the agent paired $paired"
stats=$(receiver_stats)
note "live receiver: ping of 200 in ${live_seconds}s; $paired spans paired, exported, decoded; receiver $stats"
[ "$(echo "$stats" | jq .refused)" -eq 3 ] || fail "the receiver refused $(echo "$stats" | jq .refused) requests, expected 3"
[ "$(echo "$stats" | jq .gzip)" -ge 1 ] || fail "no request came gzip-compressed"
retries=$(otlp_field retries)
[ "$retries" -ge 3 ] || fail "the agent counted $retries retries after 3 answers of 503"
metrics=$(curl -sf --max-time 5 "$AGENT_URL/metrics")
grep -q '^skewscope_otlp_retries_total [1-9]' <<<"$metrics" || fail "skewscope_otlp_retries_total not counted"
dropped=$(status | jq '[.otlp.spans_dropped[]] | add')
[ "$dropped" -eq 0 ] || { status | jq .otlp; fail "$dropped spans dropped with a live receiver"; }

# The raw times are exactly those of /api/v1/spans, every attribute present and typed.
curl -sf --max-time 5 "$AGENT_URL/api/v1/spans?limit=1024" >"$WORK/spans.json"
python3 - "$SPANS" "$WORK/spans.json" <<'PY' || fail "the decoded spans do not match the agent's"
import json, sys
received = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
api = json.load(open(sys.argv[2]))["spans"]
problems = []
want_times = sorted((s["send_ns"], s["recv_ns"], s["src"], s["dst"]) for s in api)
got_times = sorted((int(s["start"]), int(s["end"]), s["attributes"]["skewscope.src"]["value"],
                    s["attributes"]["skewscope.dst"]["value"]) for s in received)
if want_times != got_times:
    problems.append(f"raw times differ: {len(want_times)} in /api/v1/spans, {len(got_times)} decoded; "
                    f"first difference {next((w, g) for w, g in zip(want_times, got_times) if w != g)}")
types = {"skewscope.src": "stringValue", "skewscope.dst": "stringValue", "skewscope.transport": "stringValue",
         "skewscope.negative": "boolValue", "skewscope.state": "stringValue",
         "skewscope.timestamp_source": "stringValue", "skewscope.corrected": "boolValue", "skewscope.bytes": "intValue",
         "skewscope.trusted": "boolValue"}
optional = {"skewscope.offset": "doubleValue", "skewscope.offset_bound": "doubleValue",
            "skewscope.corrected_start_unix_nano": "intValue", "skewscope.corrected_end_unix_nano": "intValue",
            "skewscope.correction_capped": "boolValue"}
ids = set()
for s in received:
    a = s["attributes"]
    for key, t in types.items():
        if a.get(key, {}).get("type") != t:
            problems.append(f"{key}: {a.get(key)} (want {t})")
    for key, t in optional.items():
        if key in a and a[key]["type"] != t:
            problems.append(f"{key}: {a[key]} (want {t})")
    if a["skewscope.transport"]["value"] != "tcp" or s["kind"] != 0:
        problems.append(f"transport/kind: {a['skewscope.transport']} {s['kind']}")
    # The endpoints: the span ends at the receiver, so its peer is the sender's socket; the echo
    # server listens on b:7000.
    sender, receiver = ("10.77.0.1", "10.77.0.2") if a["skewscope.src"]["value"] == "a" else ("10.77.0.2", "10.77.0.1")
    ends = {k: a.get(k, {}).get("value") for k in ("network.peer.address", "network.local.address", "network.transport")}
    if ends != {"network.peer.address": sender, "network.local.address": receiver, "network.transport": "tcp"}:
        problems.append(f"endpoints of a span {a['skewscope.src']['value']} -> {a['skewscope.dst']['value']}: {ends}")
    server_port = a.get("network.local.port" if a["skewscope.src"]["value"] == "a" else "network.peer.port", {})
    if server_port != {"type": "intValue", "value": "7000"} or a.get("network.peer.port", {}).get("type") != "intValue":
        problems.append(f"ports: {a.get('network.peer.port')} {a.get('network.local.port')}")
    if "server.address" in a:
        problems.append(f"server.address claimed on a TCP span: {a['server.address']}")
    if a["skewscope.negative"]["value"] != (int(s["end"]) < int(s["start"])):
        problems.append(f"negative flag wrong: {s}")
    if a["skewscope.corrected"]["value"] and "skewscope.corrected_end_unix_nano" not in a:
        problems.append(f"corrected without corrected times: {s}")
    if len(s["traceId"]) != 32 or len(s["spanId"]) != 16 or set(s["traceId"]) == {"0"}:
        problems.append(f"bad ids: {s['traceId']} {s['spanId']}")
    ids.add(s["spanId"])
    r = s["resource"]
    if r.get("service.name", {}).get("value") != "skewscope-otlp-test":
        problems.append(f"service.name: {r.get('service.name')}")
    if r.get("deployment.environment", {}).get("value") != "lab one":
        problems.append(f"deployment.environment: {r.get('deployment.environment')}")
    if s["scope"]["name"] != "skewscope":
        problems.append(f"scope: {s['scope']}")
if len(ids) != len(received):
    problems.append(f"{len(received) - len(ids)} repeated span ids")
for p in problems[:10]:
    print(p)
sys.exit(1 if problems else 0)
PY
note "raw times equal /api/v1/spans'; attributes typed; resource from the OTEL_* environment"

# --- The gauges of the newest metrics request equal the status JSON's pairs. The traffic has
# stopped, so both read the same values unless a snapshot and the status straddle a change: tried
# again then.
metrics_match() {
  status >"$WORK/metrics-status.json" &&
    python3 - "$POINTS" "$WORK/metrics-status.json" >"$WORK/metrics-match.out" <<'PY'
import json, sys
points = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not points:
    print("no data point received"); sys.exit(1)
newest = max(p["request"] for p in points)
points = [p for p in points if p["request"] == newest]
pairs = json.load(open(sys.argv[2]))["pairs"]
problems = []
def point(name, pair):
    found = [p for p in points if p["name"] == name and p["attributes"]["skewscope.src"]["value"] == pair["src"]
             and p["attributes"]["skewscope.dst"]["value"] == pair["dst"]
             and p["attributes"]["skewscope.transport"]["value"] == pair["transport"]]
    if len(found) > 1: problems.append(f"{name}: {len(found)} points for one pair")
    return found[0] if found else None
for pair in pairs:
    for name, field in (("skewscope.pair.causality_health", "health"), ("skewscope.pair.offset", "offset_seconds"),
                        ("skewscope.pair.offset_bound", "offset_bound_seconds"),
                        ("skewscope.pair.delta_t_min", "delta_t_min_seconds")):
        p, want = point(name, pair), pair.get(field)
        if want is None:
            if p is not None: problems.append(f"{name} sent for {pair['src']}->{pair['dst']}, status has null")
        elif p is None or p["kind"] != "gauge" or p["valueType"] != "asDouble" or abs(p["value"] - want) > 1e-15:
            problems.append(f"{name} {pair['src']}->{pair['dst']}: {p and (p['kind'], p['valueType'], p['value'])}, status {want}")
    s = point("skewscope.pair.state", pair)
    if not s or s["attributes"].get("skewscope.state", {}).get("value") != pair["state"] or s["value"] != "1":
        problems.append(f"state {pair['src']}->{pair['dst']}: {s}, status {pair['state']}")
state_points = [p for p in points if p["name"] == "skewscope.pair.state"]
if len(state_points) != len(pairs): problems.append(f"{len(state_points)} state points, {len(pairs)} pairs")
if points[0]["resource"].get("service.name", {}).get("value") != "skewscope-otlp-test": problems.append("resource")
for p in problems[:10]: print(p)
print(f"request {newest}: {len(points)} data points, {len(pairs)} pairs")
sys.exit(1 if problems else 0)
PY
}
wait_until 8 metrics_match || { cat "$WORK/metrics-match.out"; status | jq .otlp.metrics; fail "the OTLP gauges differ from the status"; }
note "metrics: $(tail -1 "$WORK/metrics-match.out"), equal to the status; $(status | jq -c '.otlp.metrics | {snapshots_exported, data_points_exported, snapshots_dropped}')"
status | jq -e '.otlp.metrics | .snapshots_offered == .snapshots_exported + .snapshots_queued + .snapshots_sending
  + ([.snapshots_dropped[]] | add)' >/dev/null || { status | jq .otlp.metrics; fail "snapshots unaccounted for"; }

# --- b's clock 50 ms behind: the a -> b spans arrive negative, their pair violated. (A message
# that a loaded machine delays longer than that is truly positive: 2 of 100 are allowed.)
"$SKEWSCOPE" simulate b=-50ms --control-socket "$CONTROL" >/dev/null || fail "simulate refused"
before=$(received)
ping_lab 100 7001 >/dev/null
wait_until 15 paired_at_least $((paired + 200)) || fail "the agent did not pair the second ping"
all_out2() { [ "$(otlp_field spans_exported)" -eq "$(paired_spans)" ]; }
wait_until 20 all_out2 || { status | jq .otlp; fail "the second ping was not exported"; }
negatives=$(tail -n +$((before + 1)) "$SPANS" | jq -s '[.[] | select(.attributes["skewscope.src"].value == "a"
  and .attributes["skewscope.negative"].value == true and ((.end | tonumber) < (.start | tonumber)))] | length')
violated=$(tail -n +$((before + 1)) "$SPANS" | jq -s '[.[] | select(.attributes["skewscope.src"].value == "a"
  and .attributes["skewscope.state"].value == "violated")] | length')
mismatched=$(tail -n +$((before + 1)) "$SPANS" | jq -s '[.[] | select(.attributes["skewscope.negative"].value
  != ((.end | tonumber) < (.start | tonumber)))] | length')
note "after simulate b=-50ms: $negatives of 100 a -> b spans flagged negative, $violated with state violated"
[ "$mismatched" -eq 0 ] || fail "$mismatched spans whose skewscope.negative disagrees with their times"
[ "$negatives" -ge 98 ] || fail "$negatives of the 100 a -> b spans arrived flagged negative"
[ "$violated" -eq 100 ] || fail "only $violated of the 100 a -> b spans said their pair is violated"
[ "$(received)" -eq "$(paired_spans)" ] || fail "the receiver decoded $(received) spans, the agent paired $(paired_spans)"

# --- The policy covering a and b is violated now (the inversions): a ping sent after its verdict
# says so arrives with every span trusted=false, in both directions.
policy_violated() { curl -sf --max-time 5 "$AGENT_URL/api/v1/policies" | jq -e '.policies[0].verdict == "violated"' >/dev/null; }
wait_until 5 policy_violated || { curl -sf "$AGENT_URL/api/v1/policies" | jq .; fail "the policy did not turn violated"; }
before=$(received)
paired=$(paired_spans)
ping_lab 50 7005 >/dev/null
wait_until 15 paired_at_least $((paired + 100)) || fail "the agent did not pair the third ping"
wait_until 20 all_out2 || { status | jq .otlp; fail "the third ping was not exported"; }
untrusted=$(tail -n +$((before + 1)) "$SPANS" | jq -s '[.[] | select(.attributes["skewscope.trusted"].type == "boolValue"
  and .attributes["skewscope.trusted"].value == false)] | length')
note "policy violated: $untrusted of $(($(received) - before)) spans of the next ping arrived skewscope.trusted=false"
[ "$untrusted" -eq 100 ] || fail "$untrusted of the 100 spans of a violated policy's pair arrived trusted=false"

# --- A receiver that accepts and never answers: capture keeps its pace, the status its speed.
agent_stop
kill "$RECEIVER_PID" 2>/dev/null || true
python3 - "$WORK/blackhole.port" >"$WORK/blackhole.log" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # read nothing, answer nothing
PY
BACKGROUND+=("$!")
wait_until 10 test -s "$WORK/blackhole.port" || fail "the silent receiver did not start"
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --otlp-endpoint "http://127.0.0.1:$(cat "$WORK/blackhole.port")" --otlp-timeout 1s
dead_seconds=$(ping_lab 200 7002)
wait_until 15 paired_at_least 400 || fail "with a silent receiver the agent paired $(paired_spans) of 400 spans"
t0=$(date +%s%N)
status >"$WORK/status.json" || fail "no status with a silent receiver"
status_ms=$((($(date +%s%N) - t0) / 1000000))
wait_until 10 failed_requests || { status | jq .otlp; fail "no failed request counted"; }
note "silent receiver: ping of 200 in ${dead_seconds}s (live: ${live_seconds}s), status in ${status_ms} ms, \
otlp $(status | jq -c '{exported: .otlp.spans_exported, queued: .otlp.spans_queued, sending: .otlp.spans_sending, failed: .otlp.requests_failed}')"
[ "$(otlp_field spans_exported)" -eq 0 ] || fail "spans counted exported to a receiver that never answered"
awk -v d="$dead_seconds" -v l="$live_seconds" 'BEGIN { exit !(d <= l * 1.5 + 0.5) }' ||
  fail "the ping took ${dead_seconds}s with a silent receiver, ${live_seconds}s with a live one"
[ "$status_ms" -lt 1000 ] || fail "the status took ${status_ms} ms with a silent receiver"
# Every span offered is accounted for: exported, sampled out, queued, under way or dropped by reason.
status | jq -e '.otlp | .spans_offered == .spans_exported + .spans_sampled_out + .spans_queued + .spans_sending
  + ([.spans_dropped[]] | add)' >/dev/null || { status | jq .otlp; fail "spans unaccounted for"; }
agent_stop

# --- https, trusting the receiver's CA with --otlp-ca-file: every span arrives. Trusting another
# CA: the certificate is refused, and that is counted and said.
make_test_pki
TLS_SPANS=$WORK/tls.jsonl
: >"$TLS_SPANS"
node "$RECEIVER_DIR/receiver.js" --out "$TLS_SPANS" --port-file "$WORK/tls.port" \
  --tls-cert "$WORK/server.crt" --tls-key "$WORK/server.key" >"$WORK/tls-receiver.log" 2>&1 &
BACKGROUND+=("$!")
wait_until 10 test -s "$WORK/tls.port" || { cat "$WORK/tls-receiver.log"; fail "the https receiver did not start"; }
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --otlp-endpoint "https://127.0.0.1:$(cat "$WORK/tls.port")" --otlp-ca-file "$WORK/test-ca.crt"
ping_lab 50 7003 >/dev/null
wait_until 15 paired_at_least 100 || fail "the agent paired $(paired_spans) of 100 spans"
wait_until 20 all_out || { status | jq .otlp; fail "not every span was exported over https"; }
[ "$(wc -l <"$TLS_SPANS")" -eq "$(paired_spans)" ] || fail "the https receiver decoded $(wc -l <"$TLS_SPANS") spans"
with_trust=$(jq -s '[.[] | select(.attributes["skewscope.trusted"])] | length' "$TLS_SPANS")
[ "$with_trust" -eq 0 ] || fail "$with_trust spans carry skewscope.trusted with no policy covering their pair"
note "https with --otlp-ca-file: $(paired_spans) spans exported and decoded"
agent_stop
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --otlp-endpoint "https://127.0.0.1:$(cat "$WORK/tls.port")" --otlp-ca-file "$WORK/other-ca.crt"
ping_lab 20 7004 >/dev/null
wait_until 15 failed_requests || { status | jq .otlp; fail "a certificate of another CA was not refused"; }
error=$(otlp_field last_error)
note "https trusting another CA: $error"
case "$error" in *"not signed by a trusted CA"*) ;; *) fail "the refusal does not name the certificate: $error" ;; esac
[ "$(otlp_field spans_exported)" -eq 0 ] || fail "spans exported to a receiver whose certificate was refused"
agent_stop
note "ok"
