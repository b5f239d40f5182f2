/* What the parts of rdma_verbs_pingpong share: its options, its verbs objects and counters, the
 * out-of-band exchange (rdma_pingpong_oob.c), the verbs calls (rdma_pingpong_verbs.c) and the
 * cost benchmark (rdma_pingpong_bench.c). rdma_verbs_pingpong.c says what the program does. */
#ifndef SKEWSCOPE_TESTS_RDMA_PINGPONG_H
#define SKEWSCOPE_TESTS_RDMA_PINGPONG_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rdma_poll.h"

#define DIE(...)                                                      \
	do {                                                          \
		fprintf(stderr, "rdma_verbs_pingpong: " __VA_ARGS__); \
		fputc('\n', stderr);                                  \
		exit(1);                                              \
	} while (0)

enum { MSG = 4096 };

struct options {
	const char *listen, *connect, *local;
	long count, writes, imm_every, window, size, bench, rt_sample_ms;
	const char *cq_ex;
};

struct conn_info {
	uint32_t qpn;
	uint8_t gid[16];
};

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct poll_cq_ex ex; /* --cq-ex: the extended CQ (cq is its ibv_cq) */
	struct ibv_qp *qp;
	char *buf; /* window receive slots, then one send slot */
	long window;
	long sends, send_completions, recvs, writes, write_imm, flushed, errors;
};

/* Out of band (rdma_pingpong_oob.c): a TCP connection to the peer (--listen or --connect), and
 * len bytes each way over it. */
int oob_connect(const struct options *o);
void oob_exchange(int fd, const void *mine, void *theirs, size_t len);

/* The verbs side (rdma_pingpong_verbs.c). */
/* ibv_poll_cq, or the extended CQ's start/next/end_poll with the same result. */
int poll_some(struct verbs *v, int n, struct ibv_wc *wc);
/* Device, PD, MR, CQ (extended with cq_ex) and an RC QP, for window receives. */
void open_verbs(struct verbs *v, long window, const char *cq_ex);
/* INIT -> RTR -> RTS towards the peer's QPN and GID. */
void connect_qp(struct verbs *v, const struct conn_info *peer);
void post_recv_slot(struct verbs *v, uint64_t slot);
/* One signalled work request of op from the send slot, counted. */
void post(struct verbs *v, enum ibv_wr_opcode op, uint32_t len, uint64_t wr_id);
/* Polls until one receive completes (reposting its slot); counts everything else it sees. */
void wait_recv(struct verbs *v);
/* Meets the peer, moves the QP to ERR, counts the flush, prints the JSON line, frees all. */
void finish(struct verbs *v, int fd, const char *role);

/* The benchmark (rdma_pingpong_bench.c). */
double now_s(void);
/* Cost per verb call on a QP connected to itself over loopback (--bench N). */
void bench(long n, const char *cq_ex);

#endif
