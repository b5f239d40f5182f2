/* One TCP segment at tc ingress or egress -> one wire half (or nothing), shared by the two tc
 * objects (wire_tc.bpf.c, wire_tc_ctx.bpf.c; docs/wire-timestamps.md says which loads where).
 * Everything here reads only what struct __sk_buff and the packet give on every kernel the agent
 * supports. What differs between the objects, each defines before including this header:
 *  - wire_receive_stamp(skb, now): the kernel's CLOCK_REALTIME receive stamp, or 0;
 *  - wire_hardware_stamp(skb): the NIC's stamp, or 0;
 *  - wire_interface_netns(skb): the inode of the interface's network namespace.
 * Packets always pass unchanged (TC_ACT_OK). */
#pragma once

#include "wire_maps.bpf.h"

/* Set by the agent before load. egress_data: data segments at egress are send halves (off when
 * the send side is sock_ops). ack_samples: pure ACKs are halves too, keyed by their ack number:
 * each is a one-way sample from the data's receiver back to its sender, so even a one-way flow
 * bounds the clock offset from both sides. */
const volatile __u8 egress_data = 1;
const volatile __u8 ack_samples = 0;

#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

struct ipv4_header {
	__u8 version_ihl;
	__u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	__u8 ttl;
	__u8 protocol;
	__be16 check;
	__be32 saddr;
	__be32 daddr;
};

struct ipv6_header {
	__be32 version_class_flow;
	__be16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	__u8 saddr[16];
	__u8 daddr[16];
};

struct tcp_header {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res; /* data offset in the high nibble */
	__u8 flags;
	__be16 window;
	__be16 check;
	__be16 urg_ptr;
};

static __always_inline void v4_mapped(__u8 out[16], __be32 addr)
{
	__builtin_memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(out + 12, &addr, 4);
}

static __always_inline int is_ipv6_ext(__u8 next)
{
	return next == 0 || next == 43 || next == 60;
}

