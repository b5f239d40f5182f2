/* Counters indexed by enum skewscope_bpf_counter, a slice per CPU (counter_slices.bpf.h): every
 * drop in the kernel side has one. */
#pragma once

#include "counter_slices.bpf.h"

struct {
	SKEWSCOPE_COUNTER_SLICES(SKEWSCOPE_CNT__COUNT);
} counters SEC(".maps");

static __always_inline void count_event(__u32 which)
{
	counter_slice_add(&counters, SKEWSCOPE_CNT__COUNT, which);
}
