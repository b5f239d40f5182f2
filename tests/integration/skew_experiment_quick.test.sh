#!/usr/bin/env bash
# The inference-pipeline experiment in quick mode: both transports at 0 and 50 ms of
# simulated skew on the inference host, the agent attached with its payload capture. bench/experiment
# itself asserts the rows at every level (app, kernel TCP, kafka_message, zmtp_message): outputs
# identical, zero negative spans at 0 ms on every hop, inversions and health 0 on the hops infer
# sends on at 50 ms. Results go to a temporary folder, never bench/results.
set -euo pipefail
SOURCE=${SKEWSCOPE_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}
export SKEWSCOPE_BUILD=${SKEWSCOPE_BUILD:-$SOURCE/build}
runs=$(mktemp -d /tmp/skewscope-experiment.XXXXXX)
trap 'rm -rf "$runs"' EXIT
# 6 s per run instead of --quick's 10: its 0-ms and 50-ms rows hold from the first hundred requests.
"$SOURCE/bench/experiment" --quick --duration 6s --runs "$runs"
echo "skew_experiment_quick: 1 passed, 0 failed"
