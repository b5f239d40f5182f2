# Shared by tests/integration/exchange_*.test.sh (after lib.sh): a test Kafka on the root's
# loopback and several agents, each with its own log, control socket and URL. The agents run in
# the root namespace (they trace every namespace; --domain ...=netns:PATH selects), so they reach
# the Kafka at 127.0.0.1 directly.
KAFKA_TOOL=$BUILD/tests/tools/test_kafka
TOPIC=skewscope.halves.v1
KAFKA_FIFO=$WORK/kafka.fifo
KAFKA_OUT=$WORK/kafka.out
BOOTSTRAP=
declare -A AGENT_URLS AGENT_PIDS

start_kafka() {  # start_kafka PARTITIONS
  "$KAFKA_TOOL" --topic "$TOPIC:$1:3" --fifo "$KAFKA_FIFO" --bootstrap-file "$WORK/bootstrap" \
    >"$KAFKA_OUT" 2>"$WORK/kafka.err" &
  BACKGROUND+=($!)
  wait_until 10 test -s "$WORK/bootstrap" || fail "test_kafka printed no bootstrap"
  BOOTSTRAP=$(cat "$WORK/bootstrap")
  note "test kafka at $BOOTSTRAP"
}

kafka_cmd() {  # kafka_cmd LINE: one fault command, its one-line answer
  local before
  before=$(wc -l <"$KAFKA_OUT")
  echo "$1" >"$KAFKA_FIFO"
  answered() { test "$(wc -l <"$KAFKA_OUT")" -gt "$before"; }
  wait_until 10 answered || fail "no answer to '$1'"
  sed -n "$((before + 1))p" "$KAFKA_OUT"
}

start_named_agent() {  # start_named_agent NAME ARGS...: AGENT_URLS[NAME], AGENT_PIDS[NAME]
  local name=$1; shift
  "$SKEWSCOPE" agent --listen 127.0.0.1:0 --control-socket "$WORK/$name.sock" "$@" >"$WORK/agent-$name.log" 2>&1 &
  local pid=$!
  BACKGROUND+=($pid)
  AGENT_PIDS[$name]=$pid
  AGENT_URLS[$name]=$(agent_url_from_log "$pid" "$WORK/agent-$name.log" "agent $name")
}

agent_status() { curl -sf --max-time 5 "${AGENT_URLS[$1]}/api/v1/status" || echo '{}'; }

# pair_from AGENT SRC DST FIELD: that agent's view of a tcp pair ("none" when it does not report it)
pair_from() {
  agent_status "$1" | jq -r --arg s "$2" --arg d "$3" --arg f "$4" \
    '[.pairs[]? | select(.src==$s and .dst==$d and .transport=="tcp")][0][$f] // "none"'
}

# owned_total AGENT...: partitions owned, summed over the agents
owned_total() {
  local a total=0 n
  for a in "$@"; do
    n=$(agent_status "$a" | jq -r '.exchange.partitions | length? // 0')
    total=$((total + n))
  done
  echo $total
}

# exchange_settled PARTITIONS AGENT...: succeeds once the agents own the PARTITIONS of the exchange
# topic between them and each one reaches Kafka (use with wait_until).
exchange_settled() {
  local partitions=$1 a
  shift
  [ "$(owned_total "$@")" -eq "$partitions" ] || return 1
  for a in "$@"; do [ "$(agent_status "$a" | jq -r '.exchange.connected')" = true ] || return 1; done
}

# every_agent_owns AGENT...: succeeds when each agent owns a partition at least.
every_agent_owns() {
  local a
  for a in "$@"; do [ "$(agent_status "$a" | jq -r '.exchange.partitions | length')" -ge 1 ] || return 1; done
}

# wait_exchange_settled PARTITIONS AGENT...: the group forming at start, 60 s at most, else the test fails.
wait_exchange_settled() {
  wait_until 60 exchange_settled "$@" || fail "the exchange group did not settle (owned: $(owned_total "${@:2}") of $1)"
}

# On a failure: each agent's log, and from each one still up how it maps its stamps to the wall
# clock and each pair's shortest span (a negative span with one clock is read against these).
show_agent_logs() {
  local f name
  for f in "$WORK"/agent-*.log; do
    echo "--- $f"
    tail -15 "$f"
    name=${f##*/agent-}
    name=${name%.log}
    [ -n "${AGENT_URLS[$name]:-}" ] || continue
    agent_status "$name" | jq -c '{mapping: .clocks.realtime_mapping, shipping: .exchange.realtime_mapping,
      pairs: [.pairs[]? | [.src, .dst, .transport, .spans, .negative_spans, .min_span_seconds]]}' 2>/dev/null
  done
}

# The lab's exchange key (docs/security.md): the agents sign their records with it and accept only
# records signed with it.
new_exchange_key() {  # new_exchange_key PATH: a fresh HMAC key, owner-only like the agent demands
  (umask 077 && openssl rand -hex 32 >"$1")
}
EXCHANGE_KEY=$WORK/exchange.key
new_exchange_key "$EXCHANGE_KEY"

# healthy_owner SRC DST AGENT...: succeeds, setting OWNER, once one of the agents reports the pair
# SRC -> DST with health 1 (use with wait_until).
healthy_owner() {
  local src=$1 dst=$2 a
  shift 2
  for a in "$@"; do
    [ "$(pair_from $a $src $dst health)" = 1 ] && { OWNER=$a; return 0; }
  done
  return 1
}
