// SPDX-License-Identifier: GPL-2.0
/* Send and receive halves of TCP traffic from the syscalls.
 *
 * Entry: resolve fd -> TCP socket (anything else is dropped here, cheaply), read the sequence
 * number of the first byte, remember it per thread. Exit: the return value says how many bytes
 * moved; emit one half. A send is stamped at entry and a receive at exit, so with one clock a
 * span (receive - send) can never be negative.
 *
 * Two attach families, one logic (on_enter / on_exit), chosen by the agent's candidate table:
 * - raw_tp: one BTF raw tracepoint on sys_enter and one on sys_exit, filtered by syscall number,
 *   the in-flight call in task-local storage. No classic tracepoint's argument record is built
 *   for the hooked calls, but every syscall on the host runs the filter (measured: more than the
 *   classic family costs the calls it does not hook), so the agent uses it only when forced.
 * - btf / core_read: one classic syscall tracepoint per syscall (sys_enter_write, ...), the
 *   in-flight call in a hash keyed by thread. */
#include "lib/kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "skewscope/abi/half_event.h"
#include "lib/counters.bpf.h"
#include "lib/tcp_socket.bpf.h"
#include "lib/payload_capture.bpf.h"
#include "lib/syscall_regs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MSG_PEEK_FLAG 2
#define MAX_MMSG 64

/* Set by the agent before load: its own traffic is never traced. */
const volatile __u32 agent_tgid = 0;

struct inflight {
	__u64 entry_ns;
	struct sock *sk;
	__u64 mmsg_vec; /* user pointer to struct mmsghdr[], for sendmmsg/recvmmsg */
	__u32 seq;
	__u8 kind;
	__u8 syscall;
	__u8 payload; /* payload_on_enter armed a copy: payload_on_exit must run */
	__u8 active;  /* task-local slot holds a call whose exit has not run yet */
};

/* A plain hash, not an LRU: an LRU would evict the threads blocked longest in a call (an idle
 * reader) without a trace. Here a full table refuses the new entry, and that is counted
 * (SKEWSCOPE_CNT_INFLIGHT_FULL). Exit programs delete their entry (a thread killed mid-call still
 * passes the syscall exit tracepoint), and a thread's next entry overwrites its key; an entry
 * whose exit was never traced (entry attached before the matching exit program) would stay until
 * its thread ends: forget_exited_thread removes it then, so dead threads never fill the table. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct inflight);
} inflight_calls SEC(".maps");

/* The raw_tp family's in-flight call: one slot per thread, freed with the thread by the kernel;
 * found at exit without a hash lookup or delete. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} task_calls SEC(".maps");

#define RINGBUF_BYTES (8 * 1024 * 1024)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} halves SEC(".maps");

/* Waking the reader on every record cost more than half of all BPF time (measured: the
 * self-interrupt behind each wake-up dominates on a VM). The agent polls every few milliseconds
 * anyway, so records are submitted silently and the reader is only woken when the ring is a
 * quarter full, long before it can overflow. */
#define WAKEUP_AT_BYTES (RINGBUF_BYTES / 4)

/* Losses by origin (network namespace, cgroup, reason), so that a loss shows on the domain it
 * belongs to. The global per-CPU counter always counts; an origin that finds this table full is
 * only in the global count, which the agent shows as unattributed (global minus the sum here). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct skewscope_loss_origin);
	__type(value, __u64);
} lost_by_origin SEC(".maps");

static __always_inline void count_lost(struct sock *sk, __u32 reason)
{
	count_event(reason);
	struct skewscope_loss_origin origin = {
		.cgroup_id = bpf_get_current_cgroup_id(),
		.netns_ino = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum),
		.reason = reason,
	};
	__u64 *count = bpf_map_lookup_elem(&lost_by_origin, &origin);
	if (!count) {
		__u64 zero = 0;
		bpf_map_update_elem(&lost_by_origin, &origin, &zero, BPF_NOEXIST);
		count = bpf_map_lookup_elem(&lost_by_origin, &origin);
		if (!count)
			return;
	}
	__sync_fetch_and_add(count, 1);
}

/* Which family and fd -> socket walk a program uses: a compile-time constant in each program, so
 * each variant's code holds only its own walk and table (an old kernel's verifier never sees the
 * kfunc or the task storage). */
enum variant { V_RAW_TP, V_BTF, V_CORE_READ };

