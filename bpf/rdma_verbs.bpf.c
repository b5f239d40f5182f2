// SPDX-License-Identifier: GPL-2.0
/* Send and receive halves of RDMA RC traffic, from uprobes in the user-space verbs libraries.
 *
 * ibv_post_send / ibv_poll_cq are inline in infiniband/verbs.h and jump through the provider's
 * function pointers, so the agent attaches these programs at addresses it discovers per process
 * (agent/capture/rdma_*): ibv_open_device / ibv_create_qp return probes report the provider's
 * functions, which the agent then probes by file offset. A send half is stamped at post_send
 * entry, a receive half at poll_cq return, so with one clock a span can never be negative.
 * Pairing facts: the k-th message-carrying WR posted on a QP is the k-th successful receive
 * completion on its peer QP (RC delivers in order), hence per (process, QPN, direction) ordinals.
 * Extended CQs (ibv_create_cq_ex: one completion at a time, fields read through provider
 * functions) and samples of the NIC clock are in lib/rdma_cq_ex.bpf.h and
 * lib/rdma_clock_sample.bpf.h. */
#include "lib/kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "skewscope/abi/rdma_event.h"
#include "lib/verbs_layout.bpf.h"
#include "lib/code_position.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MAX_WRS 16 /* WRs read per post_send call; more are counted */
#define MAX_WCS 16 /* completions read per poll_cq return; more are counted */

#include "lib/rdma_records.bpf.h"

/* poll_cq entry -> return, per thread: where the completions will be written. */
struct {
	__uint(type, 9 /* BPF_MAP_TYPE_LRU_HASH */);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} poll_wc SEC(".maps");

#include "lib/rdma_cq_ex.bpf.h"
#include "lib/rdma_clock_sample.bpf.h"

/* The provider's data-path functions, read from the context's legacy ops table (libibverbs
 * copies the provider's post_send/post_recv/poll_cq there when the context is created), and
 * its create_cq_ex / query_rt_values from the verbs_context extension below it. */
static __always_inline void report_functions(__u8 kind, __u64 context, __u32 qpn)
{
	if (!context)
		return;
	struct skewscope_rdma_event *e = reserve(kind, bpf_ktime_get_ns());
	if (!e)
		return;
	e->fn[0] = context_op(context, CTX_OPS_POST_SEND);
	e->fn[1] = context_op(context, CTX_OPS_POST_RECV);
	e->fn[2] = context_op(context, CTX_OPS_POLL_CQ);
	e->fn_ex[0] = context_ext_op(context, VCTX_CREATE_CQ_EX);
	e->fn_ex[1] = context_ext_op(context, VCTX_QUERY_RT_VALUES);
	e->context = context;
	e->qpn = qpn;
	submit_now(e);
}

SEC("uretprobe")
int rdma_open_device_ret(struct pt_regs *ctx)
{
	report_functions(SKEWSCOPE_RDMA_CONTEXT, RET(ctx), 0);
	return 0;
}

SEC("uretprobe")
int rdma_create_qp_ret(struct pt_regs *ctx)
{
	__u64 qp = RET(ctx);
	if (!qp)
		return 0;
	__u64 context = qp_context(qp);
	__u32 qpn = qp_number(qp);
	restart_ordinals(qpn, 0); /* numbered from its RTR on */
	report_functions(SKEWSCOPE_RDMA_QP_CREATED, context, qpn);
	return 0;
}

/* int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask) */
SEC("uprobe")
int rdma_modify_qp(struct pt_regs *ctx)
{
	__u64 qp = ARG1(ctx), attr = ARG2(ctx);
	__u32 mask = (__u32)ARG3(ctx);
	if (!(mask & QP_STATE_MASK) || !(mask & QP_DEST_QPN_MASK))
		return 0;
	if (read_user_u32(attr) != QPS_RTR)
		return 0;
	__u32 qpn = qp_number(qp);
	__u64 context = qp_context(qp);
	const bool tracked = armed(context_op(context, CTX_OPS_POST_SEND)) &&
			     armed(context_op(context, CTX_OPS_POLL_CQ)) && recv_cq_covered(qp);
	/* A new connection: its first message is ordinal 0 on both sides. */
	restart_ordinals(qpn, tracked);
	struct skewscope_rdma_event *e = reserve(SKEWSCOPE_RDMA_CONNECT, bpf_ktime_get_ns());
	if (!e)
		return 0;
	e->qpn = qpn;
	e->opcode = tracked;
	read_rtr_attr(attr, context, &e->peer_qpn, e->gid, &e->sgid_index, &e->port_num, e->device,
		      sizeof(e->device));
	submit_now(e);
	return 0;
}

