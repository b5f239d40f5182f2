#!/usr/bin/env bash
# Added cost of the RDMA verbs capture per verb call, on the lab's hand-built provider (a QP
# connected to itself over loopback): post_send, poll_cq returning one completion, poll_cq
# returning none. Three runs without the agent, then three with `skewscope agent --rdma` (after
# one warm-up run, so that the provider's functions are probed and the QP is tracked).
#   bench/rdma/run.sh [CALLS]        prints one JSON line per run and the medians
#   CQ_EX=ts bench/rdma/run.sh ...   the same with an extended CQ asking for completion stamps,
#                                    polled with ibv_start_poll/next_poll/end_poll + ibv_wc_read_*
source "$(dirname "$0")/../lib.sh"
CALLS=${1:-200000}
PINGPONG=$BUILD/tests/tools/rdma_verbs_pingpong
one() { taskset -c 1 "$PINGPONG" --bench "$CALLS" ${CQ_EX:+--cq-ex "$CQ_EX"}; }
median() { jq -s "map(.$1) | sort | .[1]" "$2"; }
for _ in 1 2 3; do one; done | tee "$WORK/base.ndjson"
"$BUILD/agent/cli/skewscope" agent --listen 127.0.0.1:0 --control-socket "$WORK/ctl.sock" --rdma >"$WORK/agent.log" 2>&1 &
AGENT_PID=$!
for _ in $(seq 1 50); do grep -q "listening on" "$WORK/agent.log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/agent.log")
one >/dev/null; sleep 0.5
# An extended CQ's poll functions are learnt from its create_cq_ex, i.e. from the run after the
# one that taught the agent create_cq_ex: one more warm-up.
if [ -n "${CQ_EX:-}" ]; then one >/dev/null; sleep 0.5; fi
# BPF run time per program (kernel.bpf_stats_enabled, restored on exit): the programs' own share
# of the added cost; the rest is the uprobe trap (int3, single-step, return trampoline).
BPF_STATS_RESTORE=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for _ in 1 2 3; do one; done | tee "$WORK/agent.ndjson"
sleep 1
bpftool prog show -j | jq -c '.[] | select(.name | startswith("rdma_")) | select(.run_cnt > 0)
  | {program: .name, runs: .run_cnt, bpf_ns_per_run: (.run_time_ns / .run_cnt | floor)}'
curl -s "http://127.0.0.1:$port/api/v1/status" | jq -c '.rdma | {pairs, sends, recvs, untracked_connects, pairing_ratio, kernel}'
for f in post_send_ns poll_cq_with_completion_ns poll_cq_empty_ns; do
  b=$(median $f "$WORK/base.ndjson"); a=$(median $f "$WORK/agent.ndjson")
  echo "{\"call\":\"$f\",\"without_agent\":$b,\"with_agent\":$a,\"added_ns\":$((a - b))}"
done