static __always_inline int on_enter(enum variant v, long fd, __u8 kind, __u8 syscall, __u64 mmsg_vec,
				    __u64 buf, __u64 buf_len)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)(id >> 32) == agent_tgid)
		return 0;
	struct sock *sk = v == V_CORE_READ ? tcp_sock_of_fd_core_read(fd) : tcp_sock_of_fd_btf(fd);
	if (!sk)
		return 0;
	int is_send = kind == SKEWSCOPE_HALF_SEND;
	struct inflight call = {
		.entry_ns = bpf_ktime_get_ns(),
		.sk = sk,
		.mmsg_vec = mmsg_vec,
		.seq = v == V_CORE_READ ? tcp_first_byte_seq(sk, is_send) : tcp_first_byte_seq_btf(sk, is_send),
		.kind = kind,
		.syscall = syscall,
		.payload = payload_on_enter(sk, id, syscall, buf, buf_len),
		.active = 1,
	};
	if (v == V_RAW_TP) {
		struct inflight *slot = bpf_task_storage_get(&task_calls, bpf_get_current_task_btf(), 0,
							     BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!slot) {
			count_lost(sk, SKEWSCOPE_CNT_INFLIGHT_FULL);
			return 0;
		}
		*slot = call;
		return 0;
	}
	if (bpf_map_update_elem(&inflight_calls, &id, &call, BPF_ANY))
		count_lost(sk, SKEWSCOPE_CNT_INFLIGHT_FULL);
	return 0;
}

/* For the *mmsg calls the return value counts messages; the bytes are in each msg_len. */
static __always_inline __u64 mmsg_bytes(__u64 vec, long messages)
{
	__u64 total = 0;
	for (int i = 0; i < MAX_MMSG; i++) {
		if (i >= messages)
			return total;
		__u32 len = 0;
		struct mmsghdr *entry = (struct mmsghdr *)vec + i;
		if (bpf_probe_read_user(&len, sizeof(len), &entry->msg_len))
			return total;
		total += len;
	}
	if (messages > MAX_MMSG)
		count_event(SKEWSCOPE_CNT_MMSG_TRUNCATED);
	return total;
}

static __always_inline int on_exit(enum variant v, long ret)
{
	struct inflight c;
	if (v == V_RAW_TP) {
		struct inflight *slot = bpf_task_storage_get(&task_calls, bpf_get_current_task_btf(), 0, 0);
		if (!slot || !slot->active)
			return 0;
		c = *slot;
		slot->active = 0;
	} else {
		__u64 id = bpf_get_current_pid_tgid();
		struct inflight *call = bpf_map_lookup_elem(&inflight_calls, &id);
		if (!call)
			return 0;
		c = *call;
		bpf_map_delete_elem(&inflight_calls, &id);
	}
	if (c.payload)
		payload_on_exit(bpf_get_current_pid_tgid(), c.sk, c.kind, c.entry_ns, c.seq, c.mmsg_vec ? 0 : ret);
	if (ret <= 0)
		return 0;
	__u64 bytes = c.mmsg_vec ? mmsg_bytes(c.mmsg_vec, ret) : (__u64)ret;
	if (bytes == 0)
		return 0;

	struct skewscope_half_event *e = bpf_ringbuf_reserve(&halves, sizeof(*e), 0);
	if (!e) {
		count_lost(c.sk, SKEWSCOPE_CNT_RINGBUF_FULL);
		return 0;
	}
	e->ts_ns = c.kind == SKEWSCOPE_HALF_SEND ? c.entry_ns : bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	if (v == V_RAW_TP)
		read_tuple_btf(c.sk, e);
	else
		read_tuple(c.sk, e);
	e->seq = c.seq;
	e->bytes = bytes > 0xffffffffULL ? 0xffffffffU : (__u32)bytes;
	__u64 id = bpf_get_current_pid_tgid();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->kind = c.kind;
	e->syscall = c.syscall;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	/* Left empty: a helper call per half for a name that changes once per process. The agent
	 * resolves names by pid in user space when it needs them. */
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	__u64 queued = bpf_ringbuf_query(&halves, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, queued >= WAKEUP_AT_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	count_event(SKEWSCOPE_CNT_EMITTED);
	return 0;
}

#define ARG(n) (ctx->args[n])

/* Each syscall's entry logic, written once for both walks. */
#define ENTRY(name, body)                                                                            \
	static __always_inline int on_enter_##name(struct trace_event_raw_sys_enter *ctx, enum variant walk) \
	{ body }

/* Sends */
ENTRY(write, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_WRITE, 0, ARG(1), ARG(2));)
ENTRY(writev, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_WRITEV, 0, ARG(1), ARG(2));)
ENTRY(sendto, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SENDTO, 0, ARG(1), ARG(2));)
ENTRY(sendmsg, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SENDMSG, 0, ARG(1), 0);)
ENTRY(sendmmsg, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SENDMMSG, ARG(1), 0, 0);)

/* Receives: a peek copies bytes without consuming them, so it is not a receive. */
ENTRY(read, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_READ, 0, ARG(1), ARG(2));)
ENTRY(readv, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_READV, 0, ARG(1), ARG(2));)
ENTRY(recvfrom, if (ARG(3) & MSG_PEEK_FLAG) return 0;
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_RECVFROM, 0, ARG(1), ARG(2));)
ENTRY(recvmsg, if (ARG(2) & MSG_PEEK_FLAG) return 0;
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_RECVMSG, 0, ARG(1), 0);)
ENTRY(recvmmsg, if (ARG(3) & MSG_PEEK_FLAG) return 0;
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_RECVMMSG, ARG(1), 0, 0);)

