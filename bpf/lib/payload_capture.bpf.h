/* Payload capture: a bounded copy of the bytes a call moved, only on the sockets a detector
 * classified as Kafka (a client's end) or ZMTP, sent on a ring buffer of its own (payloads).
 *
 * Cost model. With payload_max == 0 (the default) every function here is a constant-false branch
 * the verifier prunes: the other programs' cost is unchanged. With it on, each traced TCP call pays
 * one lookup of its socket's verdict (the socket's storage with sock_tp, else an LRU); a socket's
 * first call also reads its ports and, when no
 * operator port names it, copies the call's bytes once to classify them. Only followed sockets
 * (Kafka client ends, ZMTP) pay for the per-call copy and the ring buffer record.
 *
 * Detection (decided once per socket, at its first traced call with bytes; payload_classify.h):
 *  - with --only-domains (payload_scoped), a socket first used outside every domain is never
 *    classified (OUTSIDE_DOMAINS): the agent would drop its records, and its protocol is not ours
 *    to count;
 *  - an operator-named port (payload_ports: local or remote port -> protocol) wins;
 *  - else ZMTP 3.x: the greeting signature, 0xFF, 8 bytes, 0x7F;
 *  - else Kafka: a request header, int32 size, int16 api_key 0..99, int16 api_version 0..31,
 *    int32 correlation id, int16 client id length -1..size.
 * A Kafka socket's role is the side of its named port (connected to it: a client's end), else the
 * direction of its first bytes: a client speaks first. Only client ends are followed (the agent
 * names batches on them); a broker's end, or a forwarder's listening end, becomes
 * KAFKA_BROKER_SIDE and is never copied.
 * A verdict lives in the socket's own storage (sock_tp) or, for the syscall families, in an LRU
 * keyed by the socket's address and checked against its port pair, so a recycled struct sock
 * never inherits the verdict of the socket that lived there before. */
#pragma once

#include "skewscope/abi/payload_event.h"
#include "payload_classify.h"

#define SKEWSCOPE_MAP_LRU_HASH 9 /* BPF_MAP_TYPE_LRU_HASH */

/* --payload-bytes: how many bytes of each call to copy (<= SKEWSCOPE_PAYLOAD_CALL_MAX with the
 * socket-layer family, in records of SKEWSCOPE_PAYLOAD_MAX; the syscall families copy at most one
 * record's worth); 0 = off. */
const volatile __u32 payload_max = 0;
/* 0: only operator-named ports are captured (--payload-detect ports). */
const volatile __u8 payload_detect = 1;
/* 1 (--only-domains): only calls inside a declared domain (payload_scope) are classified and copied. */
const volatile __u8 payload_scoped = 0;

/* How a socket's calls are known to be inside the declared domains (--only-domains), kept with
 * its verdict so that a followed socket's calls do not each pay the two scope lookups (a cgroup
 * miss, then a namespace hit). */
enum payload_scope_by {
	PAYLOAD_SCOPE_CHECK = 0,  /* ask payload_in_scope at every call */
	PAYLOAD_SCOPE_NETNS = 1,  /* the socket's namespace is a domain: every call is, whoever makes it */
	PAYLOAD_SCOPE_CGROUP = 2, /* the cgroup `cgroup_id` is a domain: calls from it are */
};

struct payload_verdict {
	__u32 portpair; /* local port << 16 | remote port, when the verdict was taken */
	__u8 protocol;	/* enum skewscope_payload_protocol */
	__u8 scope_by;	/* enum payload_scope_by */
	__u8 mirror;	/* MIRROR_* bits (payload_mirror.bpf.h; sock_tp only) */
	__u8 mirror_lookups;
	__u64 cgroup_id; /* PAYLOAD_SCOPE_CGROUP: the domain's cgroup that a call was last made from */
};

/* An LRU: a verdict is only a cache of a decision, and an evicted socket is re-decided at its
 * next call (from mid-stream bytes, so at worst it becomes OTHER: counted as classified other). */
