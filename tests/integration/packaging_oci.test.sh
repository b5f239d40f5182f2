#!/usr/bin/env bash
# The OCI image (packaging/oci/build-image, from the Debian package) run by podman as root with
# exactly the DaemonSet's host namespaces, capabilities, security options and mounts
# (packaging/kubernetes/manifest.py podman-args; not --privileged) captures and pairs a lab's
# traffic as the bare binary does: the same checks as tcp_pairing's, on the container and then on
# the bare binary. Like a node, tracefs is mounted (in this test's private mount namespace).
source "$(dirname "$0")/node_mounts.sh"
source "$(dirname "$0")/lib.sh"

MANIFEST=$SOURCE/packaging/kubernetes/skewscope-daemonset.yaml
IMAGE=localhost/skewscope-test:$RUN_ID
# The control socket is in the host's /run (mounted as in the DaemonSet), so `skewscope simulate`
# from the host reaches the container.
SOCK=/run/skewscope-$RUN_ID.sock
CONTAINER=skewscope-$RUN_ID
podman_cleanup() {
  podman rm -f -t 3 "$CONTAINER" >/dev/null 2>&1 || true
  podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
  rm -f "$SOCK"
}
trap 'rc_=$?; set +e; podman_cleanup; (exit $rc_); cleanup' EXIT INT TERM

t0=$SECONDS
DEB=$("$SOURCE/scripts/package" "$BUILD" "$WORK") || fail "scripts/package failed"
"$SOURCE/packaging/oci/build-image" "$DEB" "$IMAGE" >/dev/null || fail "build-image failed"
note "image built in $((SECONDS - t0)) s (with the package): $(podman image inspect --format '{{.Size}}' "$IMAGE") bytes"
mapfile -t run_args < <("$SOURCE/packaging/kubernetes/manifest.py" podman-args "$MANIFEST")
note "podman run ${run_args[*]}"
printf '%s\n' "${run_args[@]}" | grep -qx -- --privileged && fail "the DaemonSet must not be privileged"

lab_up 2
B=10.77.0.2
mkdir -p "$WORK/etc"
cat >"$WORK/etc/agent.conf" <<CONF
listen = "127.0.0.1:0"
control-socket = "$SOCK"
domain = ["a=netns:$(netns_path 1)", "b=netns:$(netns_path 2)"]
only-domains = true
window = "5s"
send-max-age = "2s"
CONF

pings() {  # pings COUNT
  in_host 2 "$TRAFFIC" echo-server --listen $B:7000 --duration 60 >/dev/null &
  local server=$!
  in_host 1 "$TRAFFIC" ping --connect $B:7000 --size 64 --count "$1" >/dev/null
  wait $server || true
  sleep 0.5
}

# check_pairing WHAT CONTROL_SOCKET: tcp_pairing's checks of one clock, then of b 5 ms behind.
check_pairing() {
  pings 1000
  sleep 3  # unpaired sends age out after --send-max-age
  local spans back ratio
  spans=$(pair_field a b spans); back=$(pair_field b a spans); ratio=$(status_json | jq -r .capture.pairing_ratio)
  note "$1: a->b $spans spans, b->a $back, negative $(pair_field a b negative_spans)/$(pair_field b a negative_spans), pairing ratio $ratio"
  [ "$spans" -eq 1000 ] || fail "$1: expected exactly 1000 a->b spans, got $spans"
  [ "$back" -ge 1000 ] || fail "$1: replies b->a not paired"
  [ "$(pair_field a b negative_spans)" -eq 0 ] && [ "$(pair_field b a negative_spans)" -eq 0 ] ||
    fail "$1: negative spans with one shared clock"
  approx_ge "$ratio" 0.99 || fail "$1: pairing ratio $ratio below 0.99"
  [ "$(status_json | jq -r .capture.lost)" -eq 0 ] || fail "$1: events lost"
  "$SKEWSCOPE" simulate b=-5ms --control-socket "$2" >/dev/null || fail "$1: simulate"
  local neg0=$(pair_field a b negative_spans) sp0=$spans
  pings 500
  # One snapshot for all of this phase's checks: on a loaded machine a few status calls can
  # outlast the window.
  status_json >"$WORK/snap.json"
  snap() { jq -r --arg f "$1" '[.pairs[] | select(.src=="a" and .dst=="b" and .transport=="tcp")][0][$f] // "none"' "$WORK/snap.json"; }
  local neg=$(( $(snap negative_spans) - neg0 )) sp=$(( $(snap spans) - sp0 ))
  note "$1: b at -5ms: $neg of $sp a->b spans negative, state $(snap state)"
  [ "$sp" -ge 500 ] && [ "$neg" -ge $((sp * 99 / 100)) ] || fail "$1: expected ~all a->b spans negative"
  [ "$(snap state)" = violated ] || fail "$1: a->b should be violated"
}

# Settings of this machine's container runtime, not of the DaemonSet: crun refuses hybrid
# cgroup hierarchies (runc does not), and the limits podman would set by default exceed what this
# root may set.
runtime=()
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || runtime=(--runtime runc)
limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
podman "${runtime[@]}" run -d --name "$CONTAINER" "${limits[@]}" "${run_args[@]}" -v "$WORK/etc:/etc/skewscope:ro" \
  "$IMAGE" agent --config /etc/skewscope/agent.conf >/dev/null || fail "podman run"
port=
for _ in $(seq 1 100); do
  port=$(podman logs "$CONTAINER" 2>&1 | sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p')
  [ -n "$port" ] && break
  [ "$(podman inspect -f '{{.State.Running}}' "$CONTAINER")" = true ] || { podman logs "$CONTAINER"; fail "container exited"; }
  sleep 0.1
done
[ -n "$port" ] || { podman logs "$CONTAINER"; fail "containerised agent did not listen"; }
AGENT_URL=http://127.0.0.1:$port
check_pairing container "$SOCK"
podman "${runtime[@]}" stop -t 5 "$CONTAINER" >/dev/null
[ "$(podman inspect -f '{{.State.ExitCode}}' "$CONTAINER")" = 0 ] || fail "container did not exit 0 on SIGTERM"
podman rm "$CONTAINER" >/dev/null

# The bare binary, same configuration (lib's start_agent sets its own listen and control socket).
start_agent --config "$WORK/etc/agent.conf"
check_pairing "bare binary" "$CONTROL"
echo "packaging_oci: 1 passed, 0 failed"
