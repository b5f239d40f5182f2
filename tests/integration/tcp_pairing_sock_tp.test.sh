#!/usr/bin/env bash
# tcp_pairing with the sock_tp variant forced: the socket-layer tracepoints (tcp_sendmsg_locked,
# sock_send_length, sock_recv_length) as tp_btf programs, no syscall hook at all.
export SKEWSCOPE_FORCE_VARIANT=sock_tp
source "$(dirname "$0")/tcp_pairing.test.sh"
source "$(dirname "$0")/tcp_pairing_variant.sh"
check_loaded_variant sock_tp ""

# The sock_tp programs read the caller's cgroup id from the task by plain loads, not through
# bpf_get_current_cgroup_id(): cgroup domains must still see every ping and its reply, by
# the ids the agent resolves from the cgroup paths.
agent_stop
CG=/sys/fs/cgroup/unified/skewscope-$RUN_ID
[ -d /sys/fs/cgroup/unified ] || CG=/sys/fs/cgroup/skewscope-$RUN_ID
remove_test_cgroups() {
  local rc=$?
  rmdir "$CG"/client "$CG"/server "$CG" 2>/dev/null || true
  return $rc
}
trap 'rc_=$?; set +e; remove_test_cgroups; (exit $rc_); cleanup' EXIT INT TERM
mkdir -p "$CG/client" "$CG/server"
start_agent --domain client=cgroup:"$CG/client" --domain server=cgroup:"$CG/server" --only-domains \
  --window 30s --send-max-age 2s
in_cgroup "$CG/server" ip netns exec "$LAB_NAME-h2" "$TRAFFIC" echo-server --listen $B:7100 --duration 60 >/dev/null &
server=$!
in_cgroup "$CG/client" ip netns exec "$LAB_NAME-h1" "$TRAFFIC" ping --connect $B:7100 --size 64 --count 500 >/dev/null
wait $server || true
sleep 0.5
note "cgroup domains: client->server $(field client server spans) spans, server->client $(field server client spans)"
[ "$(field client server spans)" -eq 500 ] || fail "expected 500 client->server spans by cgroup, got $(field client server spans)"
[ "$(field server client spans)" -eq 500 ] || fail "expected 500 replies by cgroup, got $(field server client spans)"
echo "tcp_pairing_sock_tp cgroup domains: 1 passed, 0 failed"
