/* The syscall families' shared logic (classic tracepoints in tcp_syscalls.bpf.c, raw_tp in
 * tcp_raw_tp.bpf.h): entry resolves fd -> TCP socket and remembers the call, exit emits the half.
 * A send is stamped at entry and a receive at exit, so with one clock a span (receive - send) can
 * never be negative. A blocking write, writev, sendto or sendmsg that will wait for buffer space is
 * emitted at entry instead (its receive comes long before its exit: docs/pairing.md, "Sends that
 * wait"). */
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
	__u8 payload;	 /* payload_on_enter armed a copy: payload_on_exit must run */
	__u8 active;	 /* task-local slot holds a call whose exit has not run yet */
	__u32 announced; /* a send's half already emitted at entry with this many bytes; 0: at exit */
};

#define MSG_DONTWAIT_FLAG 0x40
#define O_NONBLOCK_FLAG 04000

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

/* Whether fd's file was opened O_NONBLOCK: a second, short walk, taken only for a send larger than
 * the room left in its socket's send buffer. */
static __always_inline int fd_nonblocking(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	struct file *file = NULL;
	if (!fds || bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return 1; /* unknown: not announced early, emitted at exit as always */
	return (BPF_CORE_READ(file, f_flags) & O_NONBLOCK_FLAG) != 0;
}

#define MAX_SEND_IOV 8

/* The bytes a send asks to move: the length argument of write and sendto; for writev and sendmsg
 * the sum of the iovecs' lengths, read from user memory (sendmsg's user_msghdr on LP64: msg_iov at
 * 16, msg_iovlen at 24, a fixed user ABI). 0 when it cannot be known here (more than MAX_SEND_IOV
 * iovecs, unreadable memory, sendmmsg whose messages are separate sends): such a call is emitted
 * at its exit, as before. */
static __always_inline __u64 send_request_bytes(__u8 syscall, __u64 buf, __u64 len)
{
	if (syscall == SKEWSCOPE_SYS_WRITE || syscall == SKEWSCOPE_SYS_SENDTO)
		return len;
	__u64 iov = buf, count = len;
	if (syscall == SKEWSCOPE_SYS_SENDMSG) {
		__u64 fields[2];
		if (bpf_probe_read_user(fields, sizeof(fields), (const void *)(buf + 16)))
			return 0;
		iov = fields[0];
		count = fields[1];
	} else if (syscall != SKEWSCOPE_SYS_WRITEV) {
		return 0;
	}
	if (count == 0 || count > MAX_SEND_IOV)
		return 0;
	__u64 total = 0;
	for (int i = 0; i < MAX_SEND_IOV; i++) {
		if (i >= count)
			break;
		__u64 seg[2]; /* struct iovec: base, len */
		if (bpf_probe_read_user(seg, sizeof(seg), (const void *)(iov + i * sizeof(seg))))
			return 0;
		total += seg[1];
	}
	return total;
}

/* The bytes a blocking send asks to send when they exceed the room left in the send buffer, so
 * that it will sleep until the peer reads; 0 otherwise. For writev and sendmsg this costs the
 * iovec walk (one user read per iovec, two more for sendmsg's header) on every such call on a TCP
 * socket: no shortcut can tell a sum larger than the room without reading it. */
static __always_inline __u64 syscall_send_that_waits(enum variant v, struct sock *sk, long fd, __u8 syscall,
						     __u64 buf, __u64 len, __u64 flags)
{
	if (syscall == SKEWSCOPE_SYS_SENDMMSG || (flags & MSG_DONTWAIT_FLAG))
		return 0;
	long room;
	if (v == V_CORE_READ) {
		room = (long)BPF_CORE_READ(sk, sk_sndbuf) - (long)BPF_CORE_READ(sk, sk_wmem_queued);
	} else { /* two plain loads instead of two helper calls on every send (6.2+) */
		struct sock *s = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct sock));
		room = (long)s->sk_sndbuf - (long)s->sk_wmem_queued;
	}
	__u64 want = send_request_bytes(syscall, buf, len);
	if ((long)want <= room || fd_nonblocking(fd))
		return 0;
	return want > 0xffffffffULL ? 0xffffffffULL : want;
}

static __always_inline int on_enter(enum variant v, long fd, __u8 kind, __u8 syscall, __u64 mmsg_vec,
				    __u64 buf, __u64 buf_len, __u64 send_flags)
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
	if (is_send) {
		call.announced = (__u32)syscall_send_that_waits(v, sk, fd, syscall, buf, buf_len, send_flags);
		if (call.announced)
			emit_half(v == V_RAW_TP ? TUPLE_RDONLY_CAST : TUPLE_CORE_READ, sk,
				  caller_by_helpers(), call.entry_ns, call.seq, call.announced, kind, syscall,
				  0);
	}
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
	if (c.announced) {
		if (ret != (long)c.announced) /* a signal, SO_SNDTIMEO or an error cut it short */
			count_event(SKEWSCOPE_CNT_SEND_CUT_SHORT);
		return 0;
	}
	if (ret <= 0)
		return 0;
	__u64 bytes = c.mmsg_vec ? mmsg_bytes(c.mmsg_vec, ret) : (__u64)ret;
	if (bytes == 0)
		return 0;

	__u64 ts = c.kind == SKEWSCOPE_HALF_SEND ? c.entry_ns : bpf_ktime_get_ns();
	emit_half(v == V_RAW_TP ? TUPLE_RDONLY_CAST : TUPLE_CORE_READ, c.sk, caller_by_helpers(), ts, c.seq,
		  bytes, c.kind, c.syscall, 0);
	return 0;
}
