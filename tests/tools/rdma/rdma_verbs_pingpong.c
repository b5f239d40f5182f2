/* Ordinary RC verbs code, as an application writes it: open the device, PD, MR, CQ, QP,
 * exchange QPN and GID out of band (TCP), INIT -> RTR -> RTS, post receives, post sends, poll.
 * Run against the lab's hand-built provider (rdma_lab_provider.h); nothing in it knows the agent.
 *
 *   rdma_verbs_pingpong --listen ADDR:PORT --local ADDR [--count N] ...    (server: answers)
 *   rdma_verbs_pingpong --connect ADDR:PORT --local ADDR [--count N] ...   (client: asks)
 *   rdma_verbs_pingpong --bench N                                          (cost per verb call)
 *
 * --cq-ex ts|wallclock|plain: the CQ is an extended one (ibv_create_cq_ex) asking for completion
 * timestamps (raw NIC clock or wall clock; plain: none), polled with ibv_start_poll/next_poll and
 * read with ibv_wc_read_*, as an application wanting the NIC's stamps does (rdma_poll.c).
 * --rt-sample-ms M: with --cq-ex, read the NIC clock (ibv_query_rt_values_ex) twice 200 ms apart
 * before the first message (a baseline to measure its rate over), then every M ms, as an
 * application relating NIC stamps to its own clock would; 0 (default): never.
 *
 * The client sends N messages (every --imm-every'th as RDMA_WRITE_WITH_IMM, the rest SEND), each
 * answered by a SEND from the server, plus --writes RDMA WRITEs (no receive completion). At the
 * end both sides move their QP to ERR, which flushes --window posted receives each.
 * Prints one JSON line of what it did, so a test can compare with what the agent saw. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdma_lab_provider.h"
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

/* ibv_poll_cq, or the extended CQ's start/next/end_poll with the same result. */
static int poll_some(struct verbs *v, int n, struct ibv_wc *wc)
{
	return v->ex.cq ? poll_cq_ex(&v->ex, n, wc) : ibv_poll_cq(v->cq, n, wc);
}

static void split_addr(const char *text, struct sockaddr_in *out)
{
	char host[64];
	const char *colon = strrchr(text, ':');
	if (!colon || (size_t)(colon - text) >= sizeof(host))
		DIE("bad ADDR:PORT '%s'", text);
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = 0;
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
		DIE("bad address '%s'", host);
}

static int oob_connect(const struct options *o)
{
	struct sockaddr_in a;
	int one = 1, fd;
	if (o->listen) {
		split_addr(o->listen, &a);
		int l = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			DIE("listen %s: %s", o->listen, strerror(errno));
		printf("{\"listening\":true}\n");
		fflush(stdout);
		fd = accept(l, NULL, NULL);
		close(l);
	} else {
		split_addr(o->connect, &a);
		for (int tries = 0;; tries++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
				break;
			close(fd);
			if (tries == 100)
				DIE("connect %s: %s", o->connect, strerror(errno));
			usleep(50000);
		}
	}
	if (fd < 0)
		DIE("accept: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void oob_exchange(int fd, const void *mine, void *theirs, size_t len)
{
	if (write(fd, mine, len) != (ssize_t)len)
		DIE("out-of-band write: %s", strerror(errno));
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)theirs + got, len - got);
		if (n <= 0)
			DIE("out-of-band read: peer gone");
		got += (size_t)n;
	}
}

static void open_verbs(struct verbs *v, long window, const char *cq_ex)
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

static void connect_qp(struct verbs *v, const struct conn_info *peer)
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

static void post_recv_slot(struct verbs *v, uint64_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(v->buf + slot * MSG), .length = MSG, .lkey = v->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;
	if (ibv_post_recv(v->qp, &wr, &bad))
		DIE("ibv_post_recv failed");
}

static void post(struct verbs *v, enum ibv_wr_opcode op, uint32_t len, uint64_t wr_id)
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

/* Polls until one receive completes (reposting its slot); counts everything else it sees. */
static void wait_recv(struct verbs *v)
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

