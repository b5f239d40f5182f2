#!/usr/bin/env bash
# Message-level ZeroMQ spans (--payload-bytes): two lab hosts, one shared kernel clock.
#  - PUSH/PULL, many small messages sent as fast as libzmq takes them (coalesced into few
#    writes, read in few reads), some of several frames: zmtp spans a->b == messages sent;
#  - REQ/REP: zmtp spans == requests (a->b) and == replies (b->a);
#  - zero negative zmtp spans with one clock; b 100 ms behind: every a->b zmtp span negative;
#  - with the socket-layer family, the receivers' calls are not copied (one copy for both ends).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zmtp_lib.sh"

lab_up 2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 5s --payload-bytes 8192
B=10.77.0.2


# PUSH/PULL: 20000 one-frame messages of 8 bytes, then 3000 messages of 3 frames.
in_host 2 "$ZMQ_TOOL" pull --bind tcp://$B:7101 --count 23000 >"$WORK/pull.out" &
pull=$!
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7101 --count 20000 --size 8 >"$WORK/push1.out"
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7101 --count 3000 --size 5 --parts 3 >"$WORK/push2.out"
wait $pull || fail "PULL did not receive every message: $(cat "$WORK/pull.out")"
settle a b 23000
status_json >"$WORK/status1.json"
spans=$(zmtp_field a b spans)
note "push/pull: 23000 messages sent, $spans zmtp spans a->b; payload: $(jq -c '.payload' "$WORK/status1.json")"
[ "$spans" -eq 23000 ] || fail "expected 23000 zmtp spans a->b, got $spans"
[ "$(zmtp_field a b negative_spans)" -eq 0 ] || fail "negative zmtp span with one shared clock"
writes=$(jq -r '.payload.records' "$WORK/status1.json")
[ "$writes" -lt 23000 ] || fail "messages were not coalesced ($writes payload records for 23000 messages)"
# Both ends are this agent's: with the socket-layer family the receiver's calls are not copied
# (one copy for both ends), and every message still has its receive half from the sender's parse.
if jq -e '.capture_families.tcp.variant == "sock_tp"' "$WORK/status1.json" >/dev/null; then
  jq -e '.payload.zmtp.mirrored.calls_not_copied > 0 and .payload.zmtp.mirrored.calls > 0' "$WORK/status1.json" >/dev/null ||
    fail "sock_tp: no receive was mirrored: $(jq -c .payload.zmtp.mirrored "$WORK/status1.json")"
  jq -e '.payload.zmtp.mirrored.unresolved_calls == 0' "$WORK/status1.json" >/dev/null ||
    fail "mirrored calls left unresolved: $(jq -c .payload.zmtp.mirrored "$WORK/status1.json")"
fi

# REQ/REP: 2000 requests, 2000 replies, each one message (REQ adds an empty delimiter frame).
in_host 2 "$ZMQ_TOOL" rep --bind tcp://$B:7102 --count 2000 >"$WORK/rep.out" &
rep=$!
in_host 1 "$ZMQ_TOOL" req --connect tcp://$B:7102 --count 2000 --size 16 >"$WORK/req.out"
wait $rep || fail "REP did not answer every request"
settle b a 2000
ab=$(( $(zmtp_field a b spans) - spans )); ba=$(zmtp_field b a spans)
note "req/rep: 2000 requests -> $ab zmtp spans a->b, 2000 replies -> $ba zmtp spans b->a"
[ "$ab" -eq 2000 ] || fail "expected 2000 request spans a->b, got $ab"
[ "$ba" -eq 2000 ] || fail "expected 2000 reply spans b->a, got $ba"
[ "$(zmtp_field b a negative_spans)" -eq 0 ] || fail "negative zmtp span with one shared clock (b->a)"
note "zmtp min span a->b $(zmtp_field a b min_span_seconds) s"

# b 100 ms behind: every a->b message now looks received before it was sent. (Not 5 ms: on a
# loaded 2-CPU machine a saturated PULL falls behind by more than that, and such a span stays positive.)
"$SKEWSCOPE" simulate b=-100ms --control-socket "$CONTROL" >/dev/null
before=$(zmtp_field a b spans); neg_before=$(zmtp_field a b negative_spans)
in_host 2 "$ZMQ_TOOL" pull --bind tcp://$B:7103 --count 5000 >/dev/null &
pull=$!
in_host 1 "$ZMQ_TOOL" push --connect tcp://$B:7103 --count 5000 --size 8 >/dev/null
wait $pull || fail "PULL (skewed phase) did not receive every message"
settle a b $((before + 5000))
new=$(( $(zmtp_field a b spans) - before )); neg=$(( $(zmtp_field a b negative_spans) - neg_before ))
note "b at -100ms: $neg of $new a->b zmtp spans negative, health $(zmtp_field a b health)"
[ "$new" -eq 5000 ] || fail "expected 5000 zmtp spans in the skewed phase, got $new"
[ "$neg" -eq "$new" ] || fail "expected every a->b zmtp span negative"
[ "$(zmtp_field a b health)" = 0 ] || fail "a->b zmtp health should be 0"
note "ok"
