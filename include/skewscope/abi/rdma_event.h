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
	SKEWSCOPE_RDMA_SEND = 1,	 /* a posted WR that will consume a receive at the peer */
	SKEWSCOPE_RDMA_RECV = 2,	 /* a successful receive completion, at poll_cq return */
	SKEWSCOPE_RDMA_CONNECT = 3,	 /* ibv_modify_qp to RTR: the peer's QPN and GID */
	SKEWSCOPE_RDMA_QP_CREATED = 4,	 /* ibv_create_qp returned: ordinals of this QPN restart */
	SKEWSCOPE_RDMA_CONTEXT = 5,	 /* ibv_open_device returned: the provider's functions */
	SKEWSCOPE_RDMA_CQ_EX = 6,	 /* the provider's create_cq_ex returned: the CQ's poll and read
	                                * functions (fn: start/next/end_poll, fn_ex: read_*) */
	SKEWSCOPE_RDMA_CLOCK_SAMPLE = 7, /* the provider's query_rt_values returned the NIC's raw clock
	                                  * (nic_ts) between sample_start_ns and ts_ns */
};

/* Where ts_ns comes from. The kernel side always writes the probe's time; the agent replaces it
 * with a RECV's NIC stamp (nic_ts, nic_stamp) when it can map that stamp to CLOCK_MONOTONIC. */
enum skewscope_rdma_ts_source {
	SKEWSCOPE_RDMA_TS_PROBE = 1,	      /* CLOCK_MONOTONIC in the probe: post_send entry, poll return */
	SKEWSCOPE_RDMA_TS_NIC_COMPLETION = 2, /* read_completion_ts (NIC cycles), mapped by clock samples */
	SKEWSCOPE_RDMA_TS_NIC_WALLCLOCK = 3,  /* read_completion_wallclock_ns, mapped from CLOCK_REALTIME */
};

/* What a RECV of an extended CQ carries in nic_ts: which stamp the application read. */
enum skewscope_rdma_nic_stamp {
	SKEWSCOPE_RDMA_NIC_NONE = 0,	  /* a plain CQ, or the application read no stamp */
	SKEWSCOPE_RDMA_NIC_RAW = 1,	  /* read_completion_ts: NIC clock cycles */
	SKEWSCOPE_RDMA_NIC_WALLCLOCK = 2, /* read_completion_wallclock_ns: ns of the NIC's real-time clock */
	SKEWSCOPE_RDMA_NIC_UNREAD = 3,	  /* the CQ offers a stamp, but this completion's was not read */
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
	SKEWSCOPE_RDMA_CNT_POLL_UNMATCHED,  /* poll_cq return without its entry (table full / attach race) */
	SKEWSCOPE_RDMA_CNT_UNTRACKED,	    /* messages / completions of QPs not tracked (see CONNECT) */
	SKEWSCOPE_RDMA_CNT_EX_COMPLETIONS,  /* completions made current by an extended CQ's start/next_poll */
	SKEWSCOPE_RDMA_CNT_EX_UNCLASSIFIED, /* successful ones whose opcode (or a receive's QP number) the
	                                     * application did not read: not halves; their CQ is marked
	                                     * and its QPs' later receives are counted untracked */
	SKEWSCOPE_RDMA_CNT_EX_NESTED,	    /* start_poll while the thread's previous poll was not ended */
	SKEWSCOPE_RDMA_CNT__COUNT,
};

struct skewscope_rdma_event {
	__u64 ts_ns;	 /* see ts_source */
	__u64 cgroup_id; /* cgroup v2 id of the calling task */
	__u64 wr_id;	 /* SEND: the WR's; RECV: the completion's */
	__u64 ordinal;	 /* SEND/RECV: per (process, QPN, direction), from 0 since the QP's RTR */
	__u64 fn[3];	 /* CONTEXT, QP_CREATED: post_send, post_recv, poll_cq in the process;
	                  * CQ_EX: start_poll, next_poll, end_poll */
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
	/* Extended CQs and the NIC clock. */
	__u64 context;	       /* CQ_EX, CLOCK_SAMPLE, RECV: the verbs context (one NIC clock each);
	                        * CONTEXT: fn_ex[0..1] hold its create_cq_ex and query_rt_values */
	__u64 nic_ts;	       /* RECV: the NIC stamp read (nic_stamp); CLOCK_SAMPLE: the raw NIC clock */
	__u64 sample_start_ns; /* CLOCK_SAMPLE: CLOCK_MONOTONIC at query_rt_values entry */
	__u64 fn_ex[5];	       /* CQ_EX: read_opcode, read_byte_len, read_qp_num, read_completion_ts,
	                        * read_completion_wallclock_ns (0: the provider offers none) */
	__u8 nic_stamp;	       /* RECV: enum skewscope_rdma_nic_stamp */
	__u8 pad3[7];
};

#endif
