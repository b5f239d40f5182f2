/* Receive halves of extended CQs (ibv_create_cq_ex), and samples of the NIC clock.
 * Included by rdma_verbs.bpf.c after lib/rdma_records.bpf.h (count, reserve, submit, ordinals).
 *
 * An extended CQ is polled one completion at a time: ibv_start_poll / ibv_next_poll make a
 * completion current (status and wr_id land in the ibv_cq_ex), and every other field is a call
 * of a provider function (read_opcode, read_qp_num, read_byte_len, read_completion_ts, ...).
 * All are inline in verbs.h and jump through the CQ's pointers, which the agent learns from the
 * return of the provider's create_cq_ex and probes by file offset. A uretprobe sees no argument,
 * so the read functions' results are stitched per thread to the completion its last
 * start_poll / next_poll made current; that completion becomes a half (or a count) when the next
 * one replaces it or at end_poll. Its probe time is the start/next_poll return: the moment the
 * application learnt of it, as poll_cq's return is for a plain CQ. Ordinals are the same
 * per-(process, QPN) counters as the poll_cq path. */
#pragma once

enum ex_have {
	HAVE_OPCODE = 1,
	HAVE_BYTE_LEN = 2,
	HAVE_QP_NUM = 4,
	HAVE_TS_RAW = 8,
	HAVE_TS_WALLCLOCK = 16,
};

/* What the thread polls, and its current completion. */
struct ex_poll {
	__u64 cq, context, probe_ns, wr_id, ts_raw, ts_wallclock;
	__u32 status, opcode, byte_len, qp_num;
	__u8 polling;	     /* between a successful start_poll and end_poll */
	__u8 current;	     /* a completion is current */
	__u8 have;	     /* enum ex_have: what the application read of it */
	__u8 stamps_offered; /* the CQ has a read_completion_ts or _wallclock_ns */
	__u32 pad;
};
struct {
	__uint(type, 9 /* BPF_MAP_TYPE_LRU_HASH */);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct ex_poll);
} ex_polls SEC(".maps");

struct cq_key {
	__u32 tgid;
	__u32 pad;
	__u64 cq;
};
struct extended_cq {
	__u8 stamps_offered;
	__u8 unclassified; /* a completion could not be classified: its QPs' ordinals are unsure */
};
/* Every extended CQ created since the agent started, by (process, address): at RTR a QP whose
 * receive CQ is one is tracked only if that CQ's poll and read functions are probed. */
struct {
	__uint(type, 9 /* BPF_MAP_TYPE_LRU_HASH */);
	__uint(max_entries, 16384);
	__type(key, struct cq_key);
	__type(value, struct extended_cq);
} extended_cqs SEC(".maps");

static __always_inline struct extended_cq *find_extended_cq(__u64 cq)
{
	struct cq_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .cq = cq};
	return bpf_map_lookup_elem(&extended_cqs, &key);
}

/* At RTR: is the QP's receive CQ either a plain one, or an extended one whose functions that
 * classify a completion are all probed? */
static __always_inline bool recv_cq_covered(__u64 qp)
{
	__u64 cq = read_user_u64(qp + QP_RECV_CQ);
	if (!find_extended_cq(cq))
		return true;
	return armed(read_user_u64(cq + CQ_EX_START_POLL)) && armed(read_user_u64(cq + CQ_EX_NEXT_POLL)) &&
	       armed(read_user_u64(cq + CQ_EX_END_POLL)) && armed(read_user_u64(cq + CQ_EX_READ_OPCODE)) &&
	       armed(read_user_u64(cq + CQ_EX_READ_QP_NUM));
}

static __always_inline void mark_unclassified(__u64 cq)
{
	struct extended_cq *x = find_extended_cq(cq);
	if (x)
		x->unclassified = 1;
	count(SKEWSCOPE_RDMA_CNT_EX_UNCLASSIFIED, 1);
}

