/* The RDMA capture's records and per-QP state, shared by the plain CQ programs (rdma_verbs.bpf.c)
 * and the extended CQ ones (rdma_cq_ex.bpf.h): the ring buffer and its counters, the per-QP
 * ordinals, the table of provider functions the agent has probed, and the helpers that reserve,
 * fill and submit a record. Included once, by rdma_verbs.bpf.c. */
#pragma once

#include "counter_slices.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} rdma_events SEC(".maps");

/* A slice per CPU, read by the agent from memory (counter_slices.bpf.h). */
struct {
	SKEWSCOPE_COUNTER_SLICES(SKEWSCOPE_RDMA_CNT__COUNT);
} rdma_counters SEC(".maps");

struct qp_key {
	__u32 tgid;
	__u32 qpn;
};
/* A QP is tracked only when, at its RTR, the provider's post_send and poll_cq were already
 * probed: then no message of the connection can pass unseen, and ordinals agree on both sides.
 * A QP connected before that (or before the agent started) is counted, never numbered. */
struct qp_ordinals {
	__u64 sent;
	__u64 received;
	__u64 tracked;
};

/* (inode, file offset) of provider functions the agent has probed: written by the agent after
 * each attach, read at RTR. */
struct armed_key {
	__u64 inode;
	__u64 offset;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct armed_key);
	__type(value, __u8);
} armed_functions SEC(".maps");

/* LRU: a process that exits without destroying its QPs must not fill the table for good. */
struct {
	__uint(type, 9 /* BPF_MAP_TYPE_LRU_HASH */);
	__uint(max_entries, 65536);
	__type(key, struct qp_key);
	__type(value, struct qp_ordinals);
} qp_ordinals SEC(".maps");

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *value = counter_slice_at(&rdma_counters, SKEWSCOPE_RDMA_CNT__COUNT, bpf_get_smp_processor_id(),
					which);
	if (value)
		*value += n;
}

static __always_inline struct skewscope_rdma_event *reserve(__u8 kind, __u64 now)
{
	struct skewscope_rdma_event *e = bpf_ringbuf_reserve(&rdma_events, sizeof(*e), 0);
	if (!e) {
		count(SKEWSCOPE_RDMA_CNT_RINGBUF_FULL, 1);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct___rdma *task = (void *)bpf_get_current_task();
	e->ts_ns = now;
	e->ts_source = SKEWSCOPE_RDMA_TS_PROBE;
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->netns_ino = BPF_CORE_READ(task, nsproxy, net_ns, ns.inum);
	e->kind = kind;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline void submit(struct skewscope_rdma_event *e)
{
	/* No wake-up per data record: the agent polls every 20 ms (as for the TCP ring). */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	count(SKEWSCOPE_RDMA_CNT_EMITTED, 1);
}

/* A control record (device opened, QP created, QP connected) wakes the agent at once: it must
 * read the process's /proc entries (maps, its view of sysfs) while the process still runs, and
 * a short-lived one can be gone within the 20 ms. Forced: the default wakes only a reader that
 * has caught up, and data records waiting unread would hold this one back. Control records are
 * rare (per QP, not per message), so the wake-ups cost nothing measurable. */
static __always_inline void submit_now(struct skewscope_rdma_event *e)
{
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	count(SKEWSCOPE_RDMA_CNT_EMITTED, 1);
}

/* The QP's numbering, or null (counted) when it is not tracked. */
static __always_inline struct qp_ordinals *ordinals(__u32 qpn)
{
	struct qp_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .qpn = qpn};
	struct qp_ordinals *o = bpf_map_lookup_elem(&qp_ordinals, &key);
	if (o && o->tracked)
		return o;
	count(SKEWSCOPE_RDMA_CNT_UNTRACKED, 1);
	return 0;
}

static __always_inline void restart_ordinals(__u32 qpn, __u64 tracked)
{
	struct qp_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .qpn = qpn};
	struct qp_ordinals fresh = {.tracked = tracked};
	bpf_map_update_elem(&qp_ordinals, &key, &fresh, BPF_ANY);
}

/* Is the function at this address of the current process probed already? */
static __always_inline bool armed(__u64 address)
{
	struct armed_key key;
	if (!code_file_position(address, &key.inode, &key.offset))
		return false;
	return bpf_map_lookup_elem(&armed_functions, &key) != 0;
}
