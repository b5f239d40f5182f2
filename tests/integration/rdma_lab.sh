# Sourced after lib.sh by the single-agent RDMA tests: two lab hosts (a = 10.77.0.1, b =
# 10.77.0.2), the lab's verbs test program, and one agent with --rdma watching both hosts; plus
# readers of its rdma status.
PINGPONG=$BUILD/tests/tools/rdma_verbs_pingpong
[ -x "$PINGPONG" ] || fail "build rdma_verbs_pingpong first (needs libibverbs-dev)"

lab_up 2
A=10.77.0.1
B=10.77.0.2
start_agent --domain a=netns:"$(netns_path 1)" --domain b=netns:"$(netns_path 2)" --only-domains \
  --window 30s --send-max-age 2s --rdma

rdma_field() { status_json | jq -r ".rdma.$1"; }
spans() {  # spans SRC DST FIELD: that rdma pair's field, 0 before it exists
  status_json | jq -r --arg s "$1" --arg d "$2" --arg f "$3" \
    '[.pairs[] | select(.src==$s and .dst==$d and .transport=="rdma")][0][$f] // 0'
}
