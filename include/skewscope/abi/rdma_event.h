/* The record that crosses the RDMA verbs ring buffer, shared by bpf/rdma_verbs.bpf.c and agent/.
 * Plain C, fixed-width types, explicit padding: the C++ side static_asserts every offset.
 * RDMA data transfers never pass a syscall, so these come from uprobes in the verbs libraries. */
#ifndef SKEWSCOPE_ABI_RDMA_EVENT_H
#define SKEWSCOPE_ABI_RDMA_EVENT_H

#ifdef __BPF__
/* bpf/lib/kernel_types.bpf.h provides the __uN types in BPF programs. */
#else
#include <linux/types.h>
#endif

#define SKEWSCOPE_RDMA_COMM_LEN 16
#define SKEWSCOPE_RDMA_DEVICE_LEN 64 /* IB_DEVICE_NAME_MAX */

enum skewscope_rdma_kind {
	SKEWSCOPE_RDMA_SEND = 1,       /* a posted WR that will consume a receive at the peer */
	SKEWSCOPE_RDMA_RECV = 2,       /* a successful receive completion, at poll_cq return */
	SKEWSCOPE_RDMA_CONNECT = 3,    /* ibv_modify_qp to RTR: the peer's QPN and GID */
	SKEWSCOPE_RDMA_QP_CREATED = 4, /* ibv_create_qp returned: ordinals of this QPN restart */
	SKEWSCOPE_RDMA_CONTEXT = 5,    /* ibv_open_device returned: the provider's functions */
};

/* Where ts_ns comes from. Only the probe's own clock is implemented; a NIC completion stamp
 * (ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) would be another value. */
enum skewscope_rdma_ts_source {
	SKEWSCOPE_RDMA_TS_PROBE = 1, /* CLOCK_MONOTONIC in the probe: post_send entry, poll_cq return */
};

/* Per-CPU counters (array map index). Every record not emitted has a slot here. */
enum skewscope_rdma_counter {
	SKEWSCOPE_RDMA_CNT_RINGBUF_FULL = 0,  /* bpf_ringbuf_reserve failed: record lost */
	SKEWSCOPE_RDMA_CNT_EMITTED,	      /* records submitted */
	SKEWSCOPE_RDMA_CNT_WRITES,	      /* RDMA WRITE without immediate: no receive completion */
	SKEWSCOPE_RDMA_CNT_OTHER_WRS,	      /* READ, atomics, ...: move no message */
	SKEWSCOPE_RDMA_CNT_WR_TRUNCATED,      /* WRs beyond the chain length one probe reads */
	SKEWSCOPE_RDMA_CNT_SEND_COMPLETIONS,  /* successful send-side completions (not halves) */
	SKEWSCOPE_RDMA_CNT_FLUSHED,	      /* completions with IBV_WC_WR_FLUSH_ERR: counted, not paired */
	SKEWSCOPE_RDMA_CNT_ERROR_COMPLETIONS, /* other error completions: counted, not paired */
	SKEWSCOPE_RDMA_CNT_WC_TRUNCATED,      /* completions beyond what one poll_cq return reads */
	SKEWSCOPE_RDMA_CNT_POLL_UNMATCHED, /* poll_cq return without its entry (table full / attach race) */
	SKEWSCOPE_RDMA_CNT_UNTRACKED,	   /* messages / completions of QPs not tracked (see CONNECT) */
	SKEWSCOPE_RDMA_CNT__COUNT,
};

struct skewscope_rdma_event {
	__u64 ts_ns;	 /* see ts_source */
	__u64 cgroup_id; /* cgroup v2 id of the calling task */
	__u64 wr_id;	 /* SEND: the WR's; RECV: the completion's */
	__u64 ordinal;	 /* SEND/RECV: per (process, QPN, direction), from 0 since the QP's RTR */
	__u64 fn[3];	 /* CONTEXT, QP_CREATED: post_send, post_recv, poll_cq in the process */
	__u8 gid[16];	 /* CONNECT: destination GID (RoCEv2: the peer's IPv4-mapped/IPv6 address) */
	__u32 pid;	 /* thread-group id */
	__u32 tid;
	__u32 netns_ino; /* network namespace of the calling task */
	__u32 qpn;	 /* the local QP number */
	__u32 peer_qpn;	 /* CONNECT: dest_qp_num */
	__u32 bytes;	 /* SEND: sum of the WR's scatter/gather lengths; RECV: byte_len */
	__u8 kind;	 /* enum skewscope_rdma_kind */
	__u8 opcode;	 /* SEND: enum ibv_wr_opcode; RECV: enum ibv_wc_opcode; CONNECT: 1 when the
	                    * QP is tracked (its provider's post_send and poll_cq were probed at RTR) */
	__u8 ts_source;	 /* enum skewscope_rdma_ts_source */
	__u8 pad[5];
	char comm[SKEWSCOPE_RDMA_COMM_LEN];
	/* CONNECT only. The local GID is named by an index into the port's GID table; the table is
	 * not in user memory, so the agent resolves it (from the process's view of sysfs) and fills
	 * local_gid in user space: the kernel side leaves it zero and local_gid_known 0. */
	__u8 sgid_index;      /* ah_attr.grh.sgid_index */
	__u8 port_num;	      /* ah_attr.port_num */
	__u8 local_gid_known; /* set by the agent: 1 when local_gid holds the resolved GID */
	__u8 pad2[5];
	__u8 local_gid[16];
	char device[SKEWSCOPE_RDMA_DEVICE_LEN]; /* ibv_device.name of the QP's context */
};

#endif
