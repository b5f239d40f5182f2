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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma_pingpong.h"

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
