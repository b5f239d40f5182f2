/* rdma_verbs_pingpong's verbs calls, written as any RC application writes them: open the
 * device, PD, MR, CQ, QP; INIT -> RTR -> RTS; post receives and sends; poll; QP -> ERR at the
 * end. The one file that talks to libibverbs (through the lab device, rdma_lab_provider.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma_lab_provider.h"
#include "rdma_pingpong.h"

/* ibv_poll_cq, or the extended CQ's start/next/end_poll with the same result. */
int poll_some(struct verbs *v, int n, struct ibv_wc *wc)
{
	return v->ex.cq ? poll_cq_ex(&v->ex, n, wc) : ibv_poll_cq(v->cq, n, wc);
}

void open_verbs(struct verbs *v, long window, const char *cq_ex)
{
	v->window = window;
	v->ctx = ibv_open_device(rdma_lab_device());
	if (!v->ctx)
		DIE("ibv_open_device failed");
	v->pd = ibv_alloc_pd(v->ctx);
	v->buf = calloc((size_t)window + 1, MSG);
	v->mr = v->pd && v->buf ? ibv_reg_mr(v->pd, v->buf, (size_t)(window + 1) * MSG,
					     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
				: NULL;
	if (cq_ex) {
		if (poll_create_cq_ex(&v->ex, v->ctx, (int)(2 * window + 16), cq_ex))
			DIE("ibv_create_cq_ex (%s): %s", cq_ex, strerror(errno));
		v->cq = ibv_cq_ex_to_cq(v->ex.cq);
	} else {
		v->cq = ibv_create_cq(v->ctx, (int)(2 * window + 16), NULL, NULL, 0);
	}
	if (!v->pd || !v->mr || !v->cq)
		DIE("PD, MR or CQ failed");
	struct ibv_qp_init_attr qa = {.send_cq = v->cq,
				      .recv_cq = v->cq,
				      .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = (uint32_t)window,
					      .max_recv_wr = (uint32_t)window,
					      .max_send_sge = 1,
					      .max_recv_sge = 1}};
	v->qp = ibv_create_qp(v->pd, &qa);
	if (!v->qp)
		DIE("ibv_create_qp: %s", strerror(errno));
}

void connect_qp(struct verbs *v, const struct conn_info *peer)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.pkey_index = 0,
				.port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		DIE("INIT failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	if (ibv_modify_qp(v->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(v->qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("RTS failed");
}

void post_recv_slot(struct verbs *v, uint64_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(v->buf + slot * MSG), .length = MSG, .lkey = v->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;
	if (ibv_post_recv(v->qp, &wr, &bad))
		DIE("ibv_post_recv failed");
}

void post(struct verbs *v, enum ibv_wr_opcode op, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(v->buf + v->window * MSG), .length = len, .lkey = v->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .imm_data = htonl((uint32_t)wr_id)},
			   *bad;
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = 0;
	int rc = ibv_post_send(v->qp, &wr, &bad);
	if (rc)
		DIE("ibv_post_send: %s", strerror(rc));
	if (op == IBV_WR_RDMA_WRITE)
		v->writes++;
	else if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		v->write_imm++, v->sends++;
	else
		v->sends++;
}

void wait_recv(struct verbs *v)
{
	for (long spins = 0;; spins++) {
		struct ibv_wc wc[8];
		int n = poll_some(v, 8, wc), got = 0;
		if (n < 0)
			DIE("ibv_poll_cq failed");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				v->errors++;
				continue;
			}
			if (wc[i].opcode & IBV_WC_RECV) {
				v->recvs++;
				got++;
				post_recv_slot(v, wc[i].wr_id);
			} else {
				v->send_completions++;
			}
		}
		if (got)
			return;
		if (spins > 20000000)
			DIE("no message arrived");
		if (spins > 1000)
			usleep(50);
	}
}

void finish(struct verbs *v, int fd, const char *role)
{
	char x = 0, y;
	oob_exchange(fd, &x, &y, 1); /* both sides done: nothing is in flight any more */
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE))
		DIE("ERR failed");
	struct ibv_wc wc[16];
	int n;
	while ((n = poll_some(v, 16, wc)) > 0)
		for (int i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				v->flushed++;
			else if (wc[i].status != IBV_WC_SUCCESS)
				v->errors++;
			else if (!(wc[i].opcode & IBV_WC_RECV))
				v->send_completions++;
		}
	printf("{\"role\":\"%s\",\"pid\":%d,\"qpn\":%u,\"sends\":%ld,\"recvs\":%ld,\"writes\":%ld,"
	       "\"write_imm\":%ld,\"flushed\":%ld,\"errors\":%ld,\"send_completions\":%ld,"
	       "\"stamps_read\":%ld,\"clock_samples\":%ld}\n",
	       role, getpid(), v->qp->qp_num, v->sends, v->recvs, v->writes, v->write_imm, v->flushed,
	       v->errors, v->send_completions, v->ex.stamps_read, v->ex.clock_samples);
	fflush(stdout);
	ibv_destroy_qp(v->qp);
	ibv_destroy_cq(v->cq);
	ibv_dereg_mr(v->mr);
	ibv_dealloc_pd(v->pd);
	ibv_close_device(v->ctx);
	free(v->buf);
	close(fd);
}
