/* The maps every wire-level program writes: one ring buffer and one set of counters. The
 * tc and sock_ops objects declare them alike; the agent loads the sock_ops object with the tc
 * object's maps (bpf_map__reuse_fd), so one reader sees both. */
#pragma once

#include "counter_slices.bpf.h"

/* A slice per CPU, read by the agent from memory (counter_slices.bpf.h). */
struct {
	SKEWSCOPE_COUNTER_SLICES(SKEWSCOPE_WIRE_CNT__COUNT);
} wire_counters SEC(".maps");

#define WIRE_RINGBUF_BYTES (8 * 1024 * 1024)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, WIRE_RINGBUF_BYTES);
} wire_halves SEC(".maps");

/* As in tcp_syscalls.bpf.c: the agent polls, so the reader is only woken when the ring fills. */
#define WIRE_WAKEUP_AT_BYTES (WIRE_RINGBUF_BYTES / 4)

static __always_inline void count(__u32 which)
{
	counter_slice_add(&wire_counters, SKEWSCOPE_WIRE_CNT__COUNT, which);
}