struct {
	__uint(type, SKEWSCOPE_MAP_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* struct sock * */
	__type(value, struct payload_verdict);
} payload_verdicts SEC(".maps");

#define SKEWSCOPE_MAP_SK_STORAGE 24 /* BPF_MAP_TYPE_SK_STORAGE */
/* The same verdicts in the socket's own storage, for the programs that hold a BTF pointer to it
 * (sock_tp): no hashing, no eviction, freed with the socket. An LRU lookup was about 100 ns of
 * every TCP call with payload capture on, followed socket or not. */
struct {
	__uint(type, SKEWSCOPE_MAP_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct payload_verdict);
} payload_sock_verdicts SEC(".maps");

/* Filled by the agent after load, before attach: --payload-port kafka=9092, zmtp=5555. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, __u8);
} payload_ports SEC(".maps");

/* The declared domains (--domain), filled by the agent before attach when payload_scoped: the
 * same exact cgroup id or network namespace inode the agent's domain registry matches. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SKEWSCOPE_PAYLOAD_MAX_SCOPE);
	__type(key, struct skewscope_payload_scope_key);
	__type(value, __u8);
} payload_scope SEC(".maps");

/* Where the calling thread's buffer is, between entry and exit (only for armed calls). */
struct payload_arm {
	__u64 buf;
	__u64 len;
	__u8 shape;
	__u8 protocol;
	__u8 pad[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct payload_arm);
} payload_armed SEC(".maps");

/* Where a copy in windows stands in the call's buffer (payload_emit with `windows`, below). */
struct payload_walk {
	__u64 iov, count; /* iovec array and its segments (0: the BUFFER shape) */
	__u64 base, left; /* the current segment's next byte, and how many of it are left */
	__u32 next;	  /* index of the next segment to read */
	__u32 at;	  /* bytes of the current window copied (into the scratch's data) */
	__u32 done;	  /* bytes of the call copied */
	__u32 window;	  /* offset in the call of the current window's first byte */
	__u32 want;	  /* bytes of the call to copy */
	__u32 seq;	  /* sequence number of the call's first byte */
	__u64 ret;	  /* bytes the call moved */
	__u8 more;	  /* submit a full window and go on (else stop at it: the first window) */
	__u8 stop;	  /* a read failed, the walk's bound or the ring is full: no more copying */
	__u8 ring_full;
};

/* Three times the bound: an iovec walk writes at an offset < MAX a segment whose length the
 * verifier only knows to be < 2 MAX (it is <= MAX - offset in fact).
 * The walk's state lives here, in map memory, not on the stack: bpf_loop's callback is verified
 * over and over until its states repeat, and values it reloads from the stack keep the exact
 * ranges of the last pass (they never repeat: "the sequence of 8193 jumps is too complex"), where
 * values loaded from a map are unknown scalars the masks bound. The record (hdr, then data) is
 * what a ring buffer record copies. */
struct payload_scratch {
	struct payload_walk walk;
	struct skewscope_payload_event hdr;
	__u8 data[3 * SKEWSCOPE_PAYLOAD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct payload_scratch);
} payload_scratch SEC(".maps");

/* Sized by the agent before load (--payload-ring-mb; one page without payload capture). */
const volatile __u32 payload_ring_bytes = 8 * 1024 * 1024;
/* A CPU's records submitted without waking the reader since its last wake-up, at most this many
 * bytes: an eighth of the ring over all CPUs (set by the agent). */
const volatile __u32 payload_wake_bytes = 1024 * 1024;
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} payload_unwoken_bytes SEC(".maps");
/* The payload loop's idle flag, as halves_reader_idle (tcp_halves.bpf.h) is the halves loop's. */
volatile __u32 payload_reader_idle SEC(".data.wake") = 0;
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} payloads SEC(".maps");

