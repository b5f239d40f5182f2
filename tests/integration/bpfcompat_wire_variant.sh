# Sourced by bpfcompat_wire_*.test.sh after a wire test ran with a fallback forced or a feature
# hidden: proof from the still-running agent (its status, and the programs its own descriptors
# hold, named by bpftool) that the expected candidates are what it loaded.
#   check_wire_variant TCP_VARIANT WIRE_VARIANT SEND_SIDE
check_wire_variant() {
  local tcp=$1 wire=$2 send=$3 ids loaded expected
  "$SKEWSCOPE" status --agent "$AGENT_URL" --json >"$WORK/families.json" || true
  jq -c .capture_families "$WORK/families.json"
  [ "$(jq -r .capture_families.tcp.variant "$WORK/families.json")" = "$tcp" ] || fail "TCP variant is not $tcp"
  [ "$(jq -r .capture_families.wire.variant "$WORK/families.json")" = "$wire" ] || fail "wire variant is not $wire"
  [ "$(jq -r .capture_families.wire_send.variant "$WORK/families.json")" = "$send" ] || fail "send side is not $send"
  ids=$(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u | jq -s -c .)
  loaded=$(bpftool prog show --json | jq -r --argjson ids "$ids" \
    '.[] | select(.id as $i | any($ids[]; . == $i)) | .name | select(startswith("wire_"))' | sort | uniq -c |
    awk '{ print $2 "x" $1 }' | tr '\n' ' ')
  if [ "$wire" = ctx ]; then
    # One instance per namespace of the named interfaces (two lab hosts).
    expected="wire_egress_ctxx2 wire_ingress_ctxx2 "
  else
    expected="wire_egressx1 wire_ingressx1 "
  fi
  [ "$send" = sock_ops ] && expected="${expected}wire_sockopsx1 "
  [ "$loaded" = "$expected" ] || fail "agent's wire programs are '$loaded', expected '$expected'"
  note "agent loaded TCP $tcp, wire $wire ($loaded), send side $send"
}
