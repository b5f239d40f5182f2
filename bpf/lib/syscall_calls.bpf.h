/* The syscall families' shared logic (classic tracepoints in tcp_syscalls.bpf.c, raw_tp in
 * tcp_raw_tp.bpf.h): entry resolves fd -> TCP socket and remembers the call, exit emits the half.
 * A send is stamped at entry and a receive at exit, so with one clock a span (receive - send) can
 * never be negative. */
#pragma once

#define MSG_PEEK_FLAG 2
#define MAX_MMSG 64

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
		.seq = v == V_CORE_READ ? tcp_first_byte_seq(sk, is_send)
					: tcp_first_byte_seq_btf(sk, is_send),
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
		payload_on_exit(bpf_get_current_pid_tgid(), c.sk, c.kind, c.entry_ns, c.seq,
				c.mmsg_vec ? 0 : ret);
	if (ret <= 0)
		return 0;
	__u64 bytes = c.mmsg_vec ? mmsg_bytes(c.mmsg_vec, ret) : (__u64)ret;
	if (bytes == 0)
		return 0;

	__u64 ts = c.kind == SKEWSCOPE_HALF_SEND ? c.entry_ns : bpf_ktime_get_ns();
	emit_half(v == V_RAW_TP ? TUPLE_RDONLY_CAST : TUPLE_CORE_READ, c.sk, caller_by_helpers(), ts, c.seq,
		  bytes, c.kind, c.syscall);
	return 0;
}
