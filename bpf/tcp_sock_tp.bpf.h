/* The sock_tp family: halves from the socket layer instead of the syscalls.
 *
 * sock:sock_send_length and sock:sock_recv_length fire in sock_sendmsg/sock_recvmsg after the
 * protocol moved the bytes, for every socket call (write, writev, send*, read, recv*, and the
 * kernel's own socket calls), never for a file or a pipe: untraced calls pay nothing, and the
 * socket is an argument, so there is no fd -> socket walk and no lookup by thread.
 *
 * - receive: one program (sock_recv_end). Stamped after the copy; its first byte is
 *   copied_seq - ret, less the one sequence number of the peer's FIN when this read consumed it
 *   (tcp_recvmsg_locked advances copied_seq past a FIN it reaches: a reply read together with the
 *   FIN of a close-after-reply server would otherwise claim one byte too late and never pair).
 * - send: stamped before any byte is queued, so that with one clock a receive can never precede
 *   its send. tcp:tcp_sendmsg_locked (sock_send_begin) fires in tcp_sendmsg_locked's copy loop,
 *   once per chunk and again after every wait for buffer space, with the socket locked: its
 *   first firing of a call takes the time and write_seq to the thread's send slot (below);
 *   sock_send_end then emits the half with the bytes the call returned. Stamping at
 *   sock_send_length alone would be one program cheaper but late: loopback (and a fast peer) can
 *   deliver, wake and complete the receive before sendmsg returns, a negative span.
 * - a blocking send that will wait for buffer space (more bytes than the send buffer has room
 *   for) is emitted at its start instead, with the bytes it asked to send: the peer reads its
 *   first bytes long before the call returns, and that receive must not wait for the send's end
 *   (docs/pairing.md, "Sends that wait"). Still one record per send.
 *
 * Both seq reads race with a second thread moving bytes on the same socket between the protocol
 * call and the tracepoint, as the syscall families' entry reads do.
 *
 * Payload capture (--payload-bytes) copies at the two ends (sock_payload, below): the tracepoints
 * name the socket, not the caller's buffer, but the syscall that got there still holds it in its
 * arguments, in the task's saved user registers, for the whole call. */
#pragma once

#include "lib/payload_mirror.bpf.h"

struct send_start {
	__u64 ts_ns;
	struct sock *sk;
	struct msghdr *msg; /* the call's message: later firings of the same call name it again */
	__u64 left;	    /* bytes the call still had to send at its first firing */
	__u32 seq;
	__u32 announced; /* bytes of the half already emitted at the start; 0: emit at the end */
	__u8 active;
};

/* enum sock_flags: SOCK_DEAD, SOCK_DONE, ...; SOCK_DONE is set by tcp_fin alone in TCP. */
#define SOCK_DONE_BIT 1

/* One slot per thread: begin and end of a send run in the same thread, while the thread may
 * change CPU between them (a send that waits for buffer space, or a preemption).
 *
 * A thread's slot is first looked for in send_slots, a table (16 384 slots unless the agent sizes
 * it otherwise) where it has a home by a hash of its id and may sit up to SEND_SLOT_PROBES slots
 * past it: inlined array lookups and compares. The thread claims a free slot at its first send
 * (a compare-and-swap on the owner, so that two CPUs cannot take one slot) and keeps it until it
 * exits (send_slot_forget, from sched_process_exit). A thread that finds none free near its home
 * (thousands of threads sending) keeps its send in task-local storage, as every thread did
 * before, counted (SKEWSCOPE_CNT_SEND_SLOT_FALLBACK): bpf_task_storage_get is a helper call that
 * takes a lock and looks in a cache, and the two per message were about 40 ns of the programs'
 * 620 (bench/RESULTS.md). A slot whose thread's exit was missed stays owned by that id; a later
 * thread given the same id adopts it, and its content cannot pass same_send (another call's
 * message). */
#define SEND_SLOT_PROBES 4

/* The table's size less one (a power of two): set by the agent with the map's size. */
const volatile __u32 send_slot_mask = (1U << 14) - 1;

struct send_slot {
	__u64 owner; /* the thread's id (task->pid), 64 bits for the compare-and-swap; 0: free */
	struct send_start start;
} __attribute__((aligned(64))); /* one cache line: threads on two CPUs never share one */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 14);
	__type(key, __u32);
	__type(value, struct send_slot);
} send_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct send_start);
} task_sends SEC(".maps");

static __always_inline __u32 send_slot_at(__u32 tid, __u32 probe)
{
	__u32 home = (__u32)(((__u64)tid * 0x9E3779B97F4A7C15ULL) >> 32);
	return (home + probe) & send_slot_mask;
}

/* The slot the thread owns in send_slots, or NULL (always for id 0, the owner of a free slot).
 * `free` (when not NULL) gets the first free slot of the thread's probes, or NULL. */