/* A slice per CPU, as the halves' counters (counter_slices.bpf.h). */
struct {
	SKEWSCOPE_COUNTER_SLICES(SKEWSCOPE_PCNT__COUNT);
} payload_counters SEC(".maps");

static __always_inline void payload_count(__u32 which)
{
	counter_slice_add(&payload_counters, SKEWSCOPE_PCNT__COUNT, which);
}

static __always_inline void payload_count_verdict(__u8 proto)
{
	switch (proto) {
	case SKEWSCOPE_PROTO_KAFKA: payload_count(SKEWSCOPE_PCNT_CLASSIFIED_KAFKA); break;
	case SKEWSCOPE_PROTO_ZMTP: payload_count(SKEWSCOPE_PCNT_CLASSIFIED_ZMTP); break;
	case SKEWSCOPE_PROTO_OTHER: payload_count(SKEWSCOPE_PCNT_CLASSIFIED_OTHER); break;
	case SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE:
		payload_count(SKEWSCOPE_PCNT_CLASSIFIED_KAFKA_BROKER_SIDE);
		break;
	case SKEWSCOPE_PROTO_OUTSIDE_DOMAINS: payload_count(SKEWSCOPE_PCNT_CLASSIFIED_OUTSIDE_DOMAINS); break;
	}
}

/* Never copied: neither protocol, a Kafka broker's end, or outside the domains. */
static __always_inline int payload_not_followed(__u8 proto)
{
	return proto == SKEWSCOPE_PROTO_OTHER || proto == SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE ||
	       proto == SKEWSCOPE_PROTO_OUTSIDE_DOMAINS;
}

/* Who calls, and how the socket is read: the socket-layer programs hold a BTF pointer to it and
 * read the caller's cgroup by plain loads (tcp_sock_tp.bpf.h, current_caller), which spares the
 * helper calls the syscall variants pay. */
struct payload_caller {
	__u64 cgroup_id; /* read by the caller when typed; else the helper is asked, when needed */
	__u8 typed;	 /* sk is a BTF pointer: plain loads instead of BPF_CORE_READ */
};

static __always_inline struct payload_caller payload_helper_caller(void)
{
	return (struct payload_caller){.cgroup_id = 0, .typed = 0};
}

static __always_inline __u64 payload_cgroup_id(struct payload_caller who)
{
	return who.typed ? who.cgroup_id : bpf_get_current_cgroup_id();
}

/* Whether this call is inside a declared domain: the calling task's cgroup, then the socket's
 * network namespace (the agent's DomainRegistry::classify order). 0 when outside, else what put it
 * inside (enum payload_scope_by; CHECK when nothing is scoped). *cgroup_id gets the caller's. */
static __always_inline __u8 payload_in_scope(struct sock *sk, struct payload_caller who, __u64 *cgroup_id)
{
	*cgroup_id = 0;
	if (!payload_scoped)
		return PAYLOAD_SCOPE_NETNS; /* every call is in scope */
	struct skewscope_payload_scope_key key = {.id = payload_cgroup_id(who),
						  .kind = SKEWSCOPE_SCOPE_CGROUP};
	*cgroup_id = key.id;
	if (bpf_map_lookup_elem(&payload_scope, &key))
		return PAYLOAD_SCOPE_CGROUP;
	key.id = who.typed ? sk->__sk_common.skc_net.net->ns.inum
			   : BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	key.kind = SKEWSCOPE_SCOPE_NETNS;
	return bpf_map_lookup_elem(&payload_scope, &key) ? PAYLOAD_SCOPE_NETNS : 0;
}

/* A followed socket's call: in scope by its verdict's memory when that settles it (its namespace
 * is a domain, or the call comes from the cgroup that was), else by the lookups, which the verdict
 * then remembers. The verdict is written without a lock: a racing call at worst asks again. */
