// SPDX-License-Identifier: GPL-2.0
/* The floor of the hooks skewscope's sock_tp variant uses (bench/floor/README.md): what any tool
 * attached there pays before it does anything of its own.
 *  - empty_*: the same three socket-layer tracepoints with programs that return at once (the cost
 *    of the hooks themselves: the tracepoint's call into BPF and the program's entry);
 *  - stamp_*: the least a tool that reports sends and receives can do: on the two hooks where a
 *    send or a receive has completed, read the clock and submit one record of skewscope's size
 *    (80 bytes) to the ring buffer of the CPU it runs on, without waking the reader (it polls).
 *    No filter, no socket read, no per-task state;
 *  - shared_*: the same with one ring buffer for every CPU, the simplest tool's choice (the
 *    ring's lock is then taken by both ends of a message at once);
 *  - copy_send_end (with stamp_recv_end): the least a tool that also copies what each send
 *    carried can do: the send's record is COPY_BYTES larger and holds, besides the stamp, the
 *    first bytes of the buffer the syscall named (write or sendto: one read of user memory, the
 *    buffer found in the task's saved registers, as skewscope's payload capture finds it). One
 *    record per send, where skewscope submits a half and a payload record.
 * The loader (bench/floor/floor_programs.cpp) attaches one of the four sets. */
#include "lib/kernel_types.bpf.h" /* bpf/lib/, on the include path (CMakeLists.txt) */
#include <bpf/bpf_helpers.h>

#include "skewscope/abi/half_event.h"
#include "lib/syscall_regs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} shared_ring SEC(".maps");

struct cpu_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* a template: the loader creates the real rings */
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* set to the number of possible CPUs by the loader */
	__type(key, __u32);
	__array(values, struct cpu_ring);
} rings_by_cpu SEC(".maps");

SEC("tp_btf/tcp_sendmsg_locked")
int empty_send_begin(unsigned long long *ctx)
{
	return 0;
}

SEC("tp_btf/sock_send_length")
int empty_send_end(unsigned long long *ctx)
{
	return 0;
}

SEC("tp_btf/sock_recv_length")
int empty_recv_end(unsigned long long *ctx)
{
	return 0;
}

/* Records a ring had no room for (read by the loader at the end; only the failure path pays). */
__u64 lost = 0;

static __always_inline void stamp_into(void *ring)
{
	struct skewscope_half_event *e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : 0;
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

static __always_inline void *this_cpu_ring(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(&rings_by_cpu, &cpu);
}

static __always_inline void stamp_this_cpu(void)
{
	stamp_into(this_cpu_ring());
}

SEC("tp_btf/sock_send_length")
int stamp_send_end(unsigned long long *ctx)
{
	stamp_this_cpu();
	return 0;
}

SEC("tp_btf/sock_recv_length")
int stamp_recv_end(unsigned long long *ctx)
{
	stamp_this_cpu();
	return 0;
}

SEC("tp_btf/sock_send_length")
int shared_send_end(unsigned long long *ctx)
{
	stamp_into(&shared_ring);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int shared_recv_end(unsigned long long *ctx)
{
	stamp_into(&shared_ring);
	return 0;
}

/* The bytes of a send the copy floor keeps: a ZMTP or Kafka header's worth (skewscope's parsers
 * read at most this much of a one-message call's 16-byte ZMTP frame and its flags). */
#define COPY_BYTES 64

struct copy_record {
	struct skewscope_half_event half;
	__u8 bytes[COPY_BYTES];
};

/* Sends made by a write or a sendto: their buffer is the syscall's second argument. Others (and
 * a 32-bit caller) are stamped without a copy. */
static __always_inline __u64 send_buffer(struct pt_regs *regs)
{
	if (!SYS_NATIVE(regs))
		return 0;
	long nr = SYS_NR(regs);
	return nr == NR_write || nr == NR_sendto ? SYS_ARG(regs, 1) : 0;
}

SEC("tp_btf/sock_send_length")
int copy_send_end(unsigned long long *ctx)
{
	int ret = (int)ctx[1];
	void *ring = this_cpu_ring();
	struct copy_record *e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : 0;
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	e->half.ts_ns = bpf_ktime_get_ns();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u64 buf = send_buffer(regs);
	/* The bounds are checked on the register the helper gets (the barrier keeps clang from
	 * checking a 32-bit copy instead, which the verifier cannot follow). */
	__u64 n = ret > COPY_BYTES ? COPY_BYTES : (ret > 0 ? ret : 0);
	barrier_var(n);
	if (!buf || n == 0 || n > COPY_BYTES || bpf_probe_read_user(e->bytes, n, (const void *)buf))
		n = 0;
	e->half.bytes = n; /* what was copied, so that the read is not dead */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