/* Two entry programs per syscall, the same logic over each walk; the agent loads one of them
 * (autoload, decided before load by its candidate table). */
#define ENTRY_PROGRAMS(name)                                                     \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                  \
	int enter_##name(struct trace_event_raw_sys_enter *ctx)                      \
	{ return on_enter_##name(ctx, V_BTF); }                                      \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                  \
	int enter_##name##_core(struct trace_event_raw_sys_enter *ctx)               \
	{ return on_enter_##name(ctx, V_CORE_READ); }

ENTRY_PROGRAMS(write)
ENTRY_PROGRAMS(writev)
ENTRY_PROGRAMS(sendto)
ENTRY_PROGRAMS(sendmsg)
ENTRY_PROGRAMS(sendmmsg)
ENTRY_PROGRAMS(read)
ENTRY_PROGRAMS(readv)
ENTRY_PROGRAMS(recvfrom)
ENTRY_PROGRAMS(recvmsg)
ENTRY_PROGRAMS(recvmmsg)

/* One exit program per syscall: each exit only finds an entry its own entry program stored. */
#define EXIT_PROGRAM(name)                                              \
	SEC("tracepoint/syscalls/sys_exit_" #name)                          \
	int exit_##name(struct trace_event_raw_sys_exit *ctx)               \
	{ return on_exit(V_BTF, ctx->ret); }

EXIT_PROGRAM(write)
EXIT_PROGRAM(writev)
EXIT_PROGRAM(sendto)
EXIT_PROGRAM(sendmsg)
EXIT_PROGRAM(sendmmsg)
EXIT_PROGRAM(read)
EXIT_PROGRAM(readv)
EXIT_PROGRAM(recvfrom)
EXIT_PROGRAM(recvmsg)
EXIT_PROGRAM(recvmmsg)

/* The raw_tp family: the same hooks from two programs. The syscall number selects the call; its
 * arguments are read from the user registers the tracepoint hands over (plain BTF loads). */
SEC("tp_btf/sys_enter")
int sys_enter_tcp(unsigned long long *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	long nr = (long)ctx[1];
	if (!is_traced_nr(nr) || !SYS_NATIVE(regs))
		return 0;
	long fd = (long)SYS_ARG(regs, 0);
	__u8 kind = SKEWSCOPE_HALF_SEND;
	__u8 syscall;
	__u64 vec = 0;
	/* The payload copy's buffer: (buf, len) for write/read/sendto/recvfrom and the iovec array
	 * (iov, count) for writev/readv; a msghdr (len 0) for sendmsg/recvmsg; none for the mmsg calls. */
	__u64 buf = SYS_ARG(regs, 1), buf_len = SYS_ARG(regs, 2);
	switch (nr) {
	case NR_write: syscall = SKEWSCOPE_SYS_WRITE; break;
	case NR_writev: syscall = SKEWSCOPE_SYS_WRITEV; break;
	case NR_sendto: syscall = SKEWSCOPE_SYS_SENDTO; break;
	case NR_sendmsg: syscall = SKEWSCOPE_SYS_SENDMSG; buf_len = 0; break;
	case NR_sendmmsg: syscall = SKEWSCOPE_SYS_SENDMMSG; vec = SYS_ARG(regs, 1); buf = buf_len = 0; break;
	default:
		kind = SKEWSCOPE_HALF_RECV;
		switch (nr) {
		case NR_read: syscall = SKEWSCOPE_SYS_READ; break;
		case NR_readv: syscall = SKEWSCOPE_SYS_READV; break;
		case NR_recvfrom:
			if (SYS_ARG(regs, 3) & MSG_PEEK_FLAG)
				return 0;
			syscall = SKEWSCOPE_SYS_RECVFROM;
			break;
		case NR_recvmsg:
			if (SYS_ARG(regs, 2) & MSG_PEEK_FLAG)
				return 0;
			syscall = SKEWSCOPE_SYS_RECVMSG;
			buf_len = 0;
			break;
		default: /* recvmmsg */
			if (SYS_ARG(regs, 3) & MSG_PEEK_FLAG)
				return 0;
			syscall = SKEWSCOPE_SYS_RECVMMSG;
			vec = SYS_ARG(regs, 1);
			buf = buf_len = 0;
		}
	}
	return on_enter(V_RAW_TP, fd, kind, syscall, vec, buf, buf_len);
}

SEC("tp_btf/sys_exit")
int sys_exit_tcp(unsigned long long *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	if (!is_traced_nr(SYS_NR(regs)))
		return 0;
	return on_exit(V_RAW_TP, (long)ctx[1]);
}

/* Fires for every exiting thread, as that thread: its in-flight entry, if any, can never be
 * completed. Not in the hook table: it captures nothing, it only keeps the table clean. */
SEC("tracepoint/sched/sched_process_exit")
int forget_exited_thread(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	bpf_map_delete_elem(&inflight_calls, &id);
	payload_forget(id);
	return 0;
}
