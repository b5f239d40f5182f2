/* The payload detector's decision, a pure function of a socket's first bytes and of the direction
 * they moved: compiled into the BPF programs (payload_capture.bpf.h) and into the unit tests,
 * which feed it real captured bytes (tests/unit/capture/payload_classify_test.cpp).
 * Plain C on fixed-width types; no helper calls, no kernel types beyond __uN. */
#ifndef SKEWSCOPE_PAYLOAD_CLASSIFY_H
#define SKEWSCOPE_PAYLOAD_CLASSIFY_H

#include "skewscope/abi/payload_event.h"

static inline __u16 payload_be16(const __u8 *p)
{
	return ((__u16)p[0] << 8) | p[1];
}

static inline __u32 payload_be32(const __u8 *p)
{
	return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) | ((__u32)p[2] << 8) | p[3];
}

/* A Kafka request header: int32 size, int16 api_key 0..99, int16 api_version 0..31, int32
 * correlation id, int16 client id length -1..size-10. */
static inline int payload_looks_like_kafka_request(const __u8 *b, __u32 n)
{
	if (n < 14)
		return 0;
	__u32 size = payload_be32(b);
	__u16 api_key = payload_be16(b + 4), api_version = payload_be16(b + 6);
	__s16 client_id_len = (__s16)payload_be16(b + 12);
	return size >= 10 && size < (100u << 20) && api_key < 100 && api_version < 32 &&
	       client_id_len >= -1 && (__u32)(client_id_len + 10) <= size;
}

/* The first bytes a socket moved (n of them, `kind` the direction: enum skewscope_half_kind) ->
 * its verdict:
 *  - ZMTP 3.x: the greeting signature, 0xFF, 8 bytes, 0x7F (both ends send one first);
 *  - a Kafka request *sent* first: a client's end (KAFKA, followed);
 *  - a Kafka request *received* first: a broker's end, or a forwarder's listening end
 *    (KAFKA_BROKER_SIDE). The agent follows client ends only (a client speaks first), so this
 *    end is never copied;
 *  - anything else: OTHER. */
static inline __u8 payload_classify(const __u8 *b, __u32 n, __u8 kind)
{
	if (n >= 10 && b[0] == 0xff && b[9] == 0x7f)
		return SKEWSCOPE_PROTO_ZMTP;
	if (payload_looks_like_kafka_request(b, n))
		return kind == SKEWSCOPE_HALF_SEND ? SKEWSCOPE_PROTO_KAFKA
						   : SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE;
	return SKEWSCOPE_PROTO_OTHER;
}

/* A socket named Kafka by its port (--payload-port) whose end its port cannot tell (both of its
 * ports named: payload_kafka_port_end) learns it from its first call that moved bytes: a send
 * makes it a client's end. */
static inline __u8 payload_kafka_role(__u8 kind)
{
	return kind == SKEWSCOPE_HALF_SEND ? SKEWSCOPE_PROTO_KAFKA : SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE;
}

/* A socket named Kafka by its port: the port's side is its end. Connected to a named port (the
 * remote one), a client's end, followed; bound to it (the local one), a broker's end or a
 * forwarder's listening end, never copied. Decided by the port, not by the direction of the first
 * bytes seen, so that a connection older than the agent (whose first call seen may be the receive
 * of a response: a consumer waiting on its Fetch) is still followed. Both ports named: the first
 * bytes' direction decides (KAFKA_PORT, then payload_kafka_role). */
static inline __u8 payload_kafka_port_end(int local_named, int remote_named)
{
	if (local_named && remote_named)
		return SKEWSCOPE_PROTO_KAFKA_PORT;
	return remote_named ? SKEWSCOPE_PROTO_KAFKA : SKEWSCOPE_PROTO_KAFKA_BROKER_SIDE;
}

#endif
