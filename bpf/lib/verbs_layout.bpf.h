/* What the RDMA verbs programs read in user space: the probed function's registers, and the
 * verbs structures at rdma-core 44's offsets (infiniband/verbs.h, the stable public ABI of
 * libibverbs.so.1; checked against Debian 12's headers). */
#pragma once

/* struct pt_regs comes from kernel_types.bpf.h (CO-RE, only the registers read here). */
#if defined(__TARGET_ARCH_x86)
#define ARG1(c) ((c)->di)
#define ARG2(c) ((c)->si)
#define ARG3(c) ((c)->dx)
#define RET(c) ((c)->ax)
#elif defined(__TARGET_ARCH_arm64)
#define ARG1(c) ((c)->regs[0])
#define ARG2(c) ((c)->regs[1])
#define ARG3(c) ((c)->regs[2])
#define RET(c) ((c)->regs[0])
#endif

/* rdma-core 44 user-space layouts (infiniband/verbs.h; stable ABI of libibverbs.so.1). */
#define QP_CONTEXT 0
#define QP_NUM 52
#define CTX_OPS_POLL_CQ 96
#define CTX_OPS_POST_SEND 208
#define CTX_OPS_POST_RECV 216
#define WR_ID 0
#define WR_NEXT 8
#define WR_SG_LIST 16
#define WR_NUM_SGE 24
#define WR_OPCODE 28
#define SGE_LENGTH 8
#define SGE_SIZE 16
#define WC_SIZE 48
#define WC_STATUS 8
#define WC_OPCODE 12
#define WC_BYTE_LEN 20
#define WC_QP_NUM 28
#define ATTR_DEST_QPN 28
#define ATTR_DGID 56
#define ATTR_SGID_INDEX 76 /* ah_attr.grh.sgid_index */
#define ATTR_AH_PORT 86	   /* ah_attr.port_num */
#define CTX_DEVICE 0
#define DEVICE_NAME 24 /* ibv_device.name[64] */
#define QP_STATE_MASK 1
#define QP_DEST_QPN_MASK (1 << 20)
#define QPS_RTR 2
#define WR_RDMA_WRITE 0
#define WR_RDMA_WRITE_WITH_IMM 1
#define WR_SEND 2
#define WR_SEND_WITH_IMM 3
#define WC_RECV_FLAG 128 /* IBV_WC_RECV and IBV_WC_RECV_RDMA_WITH_IMM */
#define WC_FLUSH_ERR 5

/* Readers over those layouts: one place that knows where each field sits. A failed read leaves
 * zero (the caller treats 0 as "not there"). Needs bpf_helpers.h before this header. */
static __always_inline __u64 read_user_u64(__u64 address)
{
	__u64 v = 0;
	bpf_probe_read_user(&v, sizeof(v), (void *)address);
	return v;
}

static __always_inline __u32 read_user_u32(__u64 address)
{
	__u32 v = 0;
	bpf_probe_read_user(&v, sizeof(v), (void *)address);
	return v;
}

static __always_inline __u32 qp_number(__u64 qp)
{
	return read_user_u32(qp + QP_NUM);
}
static __always_inline __u64 qp_context(__u64 qp)
{
	return read_user_u64(qp + QP_CONTEXT);
}
/* A provider function from the context's legacy ops table (CTX_OPS_*). */
static __always_inline __u64 context_op(__u64 context, __u32 slot)
{
	return read_user_u64(context + slot);
}

/* The RTR attributes of ibv_modify_qp: peer QPN, destination GID, and the local GID's
 * table position (sgid_index, port); the device name of the QP's context. */
static __always_inline void read_rtr_attr(__u64 attr, __u64 context, __u32 *peer_qpn, __u8 dgid[16],
					  __u8 *sgid_index, __u8 *port, char *device, __u32 device_len)
{
	*peer_qpn = read_user_u32(attr + ATTR_DEST_QPN);
	bpf_probe_read_user(dgid, 16, (void *)(attr + ATTR_DGID));
	bpf_probe_read_user(sgid_index, 1, (void *)(attr + ATTR_SGID_INDEX));
	bpf_probe_read_user(port, 1, (void *)(attr + ATTR_AH_PORT));
	__u64 dev = read_user_u64(context + CTX_DEVICE);
	if (dev)
		bpf_probe_read_user_str(device, device_len, (void *)(dev + DEVICE_NAME));
}

/* Sum of the first `max_sges` scatter/gather lengths of a WR (bounded for the verifier). */
#define MAX_SGES 4
static __always_inline __u32 wr_total_length(__u64 wr)
{
	__u64 sg_list = read_user_u64(wr + WR_SG_LIST);
	int num_sge = (int)read_user_u32(wr + WR_NUM_SGE);
	__u32 bytes = 0;
	for (int s = 0; s < MAX_SGES && s < num_sge; s++)
		bytes += read_user_u32(sg_list + s * SGE_SIZE + SGE_LENGTH);
	return bytes;
}

/* One ibv_wc of an array. */
struct verbs_wc {
	__u64 wr_id;
	__u32 status, opcode, byte_len, qp_num;
};
static __always_inline void read_wc(__u64 entry, struct verbs_wc *wc)
{
	wc->status = read_user_u32(entry + WC_STATUS);
	wc->opcode = read_user_u32(entry + WC_OPCODE);
	wc->byte_len = read_user_u32(entry + WC_BYTE_LEN);
	wc->qp_num = read_user_u32(entry + WC_QP_NUM);
	wc->wr_id = read_user_u64(entry + WR_ID);
}

/* Extended CQs and the NIC clock (rdma-core 44, x86_64/aarch64 glibc: struct ibv_cq is 128 bytes,
 * the ibv_cq_ex fields after it are the provider's poll state and function pointers). */
#define QP_RECV_CQ 32
#define CQ_CONTEXT 0
#define CQ_EX_STATUS 132
#define CQ_EX_WR_ID 136
#define CQ_EX_START_POLL 144
#define CQ_EX_NEXT_POLL 152
#define CQ_EX_END_POLL 160
#define CQ_EX_READ_OPCODE 168
#define CQ_EX_READ_BYTE_LEN 184
#define CQ_EX_READ_QP_NUM 200
#define CQ_EX_READ_COMPLETION_TS 248
#define CQ_EX_READ_WALLCLOCK_NS 280
/* struct verbs_context ends with the ibv_context the application holds: its extension ops sit
 * below it. ibv_create_cq_ex / ibv_query_rt_values_ex are inline and call these two. */
#define CTX_ABI_COMPAT 320	    /* ibv_context.abi_compat: all ones for a verbs_context */
#define VCTX_SZ (-8)		    /* verbs_context.sz */
#define VCTX_CREATE_CQ_EX (-120)    /* verbs_context.create_cq_ex */
#define VCTX_QUERY_RT_VALUES (-128) /* verbs_context.query_rt_values */
#define IBV_CONTEXT_SIZE 328
#define VALUES_COMP_MASK 0 /* struct ibv_values_ex */
#define VALUES_RAW_CLOCK 8 /* struct timespec raw_clock */
#define VALUES_MASK_RAW_CLOCK 1

/* An extension op of the context, or 0 when the context is not a verbs_context or is too old
 * to have it (the test verbs_get_ctx_op makes before calling it). */
static __always_inline __u64 context_ext_op(__u64 context, __s32 slot)
{
	if (read_user_u64(context + CTX_ABI_COMPAT) != ~0ULL)
		return 0;
	if (read_user_u64(context + VCTX_SZ) < (__u64)(IBV_CONTEXT_SIZE - slot))
		return 0;
	return read_user_u64(context + slot);
}