/* The current completion is done with: a receive half, or a count. */
static __always_inline void settle(struct ex_poll *p)
{
	if (!p->current)
		return;
	p->current = 0;
	if (p->status) {
		count(p->status == WC_FLUSH_ERR ? SKEWSCOPE_RDMA_CNT_FLUSHED
						: SKEWSCOPE_RDMA_CNT_ERROR_COMPLETIONS,
		      1);
		return;
	}
	if (!(p->have & HAVE_OPCODE)) {
		mark_unclassified(p->cq);
		return;
	}
	if (!(p->opcode & WC_RECV_FLAG)) {
		count(SKEWSCOPE_RDMA_CNT_SEND_COMPLETIONS, 1);
		return;
	}
	if (!(p->have & HAVE_QP_NUM)) {
		mark_unclassified(p->cq);
		return;
	}
	/* A CQ created before create_cq_ex was probed may have completed receives before its poll
	 * functions were: none of its receives is numbered. Nor, once a completion of it could not
	 * be classified (an earlier receive may have gone unnumbered), are its later ones. */
	struct extended_cq *x = find_extended_cq(p->cq);
	if (!x || x->unclassified) {
		count(SKEWSCOPE_RDMA_CNT_UNTRACKED, 1);
		return;
	}
	struct qp_ordinals *ord = ordinals(p->qp_num);
	if (!ord)
		return;
	__u64 ordinal = __sync_fetch_and_add(&ord->received, 1);
	struct skewscope_rdma_event *e = reserve(SKEWSCOPE_RDMA_RECV, p->probe_ns);
	if (!e)
		return;
	e->qpn = p->qp_num;
	e->wr_id = p->wr_id;
	e->ordinal = ordinal;
	e->bytes = p->byte_len;
	e->opcode = (__u8)p->opcode;
	e->context = p->context;
	/* The wall-clock stamp when read: it maps without samples of the NIC clock. */
	if (p->have & HAVE_TS_WALLCLOCK) {
		e->nic_stamp = SKEWSCOPE_RDMA_NIC_WALLCLOCK;
		e->nic_ts = p->ts_wallclock;
	} else if (p->have & HAVE_TS_RAW) {
		e->nic_stamp = SKEWSCOPE_RDMA_NIC_RAW;
		e->nic_ts = p->ts_raw;
	} else {
		e->nic_stamp = p->stamps_offered ? SKEWSCOPE_RDMA_NIC_UNREAD : SKEWSCOPE_RDMA_NIC_NONE;
	}
	submit(e);
}

static __always_inline struct ex_poll *thread_poll(bool create)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ex_poll *p = bpf_map_lookup_elem(&ex_polls, &id);
	if (p || !create)
		return p;
	struct ex_poll fresh = {};
	bpf_map_update_elem(&ex_polls, &id, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&ex_polls, &id);
}

/* start_poll / next_poll returned 0: the CQ's status and wr_id now describe a new completion. */
static __always_inline void make_current(struct ex_poll *p, __u64 now)
{
	p->current = 1;
	p->have = 0;
	p->probe_ns = now;
	p->status = read_user_u32(p->cq + CQ_EX_STATUS);
	p->wr_id = read_user_u64(p->cq + CQ_EX_WR_ID);
	count(SKEWSCOPE_RDMA_CNT_EX_COMPLETIONS, 1);
}

