/* The extended-CQ side of rdma_verbs_pingpong: an ibv_create_cq_ex CQ, polled the way an
 * application wanting the NIC's completion stamps polls it (ibv_start_poll / ibv_next_poll /
 * ibv_end_poll, every field through ibv_wc_read_*), with the same result as ibv_poll_cq. */
#ifndef SKEWSCOPE_TESTS_RDMA_POLL_H
#define SKEWSCOPE_TESTS_RDMA_POLL_H

#include <infiniband/verbs.h>

struct poll_cq_ex {
	struct ibv_cq_ex *cq;
	int raw_ts, wallclock_ts; /* which stamps were asked for */
	long stamps_read, clock_samples;
	uint64_t last_stamp; /* the last stamp read (so it is used, as an app would) */
};

/* mode: "ts" (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP), "wallclock" (..._WALLCLOCK) or "plain"
 * (no stamp). Non-zero with errno set on failure. */
int poll_create_cq_ex(struct poll_cq_ex *p, struct ibv_context *ctx, int cqe, const char *mode);
/* At most n completions into wc, as ibv_poll_cq; -1 on error. */
int poll_cq_ex(struct poll_cq_ex *p, int n, struct ibv_wc *wc);
/* One reading of the NIC clock (ibv_query_rt_values_ex). */
void poll_sample_clock(struct poll_cq_ex *p, struct ibv_context *ctx);

#endif