static __always_inline struct send_slot *owned_send_slot(__u32 tid, struct send_slot **free)
{
	if (free)
		*free = NULL;
	if (!tid)
		return NULL;
	for (__u32 i = 0; i < SEND_SLOT_PROBES; i++) {
		__u32 at = send_slot_at(tid, i);
		struct send_slot *slot = bpf_map_lookup_elem(&send_slots, &at);
		if (!slot)
			continue;
		if (slot->owner == tid)
			return slot;
		if (free && !*free && slot->owner == 0)
			*free = slot;
	}
	return NULL;
}

/* At the thread's exit: its slot is free again. Only the thread itself writes its slot's
 * content, and it is ending. */
static __always_inline void send_slot_forget(__u32 tid)
{
	struct send_slot *slot = owned_send_slot(tid, NULL);
	if (slot)
		slot->owner = 0;
}

/* The thread's send slot, for a send's start: its own in send_slots, a free one there claimed,
 * or its task-local storage (created when missing). NULL only when that cannot be created. A
 * thread whose send started in task-local storage stays there until that send ends: a later
 * firing of the same send (after a wait for buffer space) must find that start, not a slot of
 * the table freed meanwhile (it would take the rest of the call for a new send). A free slot
 * another CPU claims first (the compare-and-swap fails) leaves this send to task-local storage. */
