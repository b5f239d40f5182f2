/* Types the tc programs need beyond lib/kernel_types.bpf.h. struct __sk_buff is UAPI (the
 * verifier rewrites each context field access, so the layout here must be the UAPI one, up to the
 * last field read); struct sk_buff and struct net_device are kernel-internal and read through
 * CO-RE, so only their field names and types matter. */
#pragma once

#define SKEWSCOPE_TC_ACT_OK 0
#define SKEWSCOPE_ETH_HLEN 14
#define SKEWSCOPE_ETH_P_IP 0x0800
#define SKEWSCOPE_ETH_P_IPV6 0x86DD
#define SKEWSCOPE_BPF_SKB_CLOCK_REALTIME 0
#define SKEWSCOPE_WIRE_IPPROTO_TCP 6

struct bpf_sock;
struct bpf_flow_keys;

/* UAPI linux/bpf.h, fields up to hwtstamp (Linux 5.18 and later). */
struct __sk_buff {
	__u32 len;
	__u32 pkt_type;
	__u32 mark;
	__u32 queue_mapping;
	__u32 protocol;
	__u32 vlan_present;
	__u32 vlan_tci;
	__u32 vlan_proto;
	__u32 priority;
	__u32 ingress_ifindex;
	__u32 ifindex;
	__u32 tc_index;
	__u32 cb[5];
	__u32 hash;
	__u32 tc_classid;
	__u32 data;
	__u32 data_end;
	__u32 napi_id;
	__u32 family;
	__u32 remote_ip4;
	__u32 local_ip4;
	__u32 remote_ip6[4];
	__u32 local_ip6[4];
	__u32 remote_port;
	__u32 local_port;
	__u32 data_meta;
	union {
		struct bpf_flow_keys *flow_keys;
		__u64 : 64;
	} __attribute__((aligned(8)));
	__u64 tstamp;
	__u32 wire_len;
	__u32 gso_segs;
	union {
		struct bpf_sock *sk;
		__u64 : 64;
	} __attribute__((aligned(8)));
	__u32 gso_size;
	__u8 tstamp_type;
	__u32 : 24;
	__u64 hwtstamp;
};

/* The context fields that not every supported kernel has, for CO-RE existence checks only
 * (bpf_core_field_exists against the kernel's own struct __sk_buff; never read through). */
struct __sk_buff___fields {
	__u8 tstamp_type; /* Linux >= 5.18 */
	__u64 hwtstamp;	  /* Linux >= 5.16 */
} __attribute__((preserve_access_index));

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct net_device {
	possible_net_t nd_net;
};

struct sk_buff {
	struct net_device *dev;
};

#pragma clang attribute pop
