/* One copy for both ends of a local ZMTP direction (sock_tp family only).
 *
 * When this agent follows both ends of a direction (sender and receiver on this host, in its
 * domains), the receiver's bytes are the sender's: its parse of the sender's copy already says
 * where each message starts and ends in the stream. The receiving end then needs only what its
 * TCP half carries (the first byte's sequence number, the bytes, the stamp), and its copy and the
 * agent's second parse of the same bytes are saved. Such a receive is not copied: its half is
 * flagged SKEWSCOPE_HALF_PAYLOAD_MIRRORED and counted (SKEWSCOPE_PCNT_RECV_MIRRORED); the agent
 * takes the messages whose last byte the call read from the sender's parse (docs/pairing.md,
 * "One copy for both ends").
 *
 * How a receiver learns that its sender is copied here: a sending ZMTP socket, at its first
 * copied call, files its direction (sender and receiver address and port) in payload_mirror_senders,
 * once per socket (its verdict remembers). A receiving ZMTP socket looks its direction up there,
 * at most MIRROR_MAX_LOOKUPS times, and once found every later receive of the socket is mirrored
 * (its verdict remembers: one lookup per socket, not per call). The first bytes of a stream (its
 * greeting, MIRROR_FIRST_BYTE) are always copied at both ends: the receiving end's parse of the
 * peer's greeting is what tells its own sending direction which ZMTP version the connection speaks.
 * A tuple seen through NAT differs at the two ends: not found, copied as before. */
#pragma once

/* Receives that start before this offset in their stream are copied at both ends (a ZMTP 3.x
 * greeting is 64 bytes; a 2.0 greeting and identity frame are shorter). */
#define MIRROR_FIRST_BYTE 64
/* A receiving socket whose sender is not found after this many lookups (a remote sender, a sender
 * outside the domains) stops looking: its calls are copied without a lookup each. */
#define MIRROR_MAX_LOOKUPS 8

/* payload_verdict.mirror bits. */
#define MIRROR_SENDER_FILED 1 /* this socket's sending direction is in payload_mirror_senders */
#define MIRROR_RECEIVES 2     /* this socket's receives are mirrored */

struct payload_mirror_key {
	__u8 sender_addr[16]; /* IPv6 or IPv4-mapped, as the half's tuple */
	__u8 receiver_addr[16];
	__u16 sender_port;
	__u16 receiver_port;
};

/* A tuple read the way a half's is. */
struct mirror_tuple {
	__u8 local_addr[16];
	__u8 remote_addr[16];
	__u16 local_port;
	__u16 remote_port;
	__u32 netns_ino;
};

/* An LRU: an evicted direction is only one whose receiver, if it had not looked yet, copies its
 * bytes as it would without this. Sized by the agent (1 entry without payload capture). */
struct {
	__uint(type, SKEWSCOPE_MAP_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct payload_mirror_key);
	__type(value, __u8);
} payload_mirror_senders SEC(".maps");

static __always_inline void mirror_key_of(struct sock *sk, __u8 kind, struct payload_mirror_key *key)
{
	struct mirror_tuple t;
	READ_SOCK_TUPLE_TYPED(sk, &t);
	const int send = kind == SKEWSCOPE_HALF_SEND;
	__builtin_memcpy(key->sender_addr, send ? t.local_addr : t.remote_addr, 16);
	__builtin_memcpy(key->receiver_addr, send ? t.remote_addr : t.local_addr, 16);
	key->sender_port = send ? t.local_port : t.remote_port;
	key->receiver_port = send ? t.remote_port : t.local_port;
}

/* A sending ZMTP socket's copied call: files its direction once. */
static __always_inline void mirror_file_sender(struct sock *sk, struct payload_verdict *v)
{
	if (!v || (v->mirror & MIRROR_SENDER_FILED))
		return;
	struct payload_mirror_key key;
	mirror_key_of(sk, SKEWSCOPE_HALF_SEND, &key);
	__u8 one = 1;
	if (bpf_map_update_elem(&payload_mirror_senders, &key, &one, BPF_ANY) == 0)
		v->mirror |= MIRROR_SENDER_FILED;
}

/* Whether a receive of `seq` (its first byte) on a followed ZMTP socket is left uncopied: 0 (no),
 * MIRROR_RECEIVES, or MIRROR_FIRST_RECEIVE for the socket's first such call. */
#define MIRROR_FIRST_RECEIVE 3
static __always_inline int mirror_receive(struct sock *sk, struct payload_verdict *v, __u32 seq)
{
	if (!v)
		return 0;
	if (v->mirror & MIRROR_RECEIVES)
		return MIRROR_RECEIVES;
	if (v->mirror_lookups >= MIRROR_MAX_LOOKUPS)
		return 0;
	/* The peer's first byte: rcv_nxt - bytes_received, for the socket's whole life. */
	struct tcp_sock___payload *tp = (struct tcp_sock___payload *)sk;
	__u32 first = BPF_CORE_READ(tp, rcv_nxt) - (__u32)BPF_CORE_READ(tp, bytes_received);
	if ((__u32)(seq - first) < MIRROR_FIRST_BYTE)
		return 0;
	v->mirror_lookups++;
	struct payload_mirror_key key;
	mirror_key_of(sk, SKEWSCOPE_HALF_RECV, &key);
	if (!bpf_map_lookup_elem(&payload_mirror_senders, &key))
		return 0;
	v->mirror |= MIRROR_RECEIVES;
	return MIRROR_FIRST_RECEIVE;
}
