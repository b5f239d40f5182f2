# What the ZeroMQ message tests share (source after lib.sh): the lab's ZeroMQ tool, the JeroMQ
# peer (jeromq_setup, then `jeromq HOST ARGS...`), and one agent's zmtp pair counts.
ZMQ_TOOL=$BUILD/tests/tools/zmq_messages
[ -x "$ZMQ_TOOL" ] || fail "$ZMQ_TOOL not built (SKEWSCOPE_BENCH)"
JEROMQ_JAR=/usr/share/java/jeromq.jar

# jeromq_setup: compiles tests/tools/jeromq/JeromqPeer.java against Debian's libjeromq-java.
jeromq_setup() {
  [ -r "$JEROMQ_JAR" ] || fail "$JEROMQ_JAR missing (Debian libjeromq-java; scripts/setup installs it)"
  command -v javac >/dev/null || fail "javac missing (Debian default-jdk-headless; scripts/setup installs it)"
  javac -cp "$JEROMQ_JAR" -d "$WORK/jeromq" "$SOURCE/tests/tools/jeromq/JeromqPeer.java" || fail "JeromqPeer does not compile"
}
# jeromq HOST ARGS...: the peer in lab host HOST. Small heaps: several JVMs on a shared machine.
jeromq() { in_host "$1" java -Xmx64m -XX:+UseSerialGC -cp "$JEROMQ_JAR:$WORK/jeromq" JeromqPeer "${@:2}"; }

zmtp_field() {  # zmtp_field SRC DST FIELD: of the agent's zmtp pair SRC -> DST, 0 when absent
  status_json | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="zmtp")][0][$f] // 0'
}
spans_reach() { [ "$(zmtp_field "$1" "$2" spans)" -ge "$3" ]; }
# settle SRC DST EXPECTED: the agent reads payloads every 20 ms while they come; wait (bounded) for the count, then
# a little longer, so that a count above EXPECTED (a made-up message) would show too.
settle() { wait_until 15 spans_reach "$@" || true; sleep 1; }
