#!/usr/bin/env bash
# tcp_pairing with the bpf_probe_read_kernel walk (BPF_CORE_READ) forced: what kernels before 6.2 load.
export SKEWSCOPE_FORCE_VARIANT=core_read
source "$(dirname "$0")/tcp_pairing.test.sh"
source "$(dirname "$0")/tcp_pairing_variant.sh"
check_loaded_variant core_read _core
