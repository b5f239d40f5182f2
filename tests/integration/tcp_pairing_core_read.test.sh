#!/usr/bin/env bash
# The tcp_pairing checks (exact pair counts, inversions both ways) with the entry programs forced
# to the bpf_probe_read_kernel walk (BPF_CORE_READ), the variant kernels before 6.2 load;
# then the agent's loaded programs prove which variant ran.
export SKEWSCOPE_FORCE_VARIANT=core_read
source "$(dirname "$0")/tcp_pairing.test.sh"

# The agent is still running: the programs behind its descriptors (fdinfo prog_id) are the ones
# it loaded; bpftool names them from their BTF (full names).
expected=$(for call in write writev sendto sendmsg sendmmsg read readv recvfrom recvmsg recvmmsg; do
  echo "enter_${call}_core"; done | sort)
ids=$(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u | jq -s -c .)
loaded=$(bpftool prog show --json | jq -r --argjson ids "$ids" \
  '.[] | select(.id as $i | any($ids[]; . == $i)) | .name | select(startswith("enter_"))' | sort)
[ "$loaded" = "$expected" ] || fail "agent's entry programs are not the core_read variant: $(echo $loaded)"
note "agent loaded the core_read entry programs: $(echo $loaded)"
echo "tcp_pairing_core_read: 1 passed, 0 failed"