static __always_inline struct send_start *send_start_slot(struct task_struct *task)
{
	struct send_slot *free;
	struct send_slot *owned = owned_send_slot((__u32)task->pid, &free);
	if (owned)
		return &owned->start;
	struct send_start *stored = bpf_task_storage_get(&task_sends, task, 0, 0);
	if (free && !(stored && stored->active) &&
	    __sync_val_compare_and_swap(&free->owner, 0, (__u64)(__u32)task->pid) == 0) {
		free->start.active = 0;
		return &free->start;
	}
	count_event(SKEWSCOPE_CNT_SEND_SLOT_FALLBACK);
	return stored ? stored : bpf_task_storage_get(&task_sends, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The thread's send slot at a send's end: NULL when it never started one. A thread that owns a
 * slot of the table started its sends there (send_start_slot claims one only while no send of
 * the thread is open in task-local storage). */
static __always_inline struct send_start *send_end_slot(struct task_struct *task)
{
	struct send_slot *owned = owned_send_slot((__u32)task->pid, NULL);
	if (owned)
		return &owned->start;
	return bpf_task_storage_get(&task_sends, task, 0, 0);
}

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

static __always_inline struct tcp_sock *tcp_of(struct sock *sk)
{
	return bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
}

/* First byte of a receive that just returned `ret` bytes. Once the FIN arrived (SOCK_DONE),
 * rcv_nxt is one past it; copied_seq equals rcv_nxt only when a read consumed the FIN too, and
 * no byte can follow a FIN, so a read that returned bytes and left copied_seq there was that
 * read (or a racing second reader took only the FIN: the bytes still end at the FIN). */
static __always_inline __u32 recv_first_byte(struct sock *sk, int ret)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 copied = tp->copied_seq;
	unsigned long flags = bpf_core_field_exists(sk->sk_flags) ? sk->sk_flags : sk->__sk_common.skc_flags;
	__u32 fin = (flags >> SOCK_DONE_BIT) & 1 && copied == tp->rcv_nxt;
	return copied - (__u32)ret - fin;
}

/* A later firing of the send already started: same socket and message, and every byte written
 * to the stream since the first firing came out of this message (a new call that happens to
 * reuse the stack address of the last one's msghdr fails the byte count). */
static __always_inline int same_send(const struct send_start *slot, struct sock *sk, struct msghdr *msg)
{
	if (!slot->active || slot->sk != sk || slot->msg != msg)
		return 0;
	return tcp_of(sk)->write_seq - slot->seq == slot->left - msg->msg_iter.count;
}

/* The bytes a blocking call asks to send when they exceed the room left in the send buffer: it
 * will sleep in sk_stream_wait_memory until the peer reads. 0 when it will not wait (or cannot:
 * MSG_DONTWAIT, which the socket layer also sets for an O_NONBLOCK file). */
static __always_inline __u64 msg_send_that_waits(struct sock *sk, struct msghdr *msg, __u64 left)
{
	if (msg->msg_flags & MSG_DONTWAIT_FLAG)
		return 0;
	long room = (long)sk->sk_sndbuf - (long)sk->sk_wmem_queued;
	return (long)left > room ? left : 0;
}

/* Whether a call on a TCP socket that moved `ret` bytes is copied (payload_decide): its protocol,
 * or -1; *verdict gets the socket's kept verdict (NULL at its first call), *who the caller for the
 * copy (read here, past the checks that leave the calls of an agent without payload capture). */
static __always_inline int sock_payload_decide(struct task_struct *task, struct sock *sk, int ret,
					       struct payload_verdict **verdict, struct payload_caller *who)
{
	*verdict = NULL;
	if (!payload_max || ret <= 0)
		return -1;
	*who = (struct payload_caller){.cgroup_id = current_caller(task).cgroup_id, .typed = 1};
	return payload_decide(sk, *who, verdict);
}

/* The payload copy of a call on a followed socket (`proto`, from sock_payload_decide) that moved
 * `ret` bytes, stamped as its half. The buffer is the one the syscall named (the same arguments
 * the syscall families read at entry); a socket call that no traced syscall made (io_uring,
 * splice, the kernel's own, the mmsg calls, a 32-bit process) has none there: not copied,
 * counted. */
static __always_inline void sock_payload(struct task_struct *task, struct sock *sk, int proto,
					 struct payload_caller who, __u8 kind, __u64 ts_ns, __u32 seq,
					 int ret)
{
	if (!payload_max || proto < 0 || ret <= 0)
		return;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u8 syscall = SYS_NATIVE(regs) ? traced_syscall_of(SYS_NR(regs)) : 0;
	/* A syscall of the other direction (a send made inside a read) names no buffer of this call. */
	if (traced_syscall_sends(syscall) != (kind == SKEWSCOPE_HALF_SEND))
		syscall = 0;
	__u8 shape = payload_shape_of(syscall); /* 0 also for the mmsg calls */
	if (!shape) {
		payload_count(SKEWSCOPE_PCNT_NO_SYSCALL_BUFFER);
		return;
	}
	/* (buf, len) for write/read/sendto/recvfrom, (iov, count) for writev/readv, a msghdr for
	 * sendmsg/recvmsg: as the syscall families arm it. */
	struct payload_arm arm = {
		.buf = SYS_ARG(regs, 1), .len = SYS_ARG(regs, 2), .shape = shape, .protocol = (__u8)proto};
	payload_emit(&arm, sk, who, kind, ts_ns, seq, ret, 1);
}

/* tcp_sendmsg_locked(sk, msg, skb, size_goal): always a TCP socket. */
SEC("tp_btf/tcp_sendmsg_locked")
int sock_send_begin(unsigned long long *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	struct msghdr *msg = (struct msghdr *)ctx[1];
	struct task_struct *task = bpf_get_current_task_btf();
	if (from_agent(task))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct send_start *slot = send_start_slot(task);
	if (!slot) {
		count_lost(sk, SKEWSCOPE_CNT_INFLIGHT_FULL);
		return 0;
	}
	/* The loop fires again per chunk and after each wait: the first firing stamps the send. */
	if (same_send(slot, sk, msg))
		return 0;
	slot->ts_ns = now;
	slot->sk = sk;
	slot->msg = msg;
	slot->left = msg->msg_iter.count;
	slot->seq = tcp_of(sk)->write_seq;
	slot->active = 1;
	__u64 waits = msg_send_that_waits(sk, msg, slot->left);
	slot->announced = waits > 0xffffffffULL ? 0xffffffffU : (__u32)waits;
	if (slot->announced)
		emit_half(TUPLE_TYPED, sk, current_caller(task), now, slot->seq, slot->announced,
			  SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SOCKET, 0);
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
	struct send_start *slot = send_end_slot(task);
	if (!slot || !slot->active)
		return 0;
	slot->active = 0;
	/* Another socket's start: a protocol that sends through TCP underneath (kernel TLS, ...). */
	if (slot->sk != sk)
		return 0;
	struct payload_verdict *verdict;
	struct payload_caller who = {};
	int proto = sock_payload_decide(task, sk, ret, &verdict, &who);
	sock_payload(task, sk, proto, who, SKEWSCOPE_HALF_SEND, slot->ts_ns, slot->seq, ret);
	if (proto == SKEWSCOPE_PROTO_ZMTP)
		mirror_file_sender(sk, verdict);
	if (slot->announced) {
		if (ret != (int)slot->announced) /* a signal, SO_SNDTIMEO or an error cut it short */
			count_event(SKEWSCOPE_CNT_SEND_CUT_SHORT);
		return 0;
	}
	if (ret <= 0)
		return 0;
	emit_half(TUPLE_TYPED, sk, current_caller(task), slot->ts_ns, slot->seq, (__u64)ret,
		  SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SOCKET, 0);
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
	__u32 seq = recv_first_byte(sk, ret);
	struct payload_verdict *verdict;
	struct payload_caller who = {};
	int proto = sock_payload_decide(task, sk, ret, &verdict, &who);
	const int mirrored = proto == SKEWSCOPE_PROTO_ZMTP ? mirror_receive(sk, verdict, seq) : 0;
	__u8 half_flags = 0;
	if (mirrored)
		half_flags = SKEWSCOPE_HALF_PAYLOAD_MIRRORED |
			     (mirrored == MIRROR_FIRST_RECEIVE ? SKEWSCOPE_HALF_PAYLOAD_MIRROR_FIRST : 0);
	emit_half(TUPLE_TYPED, sk, current_caller(task), now, seq, (__u64)ret, SKEWSCOPE_HALF_RECV,
		  SKEWSCOPE_SYS_SOCKET, half_flags);
	if (mirrored)
		payload_count(SKEWSCOPE_PCNT_RECV_MIRRORED);
	else
		sock_payload(task, sk, proto, who, SKEWSCOPE_HALF_RECV, now, seq, ret);
	return 0;
}