static void finish(struct verbs *v, int fd, const char *role)
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

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Cost per verb call on a QP connected to itself over loopback: what a uprobe adds shows as the
 * difference between a run with the agent and one without. */
static void bench(long n, const char *cq_ex)
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

static void maybe_sample(struct verbs *v, const struct options *o, double *last)
{
	if (!o->cq_ex || o->rt_sample_ms <= 0 || now_s() - *last < (double)o->rt_sample_ms / 1000)
		return;
	poll_sample_clock(&v->ex, v->ctx);
	*last = now_s();
}

int main(int argc, char **argv)
{
	struct options o = {.count = 100, .imm_every = 0, .window = 8, .size = 256};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val)
			DIE("%s needs a value", a);
		if (!strcmp(a, "--listen"))
			o.listen = val;
		else if (!strcmp(a, "--connect"))
			o.connect = val;
		else if (!strcmp(a, "--local"))
			o.local = val;
		else if (!strcmp(a, "--count"))
			o.count = atol(val);
		else if (!strcmp(a, "--writes"))
			o.writes = atol(val);
		else if (!strcmp(a, "--imm-every"))
			o.imm_every = atol(val);
		else if (!strcmp(a, "--window"))
			o.window = atol(val);
		else if (!strcmp(a, "--size"))
			o.size = atol(val);
		else if (!strcmp(a, "--bench"))
			o.bench = atol(val);
		else if (!strcmp(a, "--cq-ex"))
			o.cq_ex = val;
		else if (!strcmp(a, "--rt-sample-ms"))
			o.rt_sample_ms = atol(val);
		else
			DIE("unknown option %s", a);
		i++;
	}
	if (o.bench > 0) {
		bench(o.bench, o.cq_ex);
		return 0;
	}
	if (!!o.listen == !!o.connect || !o.local || o.count < 0 || o.window < 1 || o.window > 1024 ||
	    o.size < 1 || o.size > MSG)
		DIE("usage: --listen|--connect ADDR:PORT --local ADDR [--count N --writes W --imm-every K "
		    "--window W --size B]");

	struct conn_info mine = {.gid = {[10] = 0xff, [11] = 0xff}}, theirs;
	if (inet_pton(AF_INET, o.local, mine.gid + 12) != 1)
		DIE("bad --local '%s'", o.local);
	int fd = oob_connect(&o); /* before the device: many applications meet their peer first */
	struct verbs v = {0};
	open_verbs(&v, o.window, o.cq_ex);
	mine.qpn = v.qp->qp_num;
	oob_exchange(fd, &mine, &theirs, sizeof(mine));
	connect_qp(&v, &theirs);
	for (long s = 0; s < o.window; s++)
		post_recv_slot(&v, (uint64_t)s);
	char x = 0, y;
	if (o.cq_ex && o.rt_sample_ms > 0) { /* calibrate: two NIC clock readings 200 ms apart */
		poll_sample_clock(&v.ex, v.ctx);
		usleep(200000);
		poll_sample_clock(&v.ex, v.ctx);
	}
	oob_exchange(fd, &x, &y, 1); /* both have receives posted before the first send */
	double last_sample = now_s();

	if (o.connect) {
		for (long w = 0; w < o.writes; w++)
			post(&v, IBV_WR_RDMA_WRITE, (uint32_t)o.size, 1000000 + (uint64_t)w);
		for (long i = 0; i < o.count; i++) {
			int imm = o.imm_every > 0 && i % o.imm_every == o.imm_every - 1;
			post(&v, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND, (uint32_t)o.size,
			     (uint64_t)i);
			wait_recv(&v);
			maybe_sample(&v, &o, &last_sample);
		}
	} else {
		for (long i = 0; i < o.count; i++) {
			wait_recv(&v);
			post(&v, IBV_WR_SEND, (uint32_t)o.size, (uint64_t)i);
			maybe_sample(&v, &o, &last_sample);
		}
	}
	finish(&v, fd, o.connect ? "client" : "server");
	return 0;
}
