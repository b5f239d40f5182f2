/* The lab provider's extended CQs (ibv_create_cq_ex) and its simulated NIC clock.
 *
 * The NIC clock counts cycles at LAB_NIC_HZ from an arbitrary origin, driven by
 * CLOCK_MONOTONIC_RAW: like a real NIC's oscillator it is not disciplined by NTP, so it drifts
 * against CLOCK_MONOTONIC by whatever NTP corrects. Its real-time clock (the wallclock stamp)
 * reads CLOCK_REALTIME, as a NIC's PHC kept in step with the host's clock would, plus
 * SKEWSCOPE_LAB_NIC_WALLCLOCK_OFFSET_NS if set (a PHC kept in TAI is 37 s ahead of UTC).
 * A completion is stamped when the provider puts it into the CQ: for a receive, when its message
 * is taken off the socket, before the poll that returns it. Function pointers are set per CQ as
 * mlx5 does: the read functions of fields the application did not ask for stay NULL. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma_lab_internal.h"

enum { LAB_NIC_HZ = 156250000 };			  /* 156.25 MHz, a common NIC core clock */
static const uint64_t LAB_NIC_ORIGIN = 0x5a5a00000000ULL; /* cycles at CLOCK_MONOTONIC_RAW 0 */

static int64_t wallclock_offset_ns(void)
{
	static int64_t offset = -1;
	if (offset < 0) {
		const char *text = getenv("SKEWSCOPE_LAB_NIC_WALLCLOCK_OFFSET_NS");
		offset = text ? strtoll(text, NULL, 10) : 0;
	}
	return offset;
}

struct lab_stamp lab_nic_now(void)
{
	struct timespec raw, real;
	clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
	clock_gettime(CLOCK_REALTIME, &real);
	unsigned __int128 ns = (unsigned __int128)raw.tv_sec * 1000000000u + (unsigned)raw.tv_nsec;
	struct lab_stamp s = {
		.raw = LAB_NIC_ORIGIN + (uint64_t)(ns * LAB_NIC_HZ / 1000000000u),
		.wallclock_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec +
				(uint64_t)wallclock_offset_ns(),
	};
	return s;
}

/* As mlx5 does: the raw clock's cycle count in tv_nsec, tv_sec 0. */
int lab_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)lab_nic_now().raw;
	}
	return 0;
}

static struct lab_cq *of(struct ibv_cq_ex *ex)
{
	return (struct lab_cq *)ex;
}

static int take(struct lab_cq *cq)
{
	if (!lab_cq_pop(cq, &cq->current, &cq->current_stamp))
		return ENOENT;
	cq->ex.status = cq->current.status;
	cq->ex.wr_id = cq->current.wr_id;
	return 0;
}

static int lab_start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask)
		return EINVAL;
	lab_cq_deliver(of(ex));
	return take(of(ex));
}

static int lab_next_poll(struct ibv_cq_ex *ex)
{
	return take(of(ex));
}

static void lab_end_poll(struct ibv_cq_ex *ex)
{
	(void)ex;
}

static enum ibv_wc_opcode lab_read_opcode(struct ibv_cq_ex *ex)
{
	return of(ex)->current.opcode;
}
static uint32_t lab_read_vendor_err(struct ibv_cq_ex *ex)
{
	return of(ex)->current.vendor_err;
}
static uint32_t lab_read_byte_len(struct ibv_cq_ex *ex)
{
	return of(ex)->current.byte_len;
}
static __be32 lab_read_imm_data(struct ibv_cq_ex *ex)
{
	return of(ex)->current.imm_data;
}
static uint32_t lab_read_qp_num(struct ibv_cq_ex *ex)
{
	return of(ex)->current.qp_num;
}
static unsigned int lab_read_wc_flags(struct ibv_cq_ex *ex)
{
	return of(ex)->current.wc_flags;
}
static uint64_t lab_read_completion_ts(struct ibv_cq_ex *ex)
{
	return of(ex)->current_stamp.raw;
}
static uint64_t lab_read_completion_wallclock_ns(struct ibv_cq_ex *ex)
{
	return of(ex)->current_stamp.wallclock_ns;
}

struct ibv_cq_ex *lab_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	const uint64_t supported = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
				   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	if (attr->wc_flags & ~supported || attr->comp_mask || attr->cqe == 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct lab_cq *cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->capacity = attr->cqe;
	cq->ring = calloc(cq->capacity, sizeof(*cq->ring));
	cq->stamps = calloc(cq->capacity, sizeof(*cq->stamps));
	if (!cq->ring || !cq->stamps) {
		free(cq->ring);
		free(cq->stamps);
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->ex.context = context;
	cq->ex.channel = attr->channel;
	cq->ex.cq_context = attr->cq_context;
	cq->ex.cqe = (int)attr->cqe;
	pthread_mutex_init(&cq->ex.mutex, NULL);
	pthread_cond_init(&cq->ex.cond, NULL);
	cq->wc_flags = attr->wc_flags;
	cq->ex.start_poll = lab_start_poll;
	cq->ex.next_poll = lab_next_poll;
	cq->ex.end_poll = lab_end_poll;
	cq->ex.read_opcode = lab_read_opcode;
	cq->ex.read_vendor_err = lab_read_vendor_err;
	cq->ex.read_wc_flags = lab_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq->ex.read_byte_len = lab_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cq->ex.read_imm_data = lab_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq->ex.read_qp_num = lab_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq->ex.read_completion_ts = lab_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq->ex.read_completion_wallclock_ns = lab_read_completion_wallclock_ns;
	return &cq->ex;
}
