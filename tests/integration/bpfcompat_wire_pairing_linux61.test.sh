#!/usr/bin/env bash
# wire_pairing as on Debian 12's Linux 6.1: the features that kernel lacks (bpf_rdonly_cast,
# bpf_cast_to_kern_ctx, the socket-layer tracepoints) hidden from the probe, so that the candidate
# tables choose the TCP core_read variant and the wire ctx variant (one wire_tc_ctx per lab
# namespace) by themselves, and every assertion of wire_pairing holds with them on this kernel.
export SKEWSCOPE_HIDE_FEATURES=rdonly_cast_kfunc,kern_ctx_kfunc,socket_tracepoints,sockops_tx_timestamping
source "$(dirname "$0")/wire_pairing.test.sh"
source "$(dirname "$0")/bpfcompat_wire_variant.sh"
check_wire_variant core_read ctx tc_egress
grep -q "kernel feature bpf_cast_to_kern_ctx kfunc callable from tc programs: hidden by SKEWSCOPE_HIDE_FEATURES" \
  "$WORK/agent.log" || fail "the agent's log does not say which features were hidden"
echo "bpfcompat_wire_pairing_linux61: 1 passed, 0 failed"
