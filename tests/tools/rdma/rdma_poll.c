#include "rdma_poll.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int poll_create_cq_ex(struct poll_cq_ex *p, struct ibv_context *ctx, int cqe, const char *mode)
{
	struct ibv_cq_init_attr_ex attr = {.cqe = (uint32_t)cqe,
					   .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM};
	if (!strcmp(mode, "ts")) {
		p->raw_ts = 1;
		attr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	} else if (!strcmp(mode, "wallclock")) {
		p->wallclock_ts = 1;
		attr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	} else if (strcmp(mode, "plain")) {
		errno = EINVAL;
		return -1;
	}
	p->cq = ibv_create_cq_ex(ctx, &attr);
	return p->cq ? 0 : -1;
}

/* The current completion, read field by field. Only a successful one has an opcode. */
static void read_current(struct poll_cq_ex *p, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = p->cq->wr_id;
	wc->status = p->cq->status;
	if (wc->status != IBV_WC_SUCCESS)
		return;
	wc->opcode = ibv_wc_read_opcode(p->cq);
	wc->qp_num = ibv_wc_read_qp_num(p->cq);
	wc->byte_len = ibv_wc_read_byte_len(p->cq);
	if (p->raw_ts) {
		p->last_stamp = ibv_wc_read_completion_ts(p->cq);
		p->stamps_read++;
	} else if (p->wallclock_ts) {
		p->last_stamp = ibv_wc_read_completion_wallclock_ns(p->cq);
		p->stamps_read++;
	}
}

int poll_cq_ex(struct poll_cq_ex *p, int n, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr attr = {0};
	int rc = ibv_start_poll(p->cq, &attr), got = 0;
	if (rc == ENOENT)
		return 0; /* empty: end_poll must not be called */
	if (rc)
		return -1;
	for (;;) {
		read_current(p, &wc[got++]);
		if (got == n)
			break;
		rc = ibv_next_poll(p->cq);
		if (rc == ENOENT)
			break;
		if (rc) {
			ibv_end_poll(p->cq);
			return -1;
		}
	}
	ibv_end_poll(p->cq);
	return got;
}

void poll_sample_clock(struct poll_cq_ex *p, struct ibv_context *ctx)
{
	struct ibv_values_ex values = {.comp_mask = IBV_VALUES_MASK_RAW_CLOCK};
	int rc = ibv_query_rt_values_ex(ctx, &values);
	if (rc) {
		fprintf(stderr, "rdma_verbs_pingpong: ibv_query_rt_values_ex: %s\n", strerror(rc));
		return;
	}
	p->clock_samples++;
}
