/* Payload records: a bounded prefix of the bytes a send or receive moved, on the connections a
 * detector classified as Kafka or ZMTP. A second ring buffer, separate from the halves, so the
 * halves of every other connection keep their fixed-size record and their cost.
 * Plain C, fixed-width types, explicit padding: the C++ side static_asserts every offset. */
#ifndef SKEWSCOPE_ABI_PAYLOAD_EVENT_H
#define SKEWSCOPE_ABI_PAYLOAD_EVENT_H

#ifdef __BPF__
/* bpf/lib/kernel_types.bpf.h provides the __uN types in BPF programs. */
#else
#include <linux/types.h>
#endif

#include "skewscope/abi/half_event.h" /* enum skewscope_half_kind, enum skewscope_syscall */

/* Hard upper bound of --payload-bytes: the per-CPU scratch record is sized from it, and the
 * BPF copy masks offsets and lengths with (SKEWSCOPE_PAYLOAD_MAX - 1). A power of two, and as
 * large as libzmq's I/O batch (8192), so a write of many coalesced ZeroMQ messages is copied whole. */
#define SKEWSCOPE_PAYLOAD_MAX 8192
/* Hard upper bound of --payload-bytes with the socket-layer family: a call larger than
 * SKEWSCOPE_PAYLOAD_MAX is copied in records of SKEWSCOPE_PAYLOAD_MAX bytes (the windows of one
 * call: consecutive sequence numbers, the call's stamp), up to this many bytes. The syscall
 * families copy one record's worth. A multiple of SKEWSCOPE_PAYLOAD_MAX. */
#define SKEWSCOPE_PAYLOAD_CALL_MAX (64 * SKEWSCOPE_PAYLOAD_MAX)
/* iovec segments the windowed copy walks per call (a Kafka produce request from librdkafka is two
 * per record: its header, its value); more are counted as truncated. */
#define SKEWSCOPE_PAYLOAD_WINDOW_IOV 1024
/* iovec segments walked per writev/readv/sendmsg/recvmsg; more are counted as truncated. */
#define SKEWSCOPE_PAYLOAD_MAX_IOV 16
/* Declared domains (cgroups and network namespaces) the payload capture can be scoped to. */
#define SKEWSCOPE_PAYLOAD_MAX_SCOPE 256

/* A socket's verdict, decided once per socket (operator-named port, else first bytes). */
enum skewscope_payload_protocol {
	SKEWSCOPE_PROTO_UNDECIDED = 0, /* not yet seen a byte: the next call decides */
	SKEWSCOPE_PROTO_OTHER = 1,     /* neither: never copied again */
	SKEWSCOPE_PROTO_KAFKA = 2,
	SKEWSCOPE_PROTO_ZMTP = 3,
	/* Verdicts of sockets never copied, and never in a record: */
	SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE = 4, /* Kafka bytes received first: a broker's end */
	SKEWSCOPE_PROTO_OUTSIDE_DOMAINS = 5,   /* --only-domains: first used outside every domain */
	SKEWSCOPE_PROTO_KAFKA_PORT = 6,	       /* named Kafka by port: its first bytes give the end */
};

/* What a payload_scope key names: a cgroup id or a network namespace inode. */
enum skewscope_payload_scope_kind {
	SKEWSCOPE_SCOPE_CGROUP = 1,
	SKEWSCOPE_SCOPE_NETNS = 2,
};

/* Key of the payload_scope map (--only-domains): one declared domain's cgroup id or netns inode. */
struct skewscope_payload_scope_key {
	__u64 id;
	__u32 kind; /* enum skewscope_payload_scope_kind */
	__u32 pad;
};

/* Per-CPU counters of the payload path (array map index). */
enum skewscope_payload_counter {
	SKEWSCOPE_PCNT_EMITTED = 0,	 /* payload records submitted */
	SKEWSCOPE_PCNT_TRUNCATED,	 /* records whose call moved more bytes than were copied */
	SKEWSCOPE_PCNT_RINGBUF_FULL,	 /* payload record lost: ring buffer full */
	SKEWSCOPE_PCNT_READ_FAILED,	 /* user memory could not be read: record not sent */
	SKEWSCOPE_PCNT_IOV_TRUNCATED,	 /* more iovec segments than the bounded walk reads */
	SKEWSCOPE_PCNT_ARM_FULL,	 /* per-thread buffer table full: call not copied */
	SKEWSCOPE_PCNT_CLASSIFIED_KAFKA, /* sockets classified, by verdict (Kafka: client ends) */
	SKEWSCOPE_PCNT_CLASSIFIED_ZMTP,
	SKEWSCOPE_PCNT_CLASSIFIED_OTHER,
	SKEWSCOPE_PCNT_CLASSIFIED_KAFKA_BROKER_SIDE, /* Kafka sockets not followed: a broker's end */
	SKEWSCOPE_PCNT_CLASSIFIED_OUTSIDE_DOMAINS,   /* sockets first used outside every domain */
	SKEWSCOPE_PCNT_OUTSIDE_CALLS, /* calls on a followed socket from outside every domain: not copied */
	SKEWSCOPE_PCNT_WAKEUPS,	      /* records submitted with a forced wake-up of the reader */
	SKEWSCOPE_PCNT_CLASSIFIED_MID_STREAM, /* sockets classified from bytes after their stream's start */
	SKEWSCOPE_PCNT_NO_SYSCALL_BUFFER, /* socket-layer calls on a followed socket with no syscall buffer
					     (io_uring, splice, the mmsg calls, a 32-bit caller): not copied */
	SKEWSCOPE_PCNT_RECV_MIRRORED,	  /* ZMTP receive calls not copied: their sender's copy, on this
					 host, serves (a half flagged SKEWSCOPE_HALF_PAYLOAD_MIRRORED) */
	SKEWSCOPE_PCNT__COUNT,
};

/* Where the user buffer of a call is described. */
enum skewscope_payload_shape {
	SKEWSCOPE_SHAPE_BUFFER = 1, /* (pointer, length): write, read, sendto, recvfrom */
	SKEWSCOPE_SHAPE_IOVEC = 2,  /* (struct iovec *, count): writev, readv */
	SKEWSCOPE_SHAPE_MSGHDR = 3, /* struct user_msghdr *: sendmsg, recvmsg */
};

/* Header of a payload record; captured_len bytes follow it. The identity fields mean exactly what
 * they mean in struct skewscope_half_event: the same call, the same key. */
struct skewscope_payload_event {
	__u64 ts_ns; /* CLOCK_MONOTONIC: send at syscall entry, receive at syscall exit */
	__u64 cgroup_id;
	__u8 local_addr[16];
	__u8 remote_addr[16];
	__u16 local_port;
	__u16 remote_port;
	__u32 seq;   /* TCP sequence number of the first byte moved */
	__u32 bytes; /* bytes the call moved from seq on (a window that is not its call's last: its own size) */
	__u32 netns_ino;
	__u32 captured_len; /* bytes that follow: min(bytes, payload limit), less if a read failed */
	__u8 kind;	    /* enum skewscope_half_kind */
	__u8 protocol;	    /* enum skewscope_payload_protocol: KAFKA or ZMTP */
	__u8 pad[2];
};

#endif