static __always_inline int payload_call_in_scope(struct sock *sk, struct payload_caller who,
						 struct payload_verdict *v)
{
	if (v->scope_by == PAYLOAD_SCOPE_NETNS)
		return 1;
	if (v->scope_by == PAYLOAD_SCOPE_CGROUP && v->cgroup_id == payload_cgroup_id(who))
		return 1;
	__u64 cgroup_id;
	__u8 by = payload_in_scope(sk, who, &cgroup_id);
	if (!by)
		return 0;
	v->cgroup_id = cgroup_id;
	v->scope_by = by;
	return 1;
}

static __always_inline __u8 payload_shape_of(__u8 syscall)
{
	switch (syscall) {
	case SKEWSCOPE_SYS_WRITE:
	case SKEWSCOPE_SYS_SENDTO:
	case SKEWSCOPE_SYS_READ:
	case SKEWSCOPE_SYS_RECVFROM: return SKEWSCOPE_SHAPE_BUFFER;
	case SKEWSCOPE_SYS_WRITEV:
	case SKEWSCOPE_SYS_READV: return SKEWSCOPE_SHAPE_IOVEC;
	case SKEWSCOPE_SYS_SENDMSG:
	case SKEWSCOPE_SYS_RECVMSG: return SKEWSCOPE_SHAPE_MSGHDR;
	}
	return 0; /* *mmsg: several messages per call, not copied (their halves are still traced) */
}

/* A socket's verdict, if taken: from its storage when `typed` (a constant where this inlines:
 * the syscall families' socket pointers are plain numbers, which the storage helper refuses),
 * else from the LRU by its address. */
static __always_inline struct payload_verdict *payload_verdict_of(struct sock *sk, __u8 typed)
{
	if (typed)
		return bpf_sk_storage_get(&payload_sock_verdicts, sk, 0, 0);
	__u64 key = (__u64)sk;
	return bpf_map_lookup_elem(&payload_verdicts, &key);
}

