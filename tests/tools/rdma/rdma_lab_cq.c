/* The lab provider's plain completion queues: a ring of work completions, each stamped on the
 * simulated NIC clock as it goes in (rdma_lab_cq_ex.c reads the stamps), filled by the QPs
 * (rdma_lab_qp.c) and drained by ibv_poll_cq. A file of its own because both kinds of CQ, plain
 * and extended, share this ring, while the device and its ops table (rdma_lab_provider.c) only
 * point at it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "rdma_lab_internal.h"

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

struct ibv_cq *lab_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
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

int lab_destroy_cq(struct ibv_cq *ibcq)
{
	struct lab_cq *cq = (struct lab_cq *)ibcq;
	free(cq->ring);
	free(cq->stamps);
	free(cq);
	return 0;
}

int lab_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)cq;
	(void)solicited_only;
	return EOPNOTSUPP;
}

int lab_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct lab_cq *cq = (struct lab_cq *)ibcq;
	int got = 0;
	lab_cq_deliver(cq);
	while (got < n && lab_cq_pop(cq, &wc[got], NULL))
		got++;
	return got;
}
