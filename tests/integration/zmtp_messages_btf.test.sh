#!/usr/bin/env bash
# zmtp_messages with a syscall variant forced (btf): the payload copy armed at the syscall's entry
# and taken at its exit, as kernels without the socket-layer tracepoints run it (the default on
# this kernel, sock_tp, copies at the socket layer instead).
export SKEWSCOPE_FORCE_VARIANT=btf
source "$(dirname "$0")/zmtp_messages.test.sh"
source "$(dirname "$0")/tcp_pairing_variant.sh"
check_loaded_variant btf ""
