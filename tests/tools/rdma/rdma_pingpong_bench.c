/* rdma_verbs_pingpong --bench: the cost of each verb call, measured on one QP connected to
 * itself. A mode apart from the ping-pong (no peer, no out-of-band channel), hence its own file. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "rdma_pingpong.h"

double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Cost per verb call on a QP connected to itself over loopback: what a uprobe adds shows as the
 * difference between a run with the agent and one without. */
void bench(long n, const char *cq_ex)
{
	struct verbs v = {0};
	open_verbs(&v, 64, cq_ex);
	struct conn_info self = {.qpn = v.qp->qp_num,
				 .gid = {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1}};
	connect_qp(&v, &self);
	double post_s = 0, poll_hit_s = 0, poll_empty_s = 0;
	long polled = 0;
	for (long done = 0; done < n; done += 32) {
		for (int i = 0; i < 32; i++)
			post_recv_slot(&v, (uint64_t)i);
		double t0 = now_s();
		for (int i = 0; i < 32; i++)
			post(&v, IBV_WR_SEND, 64, (uint64_t)i);
		double t1 = now_s();
		struct ibv_wc wc[1];
		int got = 0;
		while (got < 64) { /* 32 send + 32 receive completions, one per call */
			int k = poll_some(&v, 1, wc);
			if (k < 0)
				DIE("poll failed");
			got += k;
			polled++;
		}
		double t2 = now_s();
		for (int i = 0; i < 64; i++)
			poll_some(&v, 1, wc);
		double t3 = now_s();
		post_s += t1 - t0;
		poll_hit_s += t2 - t1;
		poll_empty_s += t3 - t2;
	}
	long rounds = (n + 31) / 32;
	printf("{\"post_send_ns\":%.0f,\"poll_cq_with_completion_ns\":%.0f,\"poll_cq_empty_ns\":%.0f,"
	       "\"post_send_calls\":%ld,\"poll_calls\":%ld}\n",
	       post_s * 1e9 / (double)(rounds * 32), poll_hit_s * 1e9 / (double)polled,
	       poll_empty_s * 1e9 / (double)(rounds * 64), rounds * 32, polled);
}
