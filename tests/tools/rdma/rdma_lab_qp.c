/* The lab provider's RC queue pairs: each a UDP socket whose port is its QPN, connected to the
 * peer's IPv4-mapped GID at RTR. Posting a send puts one message (a lab_header, then the data) on
 * the socket; a poll of the receive CQ takes arrived messages into posted receives. A file of its
 * own because it is the lab's wire, the one part that stands in for a NIC's transport. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdma_lab_internal.h"

struct ibv_qp *lab_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
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

int lab_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
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

int lab_destroy_qp(struct ibv_qp *ibqp)
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

int lab_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
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

int lab_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
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
