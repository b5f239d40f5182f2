/* The record the wire-level programs (tc ingress/egress) put in their ring buffer, shared by bpf/
 * and agent/. Plain C, fixed-width types, explicit padding: the C++ side static_asserts every
 * offset. A wire half is one TCP segment with payload, seen where it leaves (egress) or enters
 * (ingress) a network interface the operator named. */
#ifndef SKEWSCOPE_ABI_WIRE_EVENT_H
#define SKEWSCOPE_ABI_WIRE_EVENT_H

#ifdef __BPF__
/* bpf/lib/kernel_types.bpf.h provides the __uN types in BPF programs. */
#else
#include <linux/types.h>
#endif

enum skewscope_wire_direction {
	SKEWSCOPE_WIRE_EGRESS = 1,  /* leaves this interface: a send half */
	SKEWSCOPE_WIRE_INGRESS = 2, /* enters it: a receive half */
};

/* Which program stamped a wire half. The sock_ops TX timestamping callbacks stamp one byte per
 * sendmsg (its last, the kernel's tskey): such a half has seq = tskey and bytes = 1. */
enum skewscope_wire_origin {
	SKEWSCOPE_WIRE_FROM_TC = 0,	    /* tc ingress/egress: one half per segment */
	SKEWSCOPE_WIRE_FROM_SOCKOPS_SW = 1, /* sock_ops, software stamp at the driver (SND_SW) */
	SKEWSCOPE_WIRE_FROM_SOCKOPS_HW = 2, /* sock_ops, NIC hardware stamp (SND_HW): hw_ns only */
	SKEWSCOPE_WIRE_FROM_TC_ACK = 3,	    /* tc, a pure ACK: seq = its acknowledgement number,
	                                      * bytes = 1, sent by its receiver back to the data's sender */
};

/* Per-CPU counters of the wire programs (array map index). */
enum skewscope_wire_counter {
	SKEWSCOPE_WIRE_CNT_EMITTED = 0,	   /* wire halves submitted to the ring buffer */
	SKEWSCOPE_WIRE_CNT_RINGBUF_FULL,   /* bpf_ringbuf_reserve failed: wire half lost */
	SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED, /* ingress segments carrying the kernel's receive stamp */
	SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED,   /* ingress segments without it: stamped by the program */
	SKEWSCOPE_WIRE_CNT_HW_STAMPED,	   /* segments carrying a NIC hardware stamp */
	SKEWSCOPE_WIRE_CNT_NOT_PARSED,	   /* IP/TCP headers not readable (truncated, IPv6 extension) */
	SKEWSCOPE_WIRE_CNT__COUNT,
};

/* Addresses as in skewscope_half_event: IPv6 or IPv4-mapped IPv6, local_* is this host's end
 * (source on egress, destination on ingress). Ports in host byte order. */
struct skewscope_wire_event {
	__u64 mono_ns;	   /* bpf_ktime_get_ns() in the tc program: CLOCK_MONOTONIC */
	__u64 skb_real_ns; /* ingress: skb->tstamp when it is the kernel's receive stamp
	                      * (CLOCK_REALTIME, net_timestamp on); 0 otherwise */
	__u64 hw_ns;	   /* skb hardware stamp in the NIC's PHC timescale; 0 when none */
	__u64 cgroup_id;   /* egress: cgroup v2 id of the sending socket; 0 on ingress */
	__u8 local_addr[16];
	__u8 remote_addr[16];
	__u16 local_port;
	__u16 remote_port;
	__u32 seq;	 /* TCP sequence number of the segment's first payload byte */
	__u32 bytes;	 /* payload bytes (a GSO/GRO packet counts all of its segments) */
	__u32 netns_ino; /* inode of the interface's network namespace */
	__u32 ifindex;	 /* the interface, in that namespace */
	__u8 direction;	 /* enum skewscope_wire_direction */
	__u8 origin;	 /* enum skewscope_wire_origin */
	__u8 pad[2];
};

#endif
