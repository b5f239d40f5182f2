/* Counters the agent reads from memory (agent/capture/counter_slices.hpp): an array it maps into
 * its address space once (BPF_F_MMAPABLE), where a per-CPU array has to be read with a system call,
 * and the agent reads its counters at every pass of each ring's loop (a batch lookup took 15-20 us
 * on the test VM: a third of an idle agent's CPU time).
 *
 * Each CPU owns a slice of SKEWSCOPE_COUNTER_STRIDE(slots) counters, whole cache lines, so that no
 * two CPUs write one line: counter `which` of CPU c is element c * stride + which. The map holds
 * one slice here; the agent sizes it to every possible CPU before load (a CPU beyond the map finds
 * no element and counts nothing: the agent checks the size when it maps it). An increment is a
 * plain add, as in a per-CPU array: only a program that interrupts another on the same CPU and
 * counts into the same counter can lose one. */
#pragma once

#define SKEWSCOPE_COUNTER_STRIDE(slots) (((slots) + 7) / 8 * 8)

/* The body of a counter map's definition: struct { SKEWSCOPE_COUNTER_SLICES(n); } name SEC(".maps"). */
#define SKEWSCOPE_COUNTER_SLICES(slots)                       \
	__uint(type, BPF_MAP_TYPE_ARRAY);                     \
	__uint(map_flags, BPF_F_MMAPABLE);                    \
	__uint(max_entries, SKEWSCOPE_COUNTER_STRIDE(slots)); \
	__type(key, __u32);                                   \
	__type(value, __u64)

/* Counter `which` of `cpu`'s slice (the running CPU's, for a program that has its number at hand). */
static __always_inline __u64 *counter_slice_at(void *map, __u32 slots, __u32 cpu, __u32 which)
{
	__u32 key = cpu * SKEWSCOPE_COUNTER_STRIDE(slots) + which;
	return bpf_map_lookup_elem(map, &key);
}

static __always_inline void counter_slice_add(void *map, __u32 slots, __u32 which)
{
	__u64 *value = counter_slice_at(map, slots, bpf_get_smp_processor_id(), which);
	if (value)
		*value += 1;
}