/* int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) */
SEC("uprobe")
int rdma_post_send(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 qp = ARG1(ctx), wr = ARG2(ctx);
	__u32 qpn = qp_number(qp);
	struct qp_ordinals *ord = ordinals(qpn);
	if (!ord)
		return 0;
	for (int i = 0; i < MAX_WRS && wr; i++) {
		__u32 opcode = read_user_u32(wr + WR_OPCODE);
		__u64 next = read_user_u64(wr + WR_NEXT);
		if (opcode == WR_RDMA_WRITE) {
			count(SKEWSCOPE_RDMA_CNT_WRITES, 1);
		} else if (opcode == WR_SEND || opcode == WR_SEND_WITH_IMM ||
			   opcode == WR_RDMA_WRITE_WITH_IMM) {
			__u64 wr_id = read_user_u64(wr + WR_ID);
			__u32 bytes = wr_total_length(wr);
			__u64 ordinal = __sync_fetch_and_add(&ord->sent, 1);
			struct skewscope_rdma_event *e = reserve(SKEWSCOPE_RDMA_SEND, now);
			if (e) {
				e->qpn = qpn;
				e->wr_id = wr_id;
				e->ordinal = ordinal;
				e->bytes = bytes;
				e->opcode = (__u8)opcode;
				submit(e);
			}
		} else {
			count(SKEWSCOPE_RDMA_CNT_OTHER_WRS, 1);
		}
		wr = next;
	}
	if (wr)
		count(SKEWSCOPE_RDMA_CNT_WR_TRUNCATED, 1);
	return 0;
}

/* int poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc) */
SEC("uprobe")
int rdma_poll_cq(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), wc = ARG3(ctx);
	bpf_map_update_elem(&poll_wc, &id, &wc, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int rdma_poll_cq_ret(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	int n = (int)RET(ctx);
	__u64 *saved = bpf_map_lookup_elem(&poll_wc, &id);
	if (!saved) {
		if (n > 0)
			count(SKEWSCOPE_RDMA_CNT_POLL_UNMATCHED, (__u64)n);
		return 0;
	}
	__u64 wc = *saved;
	bpf_map_delete_elem(&poll_wc, &id);
	for (int i = 0; i < MAX_WCS && i < n; i++) {
		struct verbs_wc c;
		read_wc(wc + (__u64)i * WC_SIZE, &c);
		if (c.status) {
			count(c.status == WC_FLUSH_ERR ? SKEWSCOPE_RDMA_CNT_FLUSHED
						       : SKEWSCOPE_RDMA_CNT_ERROR_COMPLETIONS,
			      1);
			continue;
		}
		if (!(c.opcode & WC_RECV_FLAG)) {
			count(SKEWSCOPE_RDMA_CNT_SEND_COMPLETIONS, 1);
			continue;
		}
		struct qp_ordinals *ord = ordinals(c.qp_num);
		if (!ord)
			continue;
		__u64 ordinal = __sync_fetch_and_add(&ord->received, 1);
		struct skewscope_rdma_event *e = reserve(SKEWSCOPE_RDMA_RECV, now);
		if (!e)
			continue;
		e->qpn = c.qp_num;
		e->wr_id = c.wr_id;
		e->ordinal = ordinal;
		e->bytes = c.byte_len;
		e->opcode = (__u8)c.opcode;
		submit(e);
	}
	if (n > MAX_WCS)
		count(SKEWSCOPE_RDMA_CNT_WC_TRUNCATED, (__u64)(n - MAX_WCS));
	return 0;
}
