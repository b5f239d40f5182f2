/* Types the sock_ops program needs beyond lib/kernel_types.bpf.h. struct bpf_sock_ops is UAPI
 * (context accesses are rewritten by the verifier: the layout must be the UAPI one up to the last
 * field read); the rest is kernel-internal, read through CO-RE by field name. */
#pragma once

#define SKEWSCOPE_SOL_SOCKET 1
#define SKEWSCOPE_WIRE_AF_INET 2
#define SKEWSCOPE_SK_BPF_CB_FLAGS 1009
#define SKEWSCOPE_SK_BPF_CB_TX_TIMESTAMPING 1

/* enum bpf_sock_ops_op values used here (UAPI). */
#define SKEWSCOPE_SOCK_OPS_ACTIVE_ESTABLISHED_CB 4
#define SKEWSCOPE_SOCK_OPS_PASSIVE_ESTABLISHED_CB 5
#define SKEWSCOPE_SOCK_OPS_TSTAMP_SND_SW_CB 17
#define SKEWSCOPE_SOCK_OPS_TSTAMP_SND_HW_CB 18
#define SKEWSCOPE_SOCK_OPS_TSTAMP_SENDMSG_CB 20

struct bpf_sock;

/* UAPI linux/bpf.h, up to skb_hwtstamp (Linux 6.2 and later). */
struct bpf_sock_ops {
	__u32 op;
	union {
		__u32 args[4];
		__u32 reply;
		__u32 replylong[4];
	};
	__u32 family;
	__u32 remote_ip4;
	__u32 local_ip4;
	__u32 remote_ip6[4];
	__u32 local_ip6[4];
	__u32 remote_port;
	__u32 local_port;
	__u32 is_fullsock;
	__u32 snd_cwnd;
	__u32 srtt_us;
	__u32 bpf_sock_ops_cb_flags;
	__u32 state;
	__u32 rtt_min;
	__u32 snd_ssthresh;
	__u32 rcv_nxt;
	__u32 snd_nxt;
	__u32 snd_una;
	__u32 mss_cache;
	__u32 ecn_flags;
	__u32 rate_delivered;
	__u32 rate_interval_us;
	__u32 packets_out;
	__u32 retrans_out;
	__u32 total_retrans;
	__u32 segs_in;
	__u32 data_segs_in;
	__u32 segs_out;
	__u32 data_segs_out;
	__u32 lost_out;
	__u32 sacked_out;
	__u32 sk_txhash;
	__u64 bytes_received;
	__u64 bytes_acked;
	union {
		struct bpf_sock *sk;
		__u64 : 64;
	} __attribute__((aligned(8)));
	union {
		void *skb_data;
		__u64 : 64;
	} __attribute__((aligned(8)));
	union {
		void *skb_data_end;
		__u64 : 64;
	} __attribute__((aligned(8)));
	__u32 skb_len;
	__u32 skb_tcp_flags;
	__u64 skb_hwtstamp;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct net_device___sockops {
	int ifindex;
};

struct sk_buff___sockops {
	struct net_device___sockops *dev;
	unsigned char *head;
	unsigned int end;
};

struct skb_shared_info {
	__u32 tskey;
};

struct bpf_sock_ops_kern {
	struct sock *sk;
	struct sk_buff___sockops *skb;
};

#pragma clang attribute pop
