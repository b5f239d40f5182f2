#!/usr/bin/env bash
# The agent as a Prometheus target, proven against Debian's promtool and prometheus (2.42):
#  - three lab hosts a, b, c; ZeroMQ traffic a->b and b->c at 200 msg/s; c's clock simulated 5 ms
#    behind (--simulate-clock c=-5ms), so b->c inverts and a->b stays healthy; --window 10s;
#  - (a) `promtool check metrics` accepts a live /metrics taken while the traffic flows, served as
#    text format 0.0.4, with HELP and TYPE for every family of the contract;
#  - (b) prometheus on a free loopback port, temporary config (job skewscope, scrape and rule
#    evaluation every 1 s) and data directory, loading packaging/prometheus/skewscope.rules.yml
#    unchanged (its SkewscopeCausalityLost has for: 30s, short enough here): its HTTP API shows
#    pair health b->c 0 and a->b 1 and the causality-lost alert *firing* for b->c only.
# Every wait is bounded; the trap stops prometheus and the traffic, removes the lab, the agent
# and the data directory. About 45 s.
source "$(dirname "$0")/lib.sh"

RULES=$SOURCE/packaging/prometheus/skewscope.rules.yml
command -v promtool >/dev/null && [ -x "$PROMETHEUS" ] || fail "needs Debian's prometheus (promtool, $PROMETHEUS)"
passed=0
ok() { passed=$((passed + 1)); note "ok: $*"; }

lab_up 3
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" \
  --domain c=netns:"$(netns_path 3)" --only-domains --simulate-clock c=-5ms --window 10s
B=10.77.0.2 C=10.77.0.3

# Steady traffic for the whole test, bounded at 120 s and stopped earlier by the trap.
in_host 2 "$TRAFFIC" zmq-pull --bind tcp://$B:7100 --duration 120 >"$WORK/pull_b.out" &
BACKGROUND+=($!)
in_host 3 "$TRAFFIC" zmq-pull --bind tcp://$C:7100 --duration 120 >"$WORK/pull_c.out" &
BACKGROUND+=($!)
in_host 1 "$TRAFFIC" zmq-push --connect tcp://$B:7100 --size 200 --rate 200 --duration 120 >"$WORK/push_ab.out" &
BACKGROUND+=($!)
in_host 2 "$TRAFFIC" zmq-push --connect tcp://$C:7100 --size 200 --rate 200 --duration 120 >"$WORK/push_bc.out" &
BACKGROUND+=($!)

pairs_as_expected() { [ "$(pair_field a b health)" = 1 ] && [ "$(pair_field b c health)" = 0 ]; }
wait_until 20 pairs_as_expected ||
  fail "agent: expected health a->b 1 and b->c 0, got $(pair_field a b health) and $(pair_field b c health)"
ok "agent sees a->b healthy, b->c inverted"

# (a) a live /metrics while the traffic flows
spans_before=$(pair_field b c spans)
curl -sS --max-time 5 -D "$WORK/metrics.headers" -o "$WORK/metrics.txt" "$AGENT_URL/metrics" || fail "scrape failed"
wait_until 10 eval '[ "$(pair_field b c spans)" -gt "$spans_before" ]' || fail "traffic b->c stopped"
grep -qi '^content-type: text/plain; version=0\.0\.4' "$WORK/metrics.headers" ||
  fail "content type is not text format 0.0.4: $(grep -i '^content-type' "$WORK/metrics.headers")"
ok "/metrics served as text/plain; version=0.0.4"
if ! promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1; then
  cat "$WORK/promtool.out"; fail "promtool check metrics rejected a live /metrics"