static __always_inline int on_segment(struct __sk_buff *skb, __u8 direction)
{
	__u8 src[16], dst[16];
	__u32 l4_offset;
	__u32 proto = bpf_ntohs((__u16)skb->protocol);
	if (proto == SKEWSCOPE_ETH_P_IP) {
		struct ipv4_header ip;
		if (bpf_skb_load_bytes(skb, SKEWSCOPE_ETH_HLEN, &ip, sizeof(ip))) {
			count(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
			return SKEWSCOPE_TC_ACT_OK;
		}
		/* Not TCP, or a fragment (never seen for TCP with PMTU discovery): nothing to pair. */
		if (ip.protocol != SKEWSCOPE_WIRE_IPPROTO_TCP || (bpf_ntohs(ip.frag_off) & 0x3fff))
			return SKEWSCOPE_TC_ACT_OK;
		v4_mapped(src, ip.saddr);
		v4_mapped(dst, ip.daddr);
		l4_offset = SKEWSCOPE_ETH_HLEN + (ip.version_ihl & 0x0f) * 4;
	} else if (proto == SKEWSCOPE_ETH_P_IPV6) {
		struct ipv6_header ip6;
		if (bpf_skb_load_bytes(skb, SKEWSCOPE_ETH_HLEN, &ip6, sizeof(ip6))) {
			count(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
			return SKEWSCOPE_TC_ACT_OK;
		}
		/* Up to three extension headers (hop-by-hop, routing, destination options) are
		 * followed; TCP behind more is counted as not parsed. Other protocols are not ours. */
		__u8 next = ip6.nexthdr;
		l4_offset = SKEWSCOPE_ETH_HLEN + sizeof(ip6);
		for (int i = 0; i < 3 && is_ipv6_ext(next); i++) {
			__u8 ext[2];
			if (bpf_skb_load_bytes(skb, l4_offset, ext, sizeof(ext))) {
				count(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
				return SKEWSCOPE_TC_ACT_OK;
			}
			next = ext[0];
			l4_offset += (ext[1] + 1) * 8;
		}
		if (next != SKEWSCOPE_WIRE_IPPROTO_TCP) {
			if (is_ipv6_ext(next))
				count(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
			return SKEWSCOPE_TC_ACT_OK;
		}
		__builtin_memcpy(src, ip6.saddr, 16);
		__builtin_memcpy(dst, ip6.daddr, 16);
	} else {
		return SKEWSCOPE_TC_ACT_OK;
	}
	if (l4_offset > 256)
		return SKEWSCOPE_TC_ACT_OK;
	struct tcp_header tcp;
	if (bpf_skb_load_bytes(skb, l4_offset, &tcp, sizeof(tcp))) {
		count(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
		return SKEWSCOPE_TC_ACT_OK;
	}
	__u32 headers = l4_offset + (tcp.doff_res >> 4) * 4;
	/* skb->len covers every segment of a GSO/GRO packet: the payload is all of it. SYNs, FINs
	 * and RSTs without data carry no byte to pair; pure ACKs only as ACK samples. */
	__u8 origin = SKEWSCOPE_WIRE_FROM_TC;
	if (skb->len <= headers) {
		if (!ack_samples || (tcp.flags & (TCP_FLAG_SYN | TCP_FLAG_FIN | TCP_FLAG_RST)) ||
		    !(tcp.flags & TCP_FLAG_ACK))
			return SKEWSCOPE_TC_ACT_OK;
		origin = SKEWSCOPE_WIRE_FROM_TC_ACK;
	} else if (direction == SKEWSCOPE_WIRE_EGRESS && !egress_data) {
		return SKEWSCOPE_TC_ACT_OK;
	}

	__u64 now = bpf_ktime_get_ns();
	struct skewscope_wire_event *e = bpf_ringbuf_reserve(&wire_halves, sizeof(*e), 0);
	if (!e) {
		count(SKEWSCOPE_WIRE_CNT_RINGBUF_FULL);
		return SKEWSCOPE_TC_ACT_OK;
	}
	e->mono_ns = now;
	e->skb_real_ns = 0;
	if (direction == SKEWSCOPE_WIRE_INGRESS) {
		e->skb_real_ns = wire_receive_stamp(skb, now);
		count(e->skb_real_ns ? SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED : SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED);
	}
	e->hw_ns = wire_hardware_stamp(skb);
	if (e->hw_ns)
		count(SKEWSCOPE_WIRE_CNT_HW_STAMPED);
	e->cgroup_id = direction == SKEWSCOPE_WIRE_EGRESS ? bpf_skb_cgroup_id(skb) : 0;
	__u16 sport = bpf_ntohs(tcp.source), dport = bpf_ntohs(tcp.dest);
	if (direction == SKEWSCOPE_WIRE_EGRESS) {
		__builtin_memcpy(e->local_addr, src, 16);
		__builtin_memcpy(e->remote_addr, dst, 16);
		e->local_port = sport;
		e->remote_port = dport;
	} else {
		__builtin_memcpy(e->local_addr, dst, 16);
		__builtin_memcpy(e->remote_addr, src, 16);
		e->local_port = dport;
		e->remote_port = sport;
	}
	if (origin == SKEWSCOPE_WIRE_FROM_TC_ACK) {
		e->seq = bpf_ntohl(tcp.ack_seq);
		e->bytes = 1;
	} else {
		e->seq = bpf_ntohl(tcp.seq);
		e->bytes = skb->len - headers;
	}
	e->netns_ino = wire_interface_netns(skb);
	e->ifindex = skb->ifindex;
	e->direction = direction;
	e->origin = origin;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	__u64 queued = bpf_ringbuf_query(&wire_halves, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, queued >= WIRE_WAKEUP_AT_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	count(SKEWSCOPE_WIRE_CNT_EMITTED);
	return SKEWSCOPE_TC_ACT_OK;
}