static __always_inline void payload_verdict_take(struct sock *sk, __u8 typed, const struct payload_verdict *v)
{
	if (typed) {
		struct payload_verdict *slot =
			bpf_sk_storage_get(&payload_sock_verdicts, sk, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (slot)
			*slot = *v;
		return;
	}
	__u64 key = (__u64)sk;
	bpf_map_update_elem(&payload_verdicts, &key, v, BPF_ANY);
}

static __always_inline __u8 payload_port_protocol(__u16 port)
{
	__u8 *proto = bpf_map_lookup_elem(&payload_ports, &port);
	return proto ? *proto : SKEWSCOPE_PROTO_UNDECIDED;
}

/* Whether this call on a TCP socket is copied: the socket is (or may be) Kafka or ZMTP and, in
 * scope. Its protocol (possibly UNDECIDED or KAFKA_PORT, settled by the copy), or -1. *verdict
 * gets the socket's kept verdict when it had one (NULL at its first call). */
static __always_inline int payload_decide(struct sock *sk, struct payload_caller who,
					  struct payload_verdict **verdict)
{
	__u32 portpair =
		who.typed ? ((__u32)sk->__sk_common.skc_num << 16) | bpf_ntohs(sk->__sk_common.skc_dport)
			  : ((__u32)BPF_CORE_READ(sk, __sk_common.skc_num) << 16) |
				    bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	struct payload_verdict *known = payload_verdict_of(sk, who.typed);
	*verdict = known && known->portpair == portpair ? known : NULL;
	__u8 proto;
	if (known && known->portpair == portpair) {
		proto = known->protocol;
	} else {
		struct payload_verdict v = {.portpair = portpair};
		v.scope_by = payload_in_scope(sk, who, &v.cgroup_id);
		if (!v.scope_by) {
			proto = SKEWSCOPE_PROTO_OUTSIDE_DOMAINS;
		} else {
			__u8 local = payload_port_protocol(portpair >> 16);
			__u8 remote = payload_port_protocol(portpair & 0xffff);
			proto = local != SKEWSCOPE_PROTO_UNDECIDED ? local : remote;
			/* A Kafka port also names the end: which side of the connection it is on. */
			if (proto == SKEWSCOPE_PROTO_KAFKA)
				proto = payload_kafka_port_end(local == SKEWSCOPE_PROTO_KAFKA,
							       remote == SKEWSCOPE_PROTO_KAFKA);
			if (proto == SKEWSCOPE_PROTO_UNDECIDED && !payload_detect)
				proto = SKEWSCOPE_PROTO_OTHER;
		}
		v.protocol = proto;
		payload_verdict_take(sk, who.typed, &v);
		payload_count_verdict(proto); /* UNDECIDED and KAFKA_PORT: counted once decided, at exit */
		if (payload_not_followed(proto))
			return -1;
		return proto; /* in scope: the lookups above said so */
	}
	if (payload_not_followed(proto))
		return -1;
	/* A cgroup domain is the calling task's: a followed socket's call from outside every domain
	 * (a forked helper, a passed fd) is not copied (the agent would drop it), and is counted. */
	if (!payload_call_in_scope(sk, who, known)) {
		payload_count(SKEWSCOPE_PCNT_OUTSIDE_CALLS);
		return -1;
	}
	return proto;
}

/* At syscall entry, for a TCP socket: arms the copy for this thread when the socket is (or may
 * be) Kafka or ZMTP. Returns 1 when armed; the exit must then call payload_on_exit. */
static __always_inline __u8 payload_on_enter(struct sock *sk, __u64 id, __u8 syscall, __u64 buf, __u64 len)
{
	if (!payload_max)
		return 0;
	__u8 shape = payload_shape_of(syscall);
	if (!shape)
		return 0;
	struct payload_verdict *verdict;
	int proto = payload_decide(sk, payload_helper_caller(), &verdict);
	if (proto < 0)
		return 0;
	struct payload_arm arm = {.buf = buf, .len = len, .shape = shape, .protocol = (__u8)proto};
	if (bpf_map_update_elem(&payload_armed, &id, &arm, BPF_ANY)) {
		payload_count(SKEWSCOPE_PCNT_ARM_FULL);
		return 0;
	}
	return 1;
}

/* A size for a helper (bpf_probe_read_user, bpf_ringbuf_output), bounded on the very register the
 * helper receives. A comparison bounds only the register the compiler compared, and clang may
 * compare a 32-bit copy and pass the 64-bit original: Linux 6.1's verifier then sees an
 * unbounded size ("R2 unbounded memory access") where 6.18's tracks the copy. The barrier keeps
 * the compiler from folding the mask into the comparison; the mask is a no-op on a value the
 * caller has already clamped to <= SKEWSCOPE_PAYLOAD_MAX (a power of two), so it changes nothing
 * but what the verifier can prove. */
static __always_inline __u32 payload_helper_size(__u32 n)
{
	barrier_var(n);
	return n & (2 * SKEWSCOPE_PAYLOAD_MAX - 1);
}

struct payload_user_iovec {
	__u64 base;
	__u64 len;
};

/* Copies up to `want` (<= SKEWSCOPE_PAYLOAD_MAX) bytes of the call's buffer; returns how many. */
static __always_inline __u32 payload_copy(struct payload_scratch *s, const struct payload_arm *arm,
					  __u32 want)
{
	if (arm->shape == SKEWSCOPE_SHAPE_BUFFER) {
		if (want > SKEWSCOPE_PAYLOAD_MAX)
			want = SKEWSCOPE_PAYLOAD_MAX;
		want = payload_helper_size(want);
		if (bpf_probe_read_user(s->data, want, (const void *)arm->buf)) {
			payload_count(SKEWSCOPE_PCNT_READ_FAILED);
			return 0;
		}
		return want;
	}
	__u64 iov = arm->buf, count = arm->len;
	if (arm->shape == SKEWSCOPE_SHAPE_MSGHDR) {
		/* struct user_msghdr on LP64: msg_iov at 16, msg_iovlen at 24 (a user ABI, fixed). */
		__u64 fields[2];
		if (bpf_probe_read_user(fields, sizeof(fields), (const void *)(arm->buf + 16))) {
			payload_count(SKEWSCOPE_PCNT_READ_FAILED);
			return 0;
		}
		iov = fields[0];
		count = fields[1];
	}
	__u32 off = 0;
	int i;
	for (i = 0; i < SKEWSCOPE_PAYLOAD_MAX_IOV; i++) {
		if (i >= count || off >= want)
			break;
		struct payload_user_iovec seg;
		if (bpf_probe_read_user(&seg, sizeof(seg), (const void *)(iov + i * sizeof(seg)))) {
			payload_count(SKEWSCOPE_PCNT_READ_FAILED);
			break;
		}
		__u64 room = want - off; /* off < want <= MAX */
		/* Masks, not comparisons, bound what the verifier sees: n < 2 MAX, at < MAX. */
		__u32 n = payload_helper_size(seg.len < room ? seg.len : room);
		__u32 at = off & (SKEWSCOPE_PAYLOAD_MAX - 1);
		if (bpf_probe_read_user(&s->data[at], n, (const void *)seg.base)) {
			payload_count(SKEWSCOPE_PCNT_READ_FAILED);
			break;
		}
		off = at + n;
	}
	if (i == SKEWSCOPE_PAYLOAD_MAX_IOV && count > SKEWSCOPE_PAYLOAD_MAX_IOV && off < want)
		payload_count(SKEWSCOPE_PCNT_IOV_TRUNCATED);
	return off;
}

#include "payload_windows.bpf.h" /* the walk over a call in windows (payload_emit) */

/* Where each direction of the connection began. rcv_nxt - bytes_received is the peer's ISN + 1
 * for the whole life of the socket; snd_una - bytes_acked is our ISN + 1 on an accepted socket
 * but our ISN on a connecting one (its SYN's acknowledgement counts in bytes_acked). Flavoured so
 * that the shared kernel_types declaration of tcp_sock stays as it is. */
struct tcp_sock___payload {
	__u32 snd_una;
	__u64 bytes_acked;
	__u32 rcv_nxt;
	__u64 bytes_received;
} __attribute__((preserve_access_index));

/* Whether the call that classifies a socket moved the first bytes of its direction. A socket first
 * traced mid-stream (opened before the agent, or its verdict evicted) is classified from whatever
 * bytes it moved then: the ambiguous case, counted. The fields are read without the socket lock
 * (a call racing an incoming segment can be counted too), and a send after exactly one byte is
 * taken for a start. */
static __always_inline int payload_at_stream_start(struct sock *sk, __u8 kind, __u32 seq)
{
	struct tcp_sock___payload *tp = (struct tcp_sock___payload *)sk;
	if (kind == SKEWSCOPE_HALF_SEND)
		return (__u32)(seq - (BPF_CORE_READ(tp, snd_una) - (__u32)BPF_CORE_READ(tp, bytes_acked))) <=
		       1;
	return seq == BPF_CORE_READ(tp, rcv_nxt) - (__u32)BPF_CORE_READ(tp, bytes_received);
}

static __always_inline void payload_read_tuple(struct sock *sk, struct skewscope_payload_event *e, __u8 typed)
{
	if (typed)
		READ_SOCK_TUPLE_TYPED(sk, e);
	else
		READ_SOCK_TUPLE(sk, e);
}

/* After a followed call moved `ret` (> 0) bytes: copies them (decides an undecided socket from
 * them) and submits them stamped `ts_ns`, the half's own stamp: one record; with `windows` (a
 * compile-time constant per call site: the socket-layer family, whose kernels have bpf_loop), one
 * per window of a call larger than a record, up to --payload-bytes. */
static __always_inline void payload_emit(const struct payload_arm *arm, struct sock *sk,
					 struct payload_caller who, __u8 kind, __u64 ts_ns, __u32 seq,
					 long ret, const int windows)
{
	__u32 zero = 0;
	struct payload_scratch *s = bpf_map_lookup_elem(&payload_scratch, &zero);
	if (!s)
		return;
	__u32 most = windows ? SKEWSCOPE_PAYLOAD_CALL_MAX : SKEWSCOPE_PAYLOAD_MAX;
	__u32 limit = payload_max > most ? most : payload_max;
	__u32 want = (__u64)ret < limit ? (__u32)ret : limit;
	struct payload_walk *w = &s->walk;
	/* One buffer within one record (every ZMTP call from libzmq): one read, no walk. */
	const int walk = windows && (arm->shape != SKEWSCOPE_SHAPE_BUFFER || want > SKEWSCOPE_PAYLOAD_MAX);
	__u32 got;
	if (walk) {
		if (payload_walk_start(w, arm, ret, want, seq) == 0)
			payload_walk_run(w, 0); /* the first window: it decides the socket */
		got = w->at;
	} else {
		got = payload_copy(s, arm, want);
	}
	if (got > SKEWSCOPE_PAYLOAD_MAX)
		got = SKEWSCOPE_PAYLOAD_MAX;
	got = payload_helper_size(got); /* also the ring buffer record's size below */
	__u8 proto = arm->protocol;
	if (proto == SKEWSCOPE_PROTO_UNDECIDED || proto == SKEWSCOPE_PROTO_KAFKA_PORT) {
		if (proto == SKEWSCOPE_PROTO_UNDECIDED && !payload_at_stream_start(sk, kind, seq))
			payload_count(SKEWSCOPE_PCNT_CLASSIFIED_MID_STREAM);
		proto = proto == SKEWSCOPE_PROTO_UNDECIDED ? payload_classify(s->data, got, kind)
							   : payload_kafka_role(kind);
		struct payload_verdict *v = payload_verdict_of(sk, who.typed);
		if (v)
			v->protocol = proto;
		payload_count_verdict(proto);
		if (payload_not_followed(proto))
			return;
	}
	struct skewscope_payload_event *e = &s->hdr;
	e->ts_ns = ts_ns;
	e->cgroup_id = payload_cgroup_id(who);
	payload_read_tuple(sk, e, who.typed);
	e->kind = kind; /* seq, bytes and captured_len: per record, payload_submit_window */
	e->protocol = proto;
	e->pad[0] = e->pad[1] = 0;
	__u64 copied = got;
	if (walk) {
		payload_walk_run(w, 1); /* the call's other windows, if any */
		if (w->ring_full)
			return;
		copied = w->done;
	} else {
		w->seq = seq;
		w->ret = (__u64)ret;
		w->window = 0;
		w->at = got;
	}
	if (copied < (__u64)ret)
		payload_count(SKEWSCOPE_PCNT_TRUNCATED);
	payload_submit_window(s, w, 1);
}

/* At syscall exit of an armed call: copies and submits (payload_emit); a send is stamped at its
 * entry, a receive now. Always disarms the thread. */
static __always_inline void payload_on_exit(__u64 id, struct sock *sk, __u8 kind, __u64 entry_ns, __u32 seq,
					    long ret)
{
	struct payload_arm *armed = bpf_map_lookup_elem(&payload_armed, &id);
	if (!armed)
		return;
	struct payload_arm arm = *armed;
	bpf_map_delete_elem(&payload_armed, &id);
	if (ret <= 0)
		return;
	payload_emit(&arm, sk, payload_helper_caller(), kind,
		     kind == SKEWSCOPE_HALF_SEND ? entry_ns : bpf_ktime_get_ns(), seq, ret, 0);
}

/* The calling thread exits: its armed call, if any, can never complete. */
static __always_inline void payload_forget(__u64 id)
{
	if (payload_max)
		bpf_map_delete_elem(&payload_armed, &id);
}
