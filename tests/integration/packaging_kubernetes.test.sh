#!/usr/bin/env bash
# The DaemonSet manifest: structure and references (manifest.py check: Debian 12 has no kubectl
# package, and `kubectl apply --dry-run=client` needs an API server for discovery anyway),
# its capabilities are exactly the systemd unit's (the set packaging_systemd proves enough and
# each needed; packaging_oci runs the image with the manifest's own flags), the host paths the
# agent needs are mounted, the ConfigMap's agent.conf is one the agent accepts, and the check
# refuses manifests that lose one of these.
source "$(dirname "$0")/lib.sh"

M=$SOURCE/packaging/kubernetes/skewscope-daemonset.yaml
TOOL=$SOURCE/packaging/kubernetes/manifest.py
"$TOOL" check "$M" || fail "manifest check"

unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$SOURCE/packaging/systemd/skewscope.service" | tr ' ' '\n' | sort)
manifest_caps=$("$TOOL" capabilities "$M" | sort)
note "DaemonSet capabilities: $(echo $manifest_caps); unit: $(echo $unit_caps)"
[ "$unit_caps" = "$manifest_caps" ] || fail "the DaemonSet's capabilities differ from the unit's"

args=$("$TOOL" podman-args "$M")
for want in --network=host --pid=host --cap-drop=all --security-opt=no-new-privileges \
  --volume=/sys/kernel/btf:/sys/kernel/btf:ro --volume=/sys/kernel/tracing:/sys/kernel/tracing:ro --volume=/run:/run; do
  grep -qxF -- "$want" <<<"$args" || fail "DaemonSet lacks $want"
done

# The ConfigMap's agent.conf: every key taken (the run stops at the command line's bad --window).
python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap": print(d["data"]["agent.conf"], end="")' "$M" >"$WORK/agent.conf"
set +e; out=$("$SKEWSCOPE" agent --config "$WORK/agent.conf" --window 0s 2>&1); rc=$?; set -e
[ $rc -eq 2 ] && grep -q -- "--window must be" <<<"$out" || fail "ConfigMap agent.conf: exit $rc: $out"

# The check refuses what would break the agent or its least privilege.
refused() {  # refused WHAT SED-EXPRESSION
  sed "$2" "$M" >"$WORK/bad.yaml"
  ! cmp -s "$M" "$WORK/bad.yaml" || fail "mutation '$1' changed nothing"
  if "$TOOL" check "$WORK/bad.yaml" 2>"$WORK/why"; then fail "check accepted a manifest with $1"; fi
  note "refused $1: $(head -1 "$WORK/why")"
}
refused "privileged" 's/privileged: false/privileged: true/'
refused "no tracefs mount" 's|path: /sys/kernel/tracing|path: /sys/kernel/debug/tracing|'
refused "no host network" 's/hostNetwork: true/hostNetwork: false/'
refused "no scrape annotation" 's/prometheus.io\/scrape: "true"/prometheus.io\/scrape: "false"/'
refused "a missing Secret key" 's/key: password/key: passwd/'
refused "a CAP_ prefixed capability" 's/add: \["BPF", "PERFMON"\]/add: ["CAP_BPF", "PERFMON"]/'
echo "packaging_kubernetes: 1 passed, 0 failed"
