/* The lab's hand-built verbs provider: see rdma_lab_provider.h for what it is and why.
 *
 * This file is what libibverbs sees of it: the rdma-core private ABI, the device, its context and
 * the ops table, plus the PDs and MRs (which hold nothing of their own). Completion queues are in
 * rdma_lab_cq.c and rdma_lab_cq_ex.c, queue pairs (the lab's wire) in rdma_lab_qp.c. */
#define _GNU_SOURCE
#include "rdma_lab_provider.h"
#include "rdma_lab_internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

/* --- rdma-core 44 private ABI (IBVERBS_PRIVATE_34), declared for this provider only -------- */

/* struct verbs_context_ops is a table of 76 function pointers; verbs_set_ops() copies the
 * non-null ones. The slots this provider fills, as read from verbs_set_ops in Debian's
 * libibverbs 44.0 (each slot's store into the legacy ibv_context ops names it). */
enum lab_op_slot {
	SLOT_ALLOC_PD = 5,
	SLOT_CREATE_CQ = 15,
	SLOT_CREATE_CQ_EX = 16, /* libibverbs' own create_cq_ex (verbs_context) calls it */
	SLOT_CREATE_QP = 19,
	SLOT_DEALLOC_PD = 26,
	SLOT_DEREG_MR = 28,
	SLOT_DESTROY_CQ = 31,
	SLOT_DESTROY_QP = 34,
	SLOT_FREE_CONTEXT = 39,
	SLOT_MODIFY_QP = 47,
	SLOT_POLL_CQ = 53,
	SLOT_POST_RECV = 54,
	SLOT_POST_SEND = 55,
	SLOT_REG_MR = 68,
	SLOT_REQ_NOTIFY_CQ = 69,
	SLOT__COUNT = 76,
};
struct lab_context_ops {
	void *slot[SLOT__COUNT];
};

struct verbs_device;
struct lab_device_ops { /* struct verbs_device_ops */
	const char *name;
	uint32_t match_min_abi_version, match_max_abi_version;
	const void *match_table;
	const void **static_providers;
	void *match_device;
	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd, void *private_data);
	void *import_context;
	void *alloc_device;
	void (*uninit_device)(struct verbs_device *device);
};
struct lab_verbs_device { /* struct verbs_device */
	struct ibv_device device;
	const struct lab_device_ops *ops;
	atomic_int refcount;
	void *entry_next, *entry_prev;
	void *sysfs; /* NULL: libibverbs opens no /dev file and asks alloc_context with fd -1 */
	uint64_t core_support;
};
struct lab_verbs_mr { /* struct verbs_mr: libibverbs writes past ibv_mr */
	struct ibv_mr ibv_mr;
	int mr_type;
	int access;
};

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct lab_context_ops *ops);

/* --- protection domains and memory regions (CQs: rdma_lab_cq.c; QPs: rdma_lab_qp.c) ------------- */

static struct ibv_pd *lab_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (pd)
		pd->context = context;
	return pd;
}

static int lab_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

static struct ibv_mr *lab_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access)
{
	static atomic_uint next_key = 1;
	struct lab_verbs_mr *mr = calloc(1, sizeof(*mr));
	(void)hca_va;
	if (!mr)
		return NULL;
	mr->ibv_mr.context = pd->context;
	mr->ibv_mr.pd = pd;
	mr->ibv_mr.addr = addr;
	mr->ibv_mr.length = length;
	mr->ibv_mr.lkey = mr->ibv_mr.rkey = atomic_fetch_add(&next_key, 1);
	mr->access = access;
	return &mr->ibv_mr;
}

static int lab_dereg_mr(struct lab_verbs_mr *mr)
{
	free(mr);
	return 0;
}

static void lab_free_context(struct ibv_context *ibctx)
{
	struct lab_context *ctx =
		(struct lab_context *)((char *)ibctx - offsetof(struct lab_context, vctx.context));
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct lab_context_ops lab_ops = {.slot = {
						       [SLOT_ALLOC_PD] = lab_alloc_pd,
						       [SLOT_CREATE_CQ] = lab_create_cq,
						       [SLOT_CREATE_CQ_EX] = lab_create_cq_ex,
						       [SLOT_CREATE_QP] = lab_create_qp,
						       [SLOT_DEALLOC_PD] = lab_dealloc_pd,
						       [SLOT_DEREG_MR] = lab_dereg_mr,
						       [SLOT_DESTROY_CQ] = lab_destroy_cq,
						       [SLOT_DESTROY_QP] = lab_destroy_qp,
						       [SLOT_FREE_CONTEXT] = lab_free_context,
						       [SLOT_MODIFY_QP] = lab_modify_qp,
						       [SLOT_POLL_CQ] = lab_poll_cq,
						       [SLOT_POST_RECV] = lab_post_recv,
						       [SLOT_POST_SEND] = lab_post_send,
						       [SLOT_REG_MR] = lab_reg_mr,
						       [SLOT_REQ_NOTIFY_CQ] = lab_req_notify_cq,
					       }};

static struct verbs_context *lab_alloc_context(struct ibv_device *device, int cmd_fd, void *private_data)
{
	struct lab_context *ctx;
	(void)private_data;
	ctx = _verbs_init_and_alloc_context(device, cmd_fd, sizeof(*ctx),
					    (struct verbs_context *)offsetof(struct lab_context, vctx), 0);
	if (!ctx)
		return NULL;
	verbs_set_ops(&ctx->vctx, &lab_ops);
	/* The inline ibv_query_rt_values_ex calls this public verbs_context field, where
	 * verbs_set_ops would copy the op (libibverbs keeps no wrapper of its own for it): set
	 * directly, which needs no private slot number. */
	ctx->vctx.query_rt_values = lab_query_rt_values;
	return &ctx->vctx;
}

static void lab_uninit_device(struct verbs_device *device)
{
	(void)device;
}

static const struct lab_device_ops lab_device_ops = {
	.name = "skewscope_lab",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.alloc_context = lab_alloc_context,
	.uninit_device = lab_uninit_device,
};

/* Refcount 2: closing the last context must never free this static device. */
static struct lab_verbs_device lab_device = {
	.device = {.node_type = IBV_NODE_CA,
		   .transport_type = IBV_TRANSPORT_IB,
		   .name = "lab0",
		   .dev_name = "uverbs-lab0"},
	.ops = &lab_device_ops,
	.refcount = 2,
};

struct ibv_device *rdma_lab_device(void)
{
	return &lab_device.device;
}