/* struct ibv_cq_ex *create_cq_ex(struct ibv_context *, struct ibv_cq_init_attr_ex *) */
SEC("uretprobe")
int rdma_create_cq_ex_ret(struct pt_regs *ctx)
{
	__u64 cq = RET(ctx);
	if (!cq)
		return 0;
	struct skewscope_rdma_event *e = reserve(SKEWSCOPE_RDMA_CQ_EX, bpf_ktime_get_ns());
	if (!e)
		return 0;
	e->context = read_user_u64(cq + CQ_CONTEXT);
	e->fn[0] = read_user_u64(cq + CQ_EX_START_POLL);
	e->fn[1] = read_user_u64(cq + CQ_EX_NEXT_POLL);
	e->fn[2] = read_user_u64(cq + CQ_EX_END_POLL);
	e->fn_ex[0] = read_user_u64(cq + CQ_EX_READ_OPCODE);
	e->fn_ex[1] = read_user_u64(cq + CQ_EX_READ_BYTE_LEN);
	e->fn_ex[2] = read_user_u64(cq + CQ_EX_READ_QP_NUM);
	e->fn_ex[3] = read_user_u64(cq + CQ_EX_READ_COMPLETION_TS);
	e->fn_ex[4] = read_user_u64(cq + CQ_EX_READ_WALLCLOCK_NS);
	struct cq_key key = {.tgid = e->pid, .cq = cq};
	struct extended_cq value = {.stamps_offered = e->fn_ex[3] || e->fn_ex[4]};
	bpf_map_update_elem(&extended_cqs, &key, &value, BPF_ANY);
	submit_now(e); /* a control record: the agent reads the process's maps for these */
	return 0;
}

/* int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr) */
SEC("uprobe")
int rdma_start_poll(struct pt_regs *ctx)
{
	struct ex_poll *p = thread_poll(true);
	if (!p)
		return 0;
	if (p->polling) {
		count(SKEWSCOPE_RDMA_CNT_EX_NESTED, 1);
		settle(p);
	}
	p->cq = ARG1(ctx);
	p->context = read_user_u64(p->cq + CQ_CONTEXT);
	struct extended_cq *x = find_extended_cq(p->cq);
	p->stamps_offered = x ? x->stamps_offered : 0;
	p->current = 0;
	p->polling = 0;
	return 0;
}

SEC("uretprobe")
int rdma_start_poll_ret(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct ex_poll *p = thread_poll(false);
	int rc = (int)RET(ctx);
	if (!p || !p->cq) {
		if (rc == 0)
			count(SKEWSCOPE_RDMA_CNT_POLL_UNMATCHED, 1);
		return 0;
	}
	/* Non-zero (ENOENT: empty): no completion, and the application must not call end_poll. */
	p->polling = rc == 0;
	if (rc == 0)
		make_current(p, now);
	return 0;
}

/* int next_poll(struct ibv_cq_ex *cq): the same CQ as the thread's start_poll. */
SEC("uretprobe")
int rdma_next_poll_ret(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct ex_poll *p = thread_poll(false);
	int rc = (int)RET(ctx);
	if (!p || !p->polling) {
		if (rc == 0)
			count(SKEWSCOPE_RDMA_CNT_POLL_UNMATCHED, 1);
		return 0;
	}
	settle(p);
	if (rc == 0)
		make_current(p, now);
	return 0;
}

/* void end_poll(struct ibv_cq_ex *cq) */
SEC("uprobe")
int rdma_end_poll(struct pt_regs *ctx)
{
	(void)ctx;
	struct ex_poll *p = thread_poll(false);
	if (!p)
		return 0;
	settle(p);
	p->polling = 0;
	p->cq = 0;
	return 0;
}

/* The read functions: their results belong to the thread's current completion. */
#define READ_PROBE(name, field, bit)                    \
	SEC("uretprobe")                                \
	int name(struct pt_regs *ctx)                   \
	{                                               \
		struct ex_poll *p = thread_poll(false); \
		if (p && p->current) {                  \
			p->field = RET(ctx);            \
			p->have |= bit;                 \
		}                                       \
		return 0;                               \
	}
READ_PROBE(rdma_read_opcode_ret, opcode, HAVE_OPCODE)
READ_PROBE(rdma_read_byte_len_ret, byte_len, HAVE_BYTE_LEN)
READ_PROBE(rdma_read_qp_num_ret, qp_num, HAVE_QP_NUM)
READ_PROBE(rdma_read_completion_ts_ret, ts_raw, HAVE_TS_RAW)
READ_PROBE(rdma_read_wallclock_ret, ts_wallclock, HAVE_TS_WALLCLOCK)
