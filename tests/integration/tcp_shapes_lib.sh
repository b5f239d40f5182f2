# Sourced by the tcp_*.test.sh of real services' traffic shapes (after lib.sh): the same shape on
# every TCP capture variant, one agent per variant, each proven to be the variant it claims.
TCP_VARIANTS=(sock_tp btf core_read raw_tp)

# The entry programs the running agent holds (its fdinfo prog_ids, named by bpftool), sorted.
agent_entry_programs() {
  local ids
  ids=$(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u | jq -s -c .)
  bpftool prog show --json | jq -r --argjson ids "$ids" \
    '.[] | select(.id as $i | any($ids[]; . == $i)) | .name | select(startswith("enter_") or startswith("sys_enter_") or startswith("sock_"))' |
    sort
}

# start_variant_agent VARIANT AGENT_ARGS...: the agent with SKEWSCOPE_FORCE_VARIANT=VARIANT, and
# proof that it loaded that variant's entry programs. bpftool's listing can fail while the last
# agent's programs are still being freed: retried for a few seconds.
start_variant_agent() {
  local variant=$1 suffix=
  shift
  SKEWSCOPE_FORCE_VARIANT=$variant start_agent "$@"
  case $variant in
    sock_tp) EXPECTED_PROGRAMS=$(printf '%s\n' sock_recv_end sock_send_begin sock_send_end) ;;
    raw_tp) EXPECTED_PROGRAMS=sys_enter_tcp ;;
    *)
      [ "$variant" = core_read ] && suffix=_core
      EXPECTED_PROGRAMS=$(for call in write writev sendto sendmsg sendmmsg read readv recvfrom recvmsg recvmmsg; do
        echo "enter_${call}${suffix}"; done | sort) ;;
  esac
  wait_until 10 loaded_as_expected ||
    fail "forced $variant, but the agent loaded: $(agent_entry_programs 2>&1 | tr '\n' ' ')"
}
loaded_as_expected() { [ "$(agent_entry_programs 2>/dev/null)" = "$EXPECTED_PROGRAMS" ]; }

# spans_are SRC DST N: the pair's TCP span count is exactly N (for wait_until)
spans_are() { [ "$(pair_field "$1" "$2" spans)" = "$3" ]; }

# expect_spans VARIANT WHAT SRC DST N: waits (bounded) for N spans SRC -> DST, then requires
# exactly N (a later extra span fails too) and no negative span (one shared clock).
expect_spans() {
  local variant=$1 what=$2 src=$3 dst=$4 n=$5 got
  wait_until 10 spans_are "$src" "$dst" "$n" || true
  sleep 0.5
  got=$(pair_field "$src" "$dst" spans)
  note "$variant: $what $src->$dst: $got of $n spans"
  [ "$got" = "$n" ] || fail "$variant: $what $src->$dst: expected exactly $n spans, got $got"
  [ "$(pair_field "$src" "$dst" negative_spans)" = 0 ] || fail "$variant: negative span $src->$dst with one clock"
}
