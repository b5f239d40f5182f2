/* The lab provider's objects, shared by rdma_lab_provider.c (device, context, ops table, PDs,
 * MRs), rdma_lab_cq.c (plain CQs), rdma_lab_qp.c (QPs over UDP) and rdma_lab_cq_ex.c (extended
 * CQs, the simulated NIC clock). Private to the provider. */
#ifndef SKEWSCOPE_TESTS_RDMA_LAB_INTERNAL_H
#define SKEWSCOPE_TESTS_RDMA_LAB_INTERNAL_H

#include <infiniband/verbs.h>
#include <stdint.h>

enum { LAB_MAX_QPS_PER_CQ = 64, LAB_MAX_RECVS = 4096, LAB_MAX_MSG = 65000 };

struct lab_header {	/* precedes each message on the wire */
	uint8_t opcode; /* enum ibv_wr_opcode */
	uint8_t pad[3];
	uint32_t imm; /* network order, as the application gave it */
};

struct lab_recv {
	uint64_t wr_id;
	void *addr;
	uint32_t length;
};

struct lab_qp {
	struct ibv_qp qp; /* first: libibverbs and the application see only this */
	int sock;
	struct lab_recv recvs[LAB_MAX_RECVS]; /* posted receives, a ring */
	unsigned recv_head, recv_count;
	int sq_sig_all;
};

/* When the lab NIC completed a work request, on its two clocks (rdma_lab_cq_ex.c). */
struct lab_stamp {
	uint64_t raw;	       /* NIC clock cycles */
	uint64_t wallclock_ns; /* the NIC's real-time clock */
};

struct lab_cq {
	union { /* an extended CQ starts with the same ibv_cq: libibverbs passes either */
		struct ibv_cq cq;
		struct ibv_cq_ex ex;
	};
	struct ibv_wc *ring;
	struct lab_stamp *stamps; /* one per ring slot */
	unsigned capacity, head, count;
	struct lab_qp *recv_qps[LAB_MAX_QPS_PER_CQ]; /* QPs whose receives complete here */
	uint64_t wc_flags;			     /* extended: what the application asked for */
	struct ibv_wc current;			     /* extended: the completion start/next_poll took */
	struct lab_stamp current_stamp;
};

struct lab_context {
	struct verbs_context vctx;
};

/* A completion into the CQ's ring, stamped now; ENOMEM on overrun. */
int lab_cq_push(struct lab_cq *cq, const struct ibv_wc *wc);
/* Takes arrived messages of the CQ's QPs into their posted receives (completions). */
void lab_cq_deliver(struct lab_cq *cq);
/* The ring's oldest completion out, into *wc and *stamp; 0 when empty. */
int lab_cq_pop(struct lab_cq *cq, struct ibv_wc *wc, struct lab_stamp *stamp);
struct lab_stamp lab_nic_now(void);

/* The verbs ops of plain CQs (rdma_lab_cq.c), for the ops table. */
struct ibv_cq *lab_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
			     int comp_vector);
int lab_destroy_cq(struct ibv_cq *ibcq);
int lab_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int lab_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);

/* The verbs ops of QPs (rdma_lab_qp.c), for the ops table. */
struct ibv_qp *lab_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int lab_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask);
int lab_destroy_qp(struct ibv_qp *ibqp);
int lab_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int lab_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);

/* The extended CQs' ops (rdma_lab_cq_ex.c). */
struct ibv_cq_ex *lab_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
int lab_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);

#endif
