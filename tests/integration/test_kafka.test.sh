#!/usr/bin/env bash
# The test Kafka (tests/tools/test_kafka) with a third-party client (kcat), no root needed:
#  - 1000 keyed messages produced and consumed back exactly;
#  - `leader T P B` moves leadership (seen in kcat's metadata), traffic still flows;
#  - `down B` makes broker B refuse clients, messages produced meanwhile wait and all arrive after `up B`;
#  - malformed commands are answered with an error and the tool keeps serving.
source "$(dirname "$0")/lib.sh"

KAFKA_TOOL=$BUILD/tests/tools/test_kafka
TOPIC=skewscope.halves.v1
FIFO=$WORK/kafka.fifo
OUT=$WORK/kafka.out
command -v kcat >/dev/null || fail "kcat is not installed (scripts/setup installs it)"

"$KAFKA_TOOL" --topic $TOPIC:6:3 --fifo "$FIFO" --bootstrap-file "$WORK/bootstrap" >"$OUT" 2>"$WORK/kafka.err" &
BACKGROUND+=($!)
wait_until 10 test -s "$WORK/bootstrap" || fail "test_kafka printed no bootstrap"
BOOTSTRAP=$(cat "$WORK/bootstrap")
[ "$(head -1 "$OUT")" = "$BOOTSTRAP" ] || fail "stdout's first line is not the bootstrap"
note "bootstrap $BOOTSTRAP"

# wait_until runs its command again each time: a "$(...)" in its arguments would be read once.
lines_beyond() { [ "$(wc -l <"$OUT")" -gt "$1" ]; }
# kafka_cmd LINE: send one command, print its one-line answer.
kafka_cmd() {
  local before
  before=$(wc -l <"$OUT")
  echo "$1" >"$FIFO"
  wait_until 10 lines_beyond "$before" || fail "no answer to '$1'"
  sed -n "$((before + 1))p" "$OUT"
}
expect_ok() { local a; a=$(kafka_cmd "$1"); [ "${a%% *}" = ok ] || fail "'$1' answered '$a'"; }
expect_error() { local a; a=$(kafka_cmd "$1"); [[ $a == error:* ]] || fail "'$1' answered '$a'"; }

produce() {  # produce FIRST LAST: messages key-N:value-N
  seq "$1" "$2" | sed 's/.*/key-&:value-&/' | kcat -b "$BOOTSTRAP" -P -t $TOPIC -K: -X message.timeout.ms=60000
}
consume_all() {  # every message in the topic, sorted, as key:value
  timeout 60 kcat -b "$BOOTSTRAP" -C -t $TOPIC -o beginning -e -q -f '%k:%s\n' | sort
}
expected() { seq "$1" "$2" | sed 's/.*/key-&:value-&/' | sort; }
# broker_port B, leader_of P: from kcat's metadata listing.
broker_port() { kcat -b "$BOOTSTRAP" -L | sed -n "s/^ *broker $1 at [^:]*:\([0-9]*\).*/\1/p" | head -1; }
leader_of() { kcat -b "$BOOTSTRAP" -L -t $TOPIC | sed -n "s/^ *partition $1, leader \([0-9-]*\),.*/\1/p"; }

# 1. Produce and consume 1000 messages.
produce 1 1000
[ "$(consume_all)" = "$(expected 1 1000)" ] || fail "did not read back exactly messages 1..1000"
note "1000 produced, 1000 consumed"

# 2. Leadership move.
old=$(leader_of 0)
new=$((old % 3 + 1))
expect_ok "leader $TOPIC 0 $new"
leader_is() { [ "$(leader_of "$1")" = "$2" ]; }
wait_until 10 leader_is 0 "$new" || fail "partition 0 leader still $(leader_of 0), wanted $new"
note "partition 0 leader $old -> $new"
produce 1001 2000
[ "$(consume_all)" = "$(expected 1 2000)" ] || fail "messages lost or duplicated after the leader move"

# 3. A broker down: it refuses clients; what is produced meanwhile waits and arrives after up.
port=$(broker_port 1)
[ -n "$port" ] || fail "no port for broker 1"
expect_ok "down 1"
if timeout 10 kcat -b 127.0.0.1:"$port" -L -m 2 >/dev/null 2>&1; then fail "broker 1 answered while down"; fi
produce 2001 3000 2>"$WORK/producer.err" &  # it logs the refused connections
producer=$!
BACKGROUND+=($producer)
sleep 2
expect_ok "up 1"
wait $producer || fail "producer failed across down/up"
timeout 10 kcat -b 127.0.0.1:"$port" -L -m 5 >/dev/null 2>&1 || fail "broker 1 does not answer after up"
[ "$(consume_all)" = "$(expected 1 3000)" ] || fail "messages lost or duplicated across down/up"
note "broker 1 down 2 s then up: 3000 of 3000 consumed"

# 4. Bad commands are answered, never fatal; the coordinator can be moved.
expect_error "down 7"
expect_error "leader no.such.topic 0 1"
expect_error "leader $TOPIC 6 1"
expect_error "fly away"
expect_error "up"
expect_ok "coord skewscope 2"
[ "$(kafka_cmd bootstrap)" = "ok bootstrap $BOOTSTRAP" ] || fail "tool stopped serving after bad commands"

# 5. SIGTERM ends it cleanly.
pid=${BACKGROUND[0]}
kill -TERM "$pid"
wait "$pid" || fail "test_kafka exited $? on SIGTERM"
BACKGROUND=()
note "ok"
