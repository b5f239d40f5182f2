#!/usr/bin/env bash
# Payload capture scoped to the domains (--only-domains), call by call: the kernel side keeps
# with a followed socket's verdict what put it in scope (the caller's cgroup, or the socket's
# network namespace), and must still refuse the calls that scope does not cover.
#  - cgroup domain: a ZMTP socket opened in it is copied; its calls from a forked child moved to
#    a cgroup that is no domain are not copied and are counted (outside_domain_calls), exactly;
#    the parent's calls after the child's are copied again;
#  - namespace domain: the same calls are all copied, whoever makes them (the socket's namespace
#    is the domain), and none is counted outside.
source "$(dirname "$0")/lib.sh"
trap 'rc_=$?; set +e; remove_test_cgroups; (exit $rc_); cleanup' EXIT INT TERM
make_test_cgroups inside elsewhere
lab_up 2
B=10.77.0.2

# The peer: reads everything, in host 2 (no domain in either phase).
cat >"$WORK/sink.py" <<'EOF'
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((sys.argv[1], int(sys.argv[2])))
server.listen(1)
print("ready", flush=True)
conn, _ = server.accept()
while conn.recv(65536):
    pass
EOF
# The client: a ZMTP 3.0 greeting, then PARENT_BEFORE sends, CHILD sends from a forked child that
# first moves itself to another cgroup, then PARENT_AFTER sends; every send is one call.
cat >"$WORK/client.py" <<'EOF'
import os, socket, sys, time
host, port, child_cgroup = sys.argv[1], int(sys.argv[2]), sys.argv[3]
before, child, after = (int(n) for n in sys.argv[4:7])
s = socket.create_connection((host, port))
greeting = b"\xff" + bytes(8) + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\0") + bytes(32)
assert len(greeting) == 64
s.sendall(greeting)
def sends(n):
    for i in range(n):
        s.send(bytes([0, 4]) + b"%4d" % i)  # a short 4-byte frame per call
        time.sleep(0.01)
sends(before)
pid = os.fork()
if pid == 0:
    with open(os.path.join(child_cgroup, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    sends(child)
    os._exit(0)
_, status = os.waitpid(pid, 0)
if status != 0:
    sys.exit("the child failed")
sends(after)
s.close()
EOF

port=7600
# run_client DOMAIN_ARGS...: one agent, one connection; leaves the agent's status in $WORK/status.json.
run_client() {
  start_agent "$@" --only-domains --payload-bytes 256
  grep -q "(variant $SKEWSCOPE_FORCE_VARIANT)" "$WORK/agent.log" || fail "not the $SKEWSCOPE_FORCE_VARIANT variant: $(head -1 "$WORK/agent.log")"
  port=$((port + 1))
  # A file per sink: the redirection happens in the child, after which the wait below could
  # otherwise still read the previous sink's "ready".
  in_host 2 python3 "$WORK/sink.py" $B $port >"$WORK/sink.$port" &
  local sink=$!
  wait_until 10 grep -q ready "$WORK/sink.$port" || fail "the sink did not start"
  # nsenter, not ip netns exec: that remounts /sys, where the child finds its cgroup.
  in_cgroup "$CG/inside" nsenter --net="$(netns_path 1)" python3 "$WORK/client.py" $B $port "$CG/elsewhere" 10 7 5 ||
    fail "the client failed"
  wait $sink || fail "the sink failed"
  sleep 0.5
  status_json >"$WORK/status.json"
  agent_stop
  jq -c '.payload | {submitted, sockets, outside_domain_calls}' "$WORK/status.json"
}
field() { jq -r ".payload.$1" "$WORK/status.json"; }

# Both ways a verdict is read: the socket layer's typed programs (sock_tp) and a syscall family
# (btf: the socket found from the fd, the cgroup asked of a helper).
for variant in sock_tp btf; do
  export SKEWSCOPE_FORCE_VARIANT=$variant
  # Phase 1: the client's cgroup is the domain.
  run_client --domain client=cgroup:"$CG/inside"
  [ "$(field sockets.zmtp)" -eq 1 ] || fail "$variant, cgroup domain: expected one ZMTP socket, got $(field sockets.zmtp)"
  [ "$(field outside_domain_calls)" -eq 7 ] ||
    fail "$variant, cgroup domain: the child's 7 calls should be counted outside, got $(field outside_domain_calls)"
  [ "$(field submitted)" -eq 16 ] ||
    fail "$variant, cgroup domain: expected 16 records (greeting, 10 before, 5 after), got $(field submitted)"

  # Phase 2: the client's network namespace is the domain: the child's calls are inside too.
  run_client --domain h1=netns:"$(netns_path 1)"
  [ "$(field sockets.zmtp)" -eq 1 ] || fail "$variant, netns domain: expected one ZMTP socket, got $(field sockets.zmtp)"
  [ "$(field outside_domain_calls)" -eq 0 ] || fail "$variant, netns domain: no call is outside, got $(field outside_domain_calls)"
  [ "$(field submitted)" -eq 23 ] ||
    fail "$variant, netns domain: expected 23 records (greeting, 10, the child's 7, 5), got $(field submitted)"
done
note "ok"