fi
ok "promtool check metrics exits 0 on a live /metrics ($(wc -c <"$WORK/metrics.txt") bytes)"
for family in skewscope_causality_health:gauge skewscope_pair_causality_health:gauge \
  skewscope_spans_total:counter skewscope_negative_spans_total:counter skewscope_negative_span_ratio:gauge \
  skewscope_span_min_seconds:gauge skewscope_clock_offset_seconds:gauge \
  skewscope_clock_offset_bound_seconds:gauge skewscope_events_total:counter \
  skewscope_events_lost_total:counter skewscope_build_info:gauge; do
  name=${family%%:*} type=${family#*:}
  grep -q "^# HELP $name " "$WORK/metrics.txt" || fail "no HELP for $name"
  grep -q "^# TYPE $name $type\$" "$WORK/metrics.txt" || fail "no TYPE $type for $name"
done
grep -q '^skewscope_pair_causality_health{src="b",dst="c"} 0$' "$WORK/metrics.txt" || fail "b->c health not 0 in /metrics"
ok "every contract family has HELP and TYPE"

# (b) a real Prometheus scraping the agent and evaluating the shipped rules
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: skewscope
    static_configs:
      - targets: ['${AGENT_URL#http://}']
EOF
promtool check config "$WORK/prometheus.yml" >"$WORK/check_config.out" 2>&1 ||
  { cat "$WORK/check_config.out"; fail "temporary prometheus config rejected"; }
start_prometheus "$WORK/prometheus.yml"
note "prometheus at $PROMETHEUS_URL, agent at $AGENT_URL"

hbc=none hab=none state=none
firing() {
  hbc=$(prom_value 'skewscope_pair_causality_health{job="skewscope",src="b",dst="c"}')
  hab=$(prom_value 'skewscope_pair_causality_health{job="skewscope",src="a",dst="b"}')
  state=$(prom_alert SkewscopeCausalityLost b c)
  [ "$hbc" = 0 ] && [ "$hab" = 1 ] && [ "$state" = firing ]
}
start=$SECONDS
wait_until 60 firing ||
  fail "after 60 s: prometheus health b->c $hbc, a->b $hab, SkewscopeCausalityLost b->c $state (want 0, 1, firing)"
ok "prometheus: health b->c 0, a->b 1; SkewscopeCausalityLost firing for b->c after $((SECONDS - start)) s"

[ "$(prom_alert SkewscopeCausalityLost a b)" = none ] || fail "SkewscopeCausalityLost raised for the healthy pair a->b"
[ "$(prom_value 'up{job="skewscope"}')" = 1 ] || fail "up{job=\"skewscope\"} is not 1"
[ "$(prom_value 'ALERTS{alertname=~"SkewscopeAgentDown|SkewscopeAgentAbsent"}')" = none ] || fail "an agent-down alert is raised"
ok "no causality alert for a->b, target up, no agent-down alert"

summary=$(prom_alert SkewscopeCausalityLost b c annotations.summary)
description=$(prom_alert SkewscopeCausalityLost b c annotations.description)
[ "$summary" = "Causality lost from b to c (agent ${AGENT_URL#http://})" ] || fail "summary: $summary"
[ "$(prom_alert SkewscopeCausalityLost b c labels.severity)" = critical ] || fail "severity label"
grep -Eq "[0-9.]+% of the pair's spans in the health window are negative" <<<"$description" ||
  fail "description lacks the negative span ratio: $description"
note "alert: $summary — $description"
ok "alert labels and annotations"

rules=$(curl -sf --max-time 5 "$PROMETHEUS_URL/api/v1/rules") || fail "GET /api/v1/rules"
[ "$(jq '[.data.groups[].rules[]] | length' <<<"$rules")" = "$(grep -c '^ *- alert:' "$RULES")" ] ||
  fail "prometheus did not load every rule of $RULES"
bad=$(jq -r '[.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.lastError // .health)"] | join("; ")' <<<"$rules")
[ -z "$bad" ] || fail "rules not evaluated cleanly: $bad"
ok "every rule loaded and evaluated without error"

# The span histograms, when the agent has them (bucket bounds are the agent's business).
if grep -q '^# TYPE skewscope_negative_span_magnitude_seconds histogram$' "$WORK/metrics.txt"; then
  n_bc=$(prom_value 'sum(skewscope_negative_span_magnitude_seconds_count{src="b",dst="c"})')
  n_ab=$(prom_value 'sum(skewscope_negative_span_magnitude_seconds_count{src="a",dst="b"})')
  d_ab=$(prom_value 'sum(skewscope_span_duration_seconds_count{src="a",dst="b"})')
  q_bc=$(prom_value 'histogram_quantile(0.5, sum by (le) (skewscope_negative_span_magnitude_seconds_bucket{src="b",dst="c"}))')
  note "histograms: negative magnitude count b->c $n_bc (median ~$q_bc s), a->b $n_ab; span duration count a->b $d_ab"
  approx_ge "$n_bc" 1 || fail "no negative span in the b->c magnitude histogram"
  [ "$n_ab" = none ] || [ "$n_ab" = 0 ] || fail "negative spans in the a->b magnitude histogram: $n_ab"
  approx_ge "$d_ab" 1 || fail "no span in the a->b duration histogram"
  ok "span histograms scraped: negative magnitudes on b->c only"
fi

echo "prometheus_scrape: $passed passed, 0 failed"
