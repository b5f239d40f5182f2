/* Per-CPU counters indexed by enum skewscope_bpf_counter: every drop in the kernel side has one. */
#pragma once

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SKEWSCOPE_CNT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count_event(__u32 which)
{
	__u64 *value = bpf_map_lookup_elem(&counters, &which);
	if (value)
		*value += 1; /* per-CPU slot: no atomics needed */
}
