/* The one record that crosses the ring buffer, shared by bpf/ and agent/.
 * Plain C, fixed-width types, explicit padding: the C++ side static_asserts every offset. */
#ifndef SKEWSCOPE_ABI_HALF_EVENT_H
#define SKEWSCOPE_ABI_HALF_EVENT_H

#ifdef __BPF__
/* bpf/lib/kernel_types.bpf.h provides the __uN types in BPF programs. */
#else
#include <linux/types.h>
#endif

enum skewscope_half_kind {
	SKEWSCOPE_HALF_SEND = 1,
	SKEWSCOPE_HALF_RECV = 2,
};

/* Bits of skewscope_half_event.flags. */
enum skewscope_half_flag {
	/* A receive on a ZMTP socket whose bytes were not copied: this agent copies the same bytes
	 * where they were sent (both ends local), and the sender's parse names the messages this
	 * call read (bpf/lib/payload_mirror.bpf.h). */
	SKEWSCOPE_HALF_PAYLOAD_MIRRORED = 1,
	/* With PAYLOAD_MIRRORED: the socket's first such receive, where its mirrored stream begins
	 * (its halves come from per-CPU rings, in no guaranteed order). */
	SKEWSCOPE_HALF_PAYLOAD_MIRROR_FIRST = 2,
};

/* Which syscall produced a half: only for diagnostics, pairing ignores it. */
enum skewscope_syscall {
	SKEWSCOPE_SYS_WRITE = 1,
	SKEWSCOPE_SYS_WRITEV,
	SKEWSCOPE_SYS_SENDTO,
	SKEWSCOPE_SYS_SENDMSG,
	SKEWSCOPE_SYS_SENDMMSG,
	SKEWSCOPE_SYS_READ,
	SKEWSCOPE_SYS_READV,
	SKEWSCOPE_SYS_RECVFROM,
	SKEWSCOPE_SYS_RECVMSG,
	SKEWSCOPE_SYS_RECVMMSG,
	SKEWSCOPE_SYS_SOCKET, /* the socket layer (sock_tp capture): the syscall is not known */
};

/* Per-CPU drop and filter counters (array map index). Every drop has a slot here. */
enum skewscope_bpf_counter {
	SKEWSCOPE_CNT_RINGBUF_FULL = 0,	  /* bpf_ringbuf_reserve failed: event lost */
	SKEWSCOPE_CNT_INFLIGHT_FULL,	  /* no room to remember a syscall between entry and exit */
	SKEWSCOPE_CNT_MMSG_TRUNCATED,	  /* more mmsghdr entries than the bounded loop reads */
	SKEWSCOPE_CNT_EMITTED,		  /* halves submitted to the ring buffer */
	SKEWSCOPE_CNT_SEND_CUT_SHORT,	  /* a send half emitted at its start (the call was going to
					   wait for buffer space) whose call then moved fewer bytes */
	SKEWSCOPE_CNT_SEND_SLOT_FALLBACK, /* a send started by a thread with no slot in the send
					     table (sock_tp): kept in task-local storage, not lost */
	SKEWSCOPE_CNT__COUNT,
};

/* Key of the lost_by_origin map: where a lost half came from, so the agent can say which of its
 * domains a loss belongs to (the half itself never reached it). reason is a skewscope_bpf_counter. */
struct skewscope_loss_origin {
	__u64 cgroup_id;
	__u32 netns_ino;
	__u32 reason;
};

/* Addresses are IPv6 or IPv4-mapped IPv6 (::ffff:a.b.c.d) so a v4 client and a dual-stack v6
 * server compute the same key. local_* is this socket's end, remote_* the peer's.
 * Ports are in host byte order. */
struct skewscope_half_event {
	__u64 ts_ns;	 /* CLOCK_MONOTONIC: send before its bytes are queued (syscall entry,
	                         or tcp_sendmsg_locked), receive after the copy */
	__u64 cgroup_id; /* cgroup v2 id of the calling task */
	__u8 local_addr[16];
	__u8 remote_addr[16];
	__u16 local_port;
	__u16 remote_port;
	__u32 seq;	 /* first byte moved: write_seq (send) or copied_seq (receive) */
	__u32 bytes;	 /* bytes moved, from the return value */
	__u32 netns_ino; /* inode of the socket's network namespace */
	__u32 pid;	 /* thread-group id */
	__u32 tid;
	__u8 kind;    /* enum skewscope_half_kind */
	__u8 syscall; /* enum skewscope_syscall */
	__u8 flags;   /* enum skewscope_half_flag */
	__u8 pad[5];
	/* No process name: it changes once per process, so the agent resolves it by pid when it
	 * needs it; 80 bytes instead of 96 for every half (fewer cache lines written per record). */
};

#endif
