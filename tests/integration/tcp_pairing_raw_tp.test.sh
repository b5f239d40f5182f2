#!/usr/bin/env bash
# tcp_pairing with the raw_tp variant forced: two BTF raw tracepoints (sys_enter, sys_exit)
# filtered by syscall number, the in-flight call in task-local storage.
export SKEWSCOPE_FORCE_VARIANT=raw_tp
source "$(dirname "$0")/tcp_pairing.test.sh"
source "$(dirname "$0")/tcp_pairing_variant.sh"
check_loaded_variant raw_tp ""
