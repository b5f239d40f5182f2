/* The sock_tp family: halves from the socket layer instead of the syscalls.
 *
 * sock:sock_send_length and sock:sock_recv_length fire in sock_sendmsg/sock_recvmsg after the
 * protocol moved the bytes, for every socket call (write, writev, send*, read, recv*, and the
 * kernel's own socket calls), never for a file or a pipe: untraced calls pay nothing, and the
 * socket is an argument, so there is no fd -> socket walk and no lookup by thread.
 *
 * - receive: one program (sock_recv_end). Stamped after the copy; its first byte is
 *   copied_seq - ret, which is what the syscall families read at entry.
 * - send: stamped before any byte is queued, so that with one clock a receive can never precede
 *   its send. tcp:tcp_sendmsg_locked (sock_send_begin) fires at the start of tcp_sendmsg_locked
 *   with the socket locked: the time and write_seq, exactly, go to task-local storage;
 *   sock_send_end then emits the half with the bytes the call returned. Stamping at
 *   sock_send_length alone would be one program cheaper but late: loopback (and a fast peer)
 *   can deliver, wake and complete the receive before sendmsg returns, a negative span.
 *
 * Both seq reads race with a second thread moving bytes on the same socket between the protocol
 * call and the tracepoint, as the syscall families' entry reads do. Loaded only when payload
 * capture is off: the payload copy needs the syscall's buffer arguments (see features.cpp). */
#pragma once

struct send_start {
	__u64 ts_ns;
	struct sock *sk;
	__u32 seq;
	__u8 active;
};

/* One slot per thread, freed with the thread: begin and end of a send run in the same thread,
 * while the thread may change CPU between them (a send that waits for buffer space). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct send_start);
} task_sends SEC(".maps");

static __always_inline int inet_tcp(struct sock *sk)
{
	unsigned short family = sk->__sk_common.skc_family;
	return sk->sk_protocol == SKEWSCOPE_IPPROTO_TCP &&
	       (family == SKEWSCOPE_AF_INET || family == SKEWSCOPE_AF_INET6);
}

/* The caller read from the task by plain loads: the same values bpf_get_current_pid_tgid() and
 * bpf_get_current_cgroup_id() return, without two helper calls (the second takes and drops the
 * RCU read lock, which this program already holds) per half. */
static __always_inline struct caller current_caller(struct task_struct *task)
{
	return (struct caller){.pid_tgid = (__u64)(__u32)task->tgid << 32 | (__u32)task->pid,
			       .cgroup_id = task->cgroups->dfl_cgrp->kn->id};
}

static __always_inline int from_agent(struct task_struct *task)
{
	return (__u32)task->tgid == agent_tgid;
}

static __always_inline __u32 tcp_seq_of(struct sock *sk, int is_send)
{
	struct tcp_sock *tp = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
	return is_send ? tp->write_seq : tp->copied_seq;
}

/* tcp_sendmsg_locked(sk, msg, skb, size_goal): always a TCP socket. */
SEC("tp_btf/tcp_sendmsg_locked")
int sock_send_begin(unsigned long long *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	struct task_struct *task = bpf_get_current_task_btf();
	if (from_agent(task))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct send_start *slot = bpf_task_storage_get(&task_sends, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!slot) {
		count_lost(sk, SKEWSCOPE_CNT_INFLIGHT_FULL);
		return 0;
	}
	slot->ts_ns = now;
	slot->sk = sk;
	slot->seq = tcp_seq_of(sk, 1);
	slot->active = 1;
	return 0;
}

/* sock_send_length(sk, ret, flags), after the protocol's sendmsg returned. */
SEC("tp_btf/sock_send_length")
int sock_send_end(unsigned long long *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	int ret = (int)ctx[1];
	/* Every socket send lands here (UDP, unix): two loads reject those before any lookup. */
	if (!inet_tcp(sk))
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct send_start *slot = bpf_task_storage_get(&task_sends, task, 0, 0);
	if (!slot || !slot->active)
		return 0;
	slot->active = 0;
	/* Another socket's start: a protocol that sends through TCP underneath (kernel TLS, ...). */
	if (slot->sk != sk || ret <= 0)
		return 0;
	emit_half(TUPLE_TYPED, sk, current_caller(task), slot->ts_ns, slot->seq, (__u64)ret,
		  SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SOCKET);
	return 0;
}

/* sock_recv_length(sk, ret, flags), after the protocol's recvmsg returned. A peek moves no
 * bytes: not a receive. */
SEC("tp_btf/sock_recv_length")
int sock_recv_end(unsigned long long *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	int ret = (int)ctx[1];
	int flags = (int)ctx[2];
	if (ret <= 0 || (flags & MSG_PEEK_FLAG) || !inet_tcp(sk))
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	if (from_agent(task))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	emit_half(TUPLE_TYPED, sk, current_caller(task), now, tcp_seq_of(sk, 0) - (__u32)ret, (__u64)ret,
		  SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_SOCKET);
	return 0;
}
