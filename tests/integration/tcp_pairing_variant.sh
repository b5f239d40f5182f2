# Sourced by tcp_pairing_<variant>.test.sh after tcp_pairing.test.sh ran with
# SKEWSCOPE_FORCE_VARIANT set: proof from the still-running agent's own descriptors (fdinfo
# prog_id, named by bpftool from BTF) that the forced variant is what it loaded.
#   check_loaded_variant VARIANT PROGRAM_SUFFIX   (raw_tp: one entry program, sys_enter_tcp;
#   sock_tp: its three socket-layer programs and no syscall program)
check_loaded_variant() {
  local variant=$1 suffix=$2 expected ids loaded
  if [ "$variant" = raw_tp ]; then
    expected=sys_enter_tcp
  elif [ "$variant" = sock_tp ]; then
    expected=$(printf '%s\n' sock_recv_end sock_send_begin sock_send_end)
  else
    expected=$(for call in write writev sendto sendmsg sendmmsg read readv recvfrom recvmsg recvmmsg; do
      echo "enter_${call}${suffix}"; done | sort)
  fi
  ids=$(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u | jq -s -c .)
  loaded=$(bpftool prog show --json | jq -r --argjson ids "$ids" \
    '.[] | select(.id as $i | any($ids[]; . == $i)) | .name | select(startswith("enter_") or startswith("sys_enter_") or startswith("sock_"))' | sort)
  [ "$loaded" = "$expected" ] || fail "agent's entry programs are not the $variant variant: $(echo $loaded)"
  note "agent loaded the $variant entry programs: $(echo $loaded)"
  local test=${0##*/}
  echo "${test%.test.sh}: 1 passed, 0 failed"
}
