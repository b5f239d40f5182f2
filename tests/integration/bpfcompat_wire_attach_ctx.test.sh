#!/usr/bin/env bash
# wire_attach_cycle with the ctx tc variant forced: its programs (one instance per namespace) are
# attached only where named, recognised as ours after a SIGKILL (their kernel names are cut to 15
# characters) and leave nothing behind.
export SKEWSCOPE_FORCE_WIRE_VARIANT=ctx
source "$(dirname "$0")/wire_attach_cycle.test.sh"
echo "bpfcompat_wire_attach_ctx: 1 passed, 0 failed"
