#!/usr/bin/env bash
# packaging/prometheus/ passes Debian's promtool (2.42): the example configuration and the rule file
# it names are valid, the rules are, and the rules' unit tests (every alert firing and not firing)
# pass. Needs no privileges and no agent.
set -euo pipefail

SOURCE=${SKEWSCOPE_SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
DIR=$SOURCE/packaging/prometheus
passed=0 failed=0

check() {  # check NAME CMD...: run CMD, count it, show its output when it fails
  local name=$1 out; shift
  if out=$("$@" 2>&1); then
    passed=$((passed + 1)); echo "# ok: $name"
  else
    failed=$((failed + 1)); echo "# FAIL: $name"; echo "$out"
  fi
}

command -v promtool >/dev/null || { echo "FAIL: promtool not installed (apt-get install prometheus)" >&2; exit 1; }
cd "$DIR"  # rule_files in both files are relative to them
check "promtool check config prometheus.yml" promtool check config prometheus.yml
check "promtool check rules skewscope.rules.yml" promtool check rules skewscope.rules.yml
check "promtool test rules skewscope.rules.test.yml" promtool test rules skewscope.rules.test.yml

# Every alert of the rule file has a unit test expecting it firing and one expecting it quiet.
alerts=$(sed -n 's/^ *- alert: *\([A-Za-z0-9_]*\).*/\1/p' skewscope.rules.yml)
[ -n "$alerts" ] || { failed=$((failed + 1)); echo "# FAIL: no alert found in skewscope.rules.yml"; }
for alert in $alerts; do
  if grep -A1 'exp_labels:' skewscope.rules.test.yml | grep -q "alertname: $alert\$"; then
    passed=$((passed + 1)); echo "# ok: $alert has a firing test"
  else
    failed=$((failed + 1)); echo "# FAIL: $alert has no firing test in skewscope.rules.test.yml"
  fi
  if grep -A1 "alertname: $alert\$" skewscope.rules.test.yml | grep -q 'exp_alerts: \[\]'; then
    passed=$((passed + 1)); echo "# ok: $alert has a not-firing test"
  else
    failed=$((failed + 1)); echo "# FAIL: $alert has no not-firing test in skewscope.rules.test.yml"
  fi
done

echo "promtool_rules: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
