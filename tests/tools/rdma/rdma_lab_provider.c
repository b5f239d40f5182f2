/* The lab's hand-built verbs provider: see rdma_lab_provider.h for what it is and why. */
#define _GNU_SOURCE
#include "rdma_lab_provider.h"
#include "rdma_lab_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* --- the provider's objects ---------------------------------------------------------------- */

int lab_cq_push(struct lab_cq *cq, const struct ibv_wc *wc)
{
	if (cq->count == cq->capacity)
		return ENOMEM; /* CQ overrun: the application polls too little */
	unsigned slot = (cq->head + cq->count) % cq->capacity;
	cq->ring[slot] = *wc;
	cq->stamps[slot] = lab_nic_now();
	cq->count++;
	return 0;
}

int lab_cq_pop(struct lab_cq *cq, struct ibv_wc *wc, struct lab_stamp *stamp)
{
	if (!cq->count)
		return 0;
	*wc = cq->ring[cq->head];
	if (stamp)
		*stamp = cq->stamps[cq->head];
	cq->head = (cq->head + 1) % cq->capacity;
	cq->count--;
	return 1;
}

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

static struct ibv_cq *lab_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct lab_cq *cq = calloc(1, sizeof(*cq));
	(void)channel;
	(void)comp_vector;
	if (!cq || cqe <= 0)
		goto fail;
	cq->capacity = (unsigned)cqe;
	cq->ring = calloc(cq->capacity, sizeof(*cq->ring));
	cq->stamps = calloc(cq->capacity, sizeof(*cq->stamps));
	if (!cq->ring || !cq->stamps)
		goto fail;
	cq->cq.context = context;
	cq->cq.cqe = cqe;
	return &cq->cq;
fail:
	if (cq) {
		free(cq->ring);
		free(cq->stamps);
	}
	free(cq);
	errno = EINVAL;
	return NULL;
}

static int lab_destroy_cq(struct ibv_cq *ibcq)
{
	struct lab_cq *cq = (struct lab_cq *)ibcq;
	free(cq->ring);
	free(cq->stamps);
	free(cq);
	return 0;
}

static int lab_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)cq;
	(void)solicited_only;
	return EOPNOTSUPP;
}

static struct ibv_qp *lab_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct lab_cq *rcq = (struct lab_cq *)attr->recv_cq;
	struct sockaddr_in self = {.sin_family = AF_INET};
	socklen_t len = sizeof(self);
	struct lab_qp *qp;
	int slot;

	if (attr->qp_type != IBV_QPT_RC || attr->srq || !attr->send_cq || !rcq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	for (slot = 0; slot < LAB_MAX_QPS_PER_CQ && rcq->recv_qps[slot]; slot++)
		;
	if (slot == LAB_MAX_QPS_PER_CQ) {
		errno = ENOMEM;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int big = 4 << 20; /* RC does not drop: give the socket room for a burst */
	if (qp->sock < 0 || setsockopt(qp->sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)) ||
	    bind(qp->sock, (struct sockaddr *)&self, sizeof(self)) ||
	    getsockname(qp->sock, (struct sockaddr *)&self, &len)) {
		int saved = errno;
		if (qp->sock >= 0)
			close(qp->sock);
		free(qp);
		errno = saved;
		return NULL;
	}
	qp->qp.context = pd->context;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.qp_num = ntohs(self.sin_port); /* the QPN is the port the peer sends to */
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	qp->sq_sig_all = attr->sq_sig_all;
	rcq->recv_qps[slot] = qp;
	return &qp->qp;
}

static void flush_recvs(struct lab_qp *qp)
{
	while (qp->recv_count) {
		struct ibv_wc wc = {.wr_id = qp->recvs[qp->recv_head].wr_id,
				    .status = IBV_WC_WR_FLUSH_ERR,
				    .opcode = IBV_WC_RECV,
				    .qp_num = qp->qp.qp_num};
		if (lab_cq_push((struct lab_cq *)qp->qp.recv_cq, &wc))
			break;
		qp->recv_head = (qp->recv_head + 1) % LAB_MAX_RECVS;
		qp->recv_count--;
	}
}

static int lab_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct lab_qp *qp = (struct lab_qp *)ibqp;
	if (!(mask & IBV_QP_STATE))
		return 0;
	if (attr->qp_state == IBV_QPS_RTR) {
		const uint8_t *gid = attr->ah_attr.grh.dgid.raw;
		struct sockaddr_in peer = {.sin_family = AF_INET};
		static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (!(mask & IBV_QP_DEST_QPN) || !(mask & IBV_QP_AV) || !attr->ah_attr.is_global ||
		    memcmp(gid, v4_mapped, sizeof(v4_mapped)) || attr->dest_qp_num > 0xffff)
			return EINVAL; /* the lab routes by IPv4-mapped GID and a 16-bit QPN */
		memcpy(&peer.sin_addr, gid + 12, 4);
		peer.sin_port = htons((uint16_t)attr->dest_qp_num);
		if (connect(qp->sock, (struct sockaddr *)&peer, sizeof(peer)))
			return errno;
	}
	if (attr->qp_state == IBV_QPS_ERR)
		flush_recvs(qp);
	ibqp->state = attr->qp_state;
	return 0;
}

