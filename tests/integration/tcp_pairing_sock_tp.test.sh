#!/usr/bin/env bash
# tcp_pairing with the sock_tp variant forced: the socket-layer tracepoints (tcp_sendmsg_locked,
# sock_send_length, sock_recv_length) as tp_btf programs, no syscall hook at all.
export SKEWSCOPE_FORCE_VARIANT=sock_tp
source "$(dirname "$0")/tcp_pairing.test.sh"
source "$(dirname "$0")/tcp_pairing_variant.sh"
check_loaded_variant sock_tp ""
