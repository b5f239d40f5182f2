#!/usr/bin/env bash
# tcp_pairing with the one-load-per-field BTF walk (bpf_rdonly_cast, Linux >= 6.2) forced.
export SKEWSCOPE_FORCE_VARIANT=btf
source "$(dirname "$0")/tcp_pairing.test.sh"
source "$(dirname "$0")/tcp_pairing_variant.sh"
check_loaded_variant btf ""