static int lab_destroy_qp(struct ibv_qp *ibqp)
{
	struct lab_qp *qp = (struct lab_qp *)ibqp;
	struct lab_cq *rcq = (struct lab_cq *)ibqp->recv_cq;
	for (int i = 0; i < LAB_MAX_QPS_PER_CQ; i++)
		if (rcq->recv_qps[i] == qp)
			rcq->recv_qps[i] = NULL;
	close(qp->sock);
	free(qp);
	return 0;
}

static int lab_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct lab_qp *qp = (struct lab_qp *)ibqp;
	for (; wr; wr = wr->next) {
		if (qp->recv_count == LAB_MAX_RECVS || wr->num_sge != 1) {
			*bad = wr;
			return ENOMEM;
		}
		struct lab_recv *r = &qp->recvs[(qp->recv_head + qp->recv_count) % LAB_MAX_RECVS];
		r->wr_id = wr->wr_id;
		r->addr = (void *)(uintptr_t)wr->sg_list[0].addr;
		r->length = wr->sg_list[0].length;
		qp->recv_count++;
	}
	return 0;
}

static int lab_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	static char buf[sizeof(struct lab_header) + LAB_MAX_MSG];
	struct lab_qp *qp = (struct lab_qp *)ibqp;
	for (; wr; wr = wr->next) {
		struct lab_header h = {.opcode = (uint8_t)wr->opcode, .imm = wr->imm_data};
		size_t len = sizeof(h);
		enum ibv_wc_opcode done;
		switch (wr->opcode) {
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM: done = IBV_WC_SEND; break;
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM: done = IBV_WC_RDMA_WRITE; break;
		default: *bad = wr; return EINVAL;
		}
		if (qp->qp.state != IBV_QPS_RTS) {
			*bad = wr;
			return EINVAL;
		}
		memcpy(buf, &h, sizeof(h));
		for (int i = 0; i < wr->num_sge; i++) {
			if (len + wr->sg_list[i].length > sizeof(buf)) {
				*bad = wr;
				return EMSGSIZE;
			}
			memcpy(buf + len, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		if (send(qp->sock, buf, len, 0) != (ssize_t)len) {
			*bad = wr;
			return errno ? errno : EIO;
		}
		if (qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED)) {
			struct ibv_wc wc = {.wr_id = wr->wr_id,
					    .status = IBV_WC_SUCCESS,
					    .opcode = done,
					    .byte_len = (uint32_t)(len - sizeof(h)),
					    .qp_num = qp->qp.qp_num};
			if (lab_cq_push((struct lab_cq *)qp->qp.send_cq, &wc)) {
				*bad = wr;
				return ENOMEM;
			}
		}
	}
	return 0;
}

/* Takes arrived messages into posted receives: a message that finds no receive waits in the
 * socket, as an RNR retry would. An RDMA WRITE consumes no receive and completes nothing here. */
static void deliver(struct lab_cq *cq, struct lab_qp *qp)
{
	static char buf[sizeof(struct lab_header) + LAB_MAX_MSG];
	while (qp->recv_count && cq->count < cq->capacity && qp->qp.state != IBV_QPS_ERR) {
		ssize_t n = recv(qp->sock, buf, sizeof(buf), MSG_DONTWAIT);
		struct lab_header h;
		if (n < (ssize_t)sizeof(h))
			return;
		memcpy(&h, buf, sizeof(h));
		uint32_t bytes = (uint32_t)(n - (ssize_t)sizeof(h));
		if (h.opcode == IBV_WR_RDMA_WRITE)
			continue;
		struct lab_recv *r = &qp->recvs[qp->recv_head];
		qp->recv_head = (qp->recv_head + 1) % LAB_MAX_RECVS;
		qp->recv_count--;
		struct ibv_wc wc = {.wr_id = r->wr_id, .qp_num = qp->qp.qp_num, .byte_len = bytes};
		if (h.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM; /* the data went to the MR; only imm here */
			wc.wc_flags = IBV_WC_WITH_IMM;
			wc.imm_data = h.imm;
			wc.status = IBV_WC_SUCCESS;
		} else if (bytes > r->length) {
			wc.opcode = IBV_WC_RECV;
			wc.status = IBV_WC_LOC_LEN_ERR;
		} else {
			memcpy(r->addr, buf + sizeof(h), bytes);
			wc.opcode = IBV_WC_RECV;
			wc.status = IBV_WC_SUCCESS;
			if (h.opcode == IBV_WR_SEND_WITH_IMM) {
				wc.wc_flags = IBV_WC_WITH_IMM;
				wc.imm_data = h.imm;
			}
		}
		lab_cq_push(cq, &wc);
	}
}

void lab_cq_deliver(struct lab_cq *cq)
{
	for (int i = 0; i < LAB_MAX_QPS_PER_CQ; i++)
		if (cq->recv_qps[i])
			deliver(cq, cq->recv_qps[i]);
}

static int lab_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct lab_cq *cq = (struct lab_cq *)ibcq;
	int got = 0;
	lab_cq_deliver(cq);
	while (got < n && lab_cq_pop(cq, &wc[got], NULL))
		got++;
	return got;
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
