// SPDX-License-Identifier: GPL-2.0
/* What one helper call costs a program on this machine (bench/floor/README.md, "Helper costs"):
 * each program runs at sys_enter, filtered to the loader's own write(2)s on its measuring thread,
 * and does one thing more than hc_empty (the filter alone): read the clock, read 20 bytes of the
 * caller's memory or of the kernel's, or reserve and submit one 80-byte ring record (the size of
 * skewscope's half). The loader (bench/floor/helper_cost.cpp) attaches one at a time. */
#include "lib/kernel_types.bpf.h" /* bpf/lib/, on the include path (CMakeLists.txt) */
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load: its measuring thread, the write syscall's number, and the user
 * buffer each write names (the bytes hc_user_read copies). */
const volatile __u32 target_tid = 0;
const volatile long write_nr = 1;
const volatile __u64 user_buffer = 0;

#define READ_BYTES 20

__u64 sink = 0;	     /* every result lands here, so that no work is optimized away */
__u64 ring_lost = 0; /* reservations that failed (the loader sizes the ring so that none do) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by the loader for every record of a measurement */
} records SEC(".maps");

static __always_inline int measured(unsigned long long *ctx)
{
	return (long)ctx[1] == write_nr && (__u32)bpf_get_current_pid_tgid() == target_tid;
}

SEC("tp_btf/sys_enter")
int hc_empty(unsigned long long *ctx)
{
	if (!measured(ctx))
		return 0;
	sink++;
	return 0;
}

SEC("tp_btf/sys_enter")
int hc_clock(unsigned long long *ctx)
{
	if (!measured(ctx))
		return 0;
	sink += bpf_ktime_get_ns();
	return 0;
}

/* One read of READ_BYTES bytes into the stack, of user memory or of kernel memory (`user` is a
 * constant at each call: one helper per program). */
static __always_inline void read_bytes(const void *from, const int user)
{
	char bytes[READ_BYTES];
	long err = user ? bpf_probe_read_user(bytes, sizeof(bytes), from)
			: bpf_probe_read_kernel(bytes, sizeof(bytes), from);
	if (err == 0)
		sink += bytes[READ_BYTES - 1];
}

SEC("tp_btf/sys_enter")
int hc_user_read(unsigned long long *ctx)
{
	if (measured(ctx))
		read_bytes((const void *)user_buffer, 1);
	return 0;
}

SEC("tp_btf/sys_enter")
int hc_kernel_read(unsigned long long *ctx)
{
	if (measured(ctx))
		read_bytes((const void *)bpf_get_current_task(), 0);
	return 0;
}

SEC("tp_btf/sys_enter")
int hc_ring(unsigned long long *ctx)
{
	if (!measured(ctx))
		return 0;
	__u64 *e = bpf_ringbuf_reserve(&records, 80, 0);
	if (!e) {
		ring_lost++;
		return 0;
	}
	e[0] = sink++;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
