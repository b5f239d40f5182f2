/* What every TCP capture family shares: the half ring buffer, the loss accounting, the agent's
 * own tgid, and one way to fill and submit a half. Included once, by tcp_syscalls.bpf.c. */
#pragma once

/* Set by the agent before load: its own traffic is never traced. */
const volatile __u32 agent_tgid = 0;

/* One ring buffer per CPU, each created by the agent (its size is the agent's choice) and put in
 * this array at the CPU's index before the programs attach. With one shared ring, a send half on
 * one CPU and its receive half on the other took turns at the ring's spinlock and wrote records
 * that shared cache lines: every half moved those lines between the CPUs. */
struct halves_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* a template: the agent creates the real rings */
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* set to the number of possible CPUs by the agent before load */
	__type(key, __u32);
	__array(values, struct halves_ring);
} halves_by_cpu SEC(".maps");

/* Waking the reader on every record cost more than half of all BPF time (measured: the
 * self-interrupt behind each wake-up dominates on a VM). The agent polls every few milliseconds
 * anyway, so records are submitted silently and the reader is only woken once every
 * (ring_wakeup_mask + 1) halves a CPU emits: a power of 2 whose records fill at most a quarter
 * of a ring (set by the agent), long before it can overflow. Counting is free (the per-CPU
 * emitted counter exists anyway); asking the ring its fill level was a helper call per half. */
const volatile __u64 ring_wakeup_mask = 8191;

/* Set (to 1) by the agent when its halves loop has seen nothing for a while and is about to wait
 * long (agent/runtime/ring_drain.hpp, "idle"): the next half clears it and wakes the reader, so
 * the first halves after a quiet spell are read at once, not at the end of that wait. In a section
 * of its own (a map the agent maps): a line that the programs only read while traffic flows. */
volatile __u32 halves_reader_idle SEC(".data.wake") = 0;

/* Losses by origin (network namespace, cgroup, reason), so that a loss shows on the domain it
 * belongs to. The global per-CPU counter always counts; an origin that finds this table full is
 * only in the global count, which the agent shows as unattributed (global minus the sum here). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct skewscope_loss_origin);
	__type(value, __u64);
} lost_by_origin SEC(".maps");

static __always_inline void count_lost(struct sock *sk, __u32 reason)
{
	count_event(reason);
	struct skewscope_loss_origin origin = {
		.cgroup_id = bpf_get_current_cgroup_id(),
		.netns_ino = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum),
		.reason = reason,
	};
	__u64 *count = bpf_map_lookup_elem(&lost_by_origin, &origin);
	if (!count) {
		__u64 zero = 0;
		bpf_map_update_elem(&lost_by_origin, &origin, &zero, BPF_NOEXIST);
		count = bpf_map_lookup_elem(&lost_by_origin, &origin);
		if (!count)
			return;
	}
	__sync_fetch_and_add(count, 1);
}

/* How a family reads the socket's tuple: a constant per call site, so each program holds one. */
enum tuple_read {
	TUPLE_CORE_READ,   /* one bpf_probe_read_kernel per field (any kernel with BTF) */
	TUPLE_RDONLY_CAST, /* re-typed through bpf_rdonly_cast: plain loads (6.2+) */
	TUPLE_TYPED,	   /* sk is already a BTF pointer (a tp_btf argument): plain loads */
};

/* Who made the call, as the caller read it: bpf_get_current_pid_tgid() and
 * bpf_get_current_cgroup_id(), or the same fields by plain loads from the task (current_caller). */
struct caller {
	__u64 pid_tgid;
	__u64 cgroup_id;
};

static __always_inline struct caller caller_by_helpers(void)
{
	return (struct caller){.pid_tgid = bpf_get_current_pid_tgid(),
			       .cgroup_id = bpf_get_current_cgroup_id()};
}

/* Reserves, fills and submits one half; a full ring is counted against the socket's origin. */
static __always_inline void emit_half(enum tuple_read how, struct sock *sk, struct caller who, __u64 ts_ns,
				      __u32 seq, __u64 bytes, __u8 kind, __u8 syscall, __u8 flags)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = bpf_map_lookup_elem(&halves_by_cpu, &cpu);
	struct skewscope_half_event *e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : NULL;
	if (!e) { /* a CPU without a ring cannot happen (the agent fills every slot): counted alike */
		count_lost(sk, SKEWSCOPE_CNT_RINGBUF_FULL);
		return;
	}
	e->ts_ns = ts_ns;
	e->cgroup_id = who.cgroup_id;
	if (how == TUPLE_TYPED)
		read_tuple_typed(sk, e);
	else if (how == TUPLE_RDONLY_CAST)
		read_tuple_btf(sk, e);
	else
		read_tuple(sk, e);
	e->seq = seq;
	e->bytes = bytes > 0xffffffffULL ? 0xffffffffU : (__u32)bytes;
	e->pid = who.pid_tgid >> 32;
	e->tid = (__u32)who.pid_tgid;
	e->kind = kind;
	e->syscall = syscall;
	e->flags = flags;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	__u64 *emitted = counter_slice_at(&counters, SKEWSCOPE_CNT__COUNT, cpu, SKEWSCOPE_CNT_EMITTED);
	__u64 n = emitted ? ++*emitted : 0; /* this CPU's slice: no atomics needed */
	int wake = (n & ring_wakeup_mask) == 0;
	if (halves_reader_idle) { /* racing CPUs may both clear it and wake: one spare wake-up */
		halves_reader_idle = 0;
		wake = 1;
	}
	bpf_ringbuf_submit(e, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}
