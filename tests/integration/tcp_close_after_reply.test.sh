#!/usr/bin/env bash
# A reply read together with the peer's FIN. The server reads the request,
# sends the reply and closes; the client reads after a pause, so one read returns the reply and
# consumes the FIN (which moves copied_seq one further). Then a churn of short connections in
# the same shape. On every capture variant, every request and every reply pairs, exactly.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tcp_shapes_lib.sh"

lab_up 2
B=10.77.0.2
SHAPED=200  # connections with a 20 ms pause before the read: reply and FIN always queued together
CHURN=2000  # connections in a row with a 1 ms pause

port=7300
for variant in "${TCP_VARIANTS[@]}"; do
  start_variant_agent "$variant" --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" \
    --only-domains --window 60s --send-max-age 2s
  total=0
  for shape in "$SHAPED 20" "$CHURN 1"; do
    read -r count pause <<<"$shape"
    port=$((port + 1))
    in_host 2 "$TRAFFIC" reply-close-server --listen $B:$port --size 100 --count "$count" --duration 60 \
      >"$WORK/server.out" &
    server=$!
    started=$SECONDS
    in_host 1 "$TRAFFIC" reply-close-client --connect $B:$port --size 100 --count "$count" --delay-ms "$pause" \
      >"$WORK/client.out"
    wait $server
    note "$variant: $(cat "$WORK/client.out") / $(cat "$WORK/server.out") in $((SECONDS - started)) s"
    grep -q "^reply-close-client: $count connections, $count complete replies$" "$WORK/client.out" ||
      fail "$variant: the client did not get every reply"
    total=$((total + count))
    expect_spans "$variant" "after $count connections (pause $pause ms)" a b "$total"
    expect_spans "$variant" "after $count connections (pause $pause ms)" b a "$total"
  done
  sleep 2.5  # --send-max-age: a send that never paired would be counted by now
  unpaired=$(status_json | jq -r '.capture.unpaired_sends')
  [ "$unpaired" = 0 ] || fail "$variant: $unpaired unpaired sends"
  agent_stop
done
echo "tcp_close_after_reply: 1 passed, 0 failed"
