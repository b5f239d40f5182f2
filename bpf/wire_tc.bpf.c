// SPDX-License-Identifier: GPL-2.0
/* Wire halves of TCP traffic from tc (clsact) on the interfaces the operator names: the variant
 * for kernels with the bpf_cast_to_kern_ctx kfunc (Linux >= 6.2). One object serves every
 * interface of every namespace: the namespace is read from the packet's own device.
 *
 * Egress: a segment with payload leaves the host; ingress: it arrives. Either way the record holds
 * the directed 4-tuple, the sequence number of the first payload byte and the payload length, so
 * the agent pairs wire halves exactly like syscall halves (lib/wire_segment.bpf.h). Stamps:
 *  - every record: bpf_ktime_get_ns() here (CLOCK_MONOTONIC), the program's own time;
 *  - ingress: skb->tstamp when it is the kernel's receive stamp (taken at netif_receive/netif_rx
 *    with ktime_get_real() while the net_timestamp static key is on; CLOCK_REALTIME). Otherwise
 *    skb->tstamp is 0 or a departure time (TCP's EDT, CLOCK_MONOTONIC, carried over a veth), which
 *    is not a receive time: then only the program's time is used, and that is counted;
 *  - both: the NIC's hardware stamp when the driver attached one (PHC timescale).
 * Kernels without the kfunc load wire_tc_ctx.bpf.c instead. */
#include "lib/kernel_types.bpf.h"
#include "lib/wire_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "skewscope/abi/wire_event.h"

/* Kernel kfunc (Linux >= 6.2): the kernel's sk_buff behind a tc program's context. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

char LICENSE[] SEC("license") = "GPL";

/* Reading tstamp_type (Linux >= 5.18, as every kernel with the kfunc) makes the program see
 * skb->tstamp as it is, whatever its clock. */
static __always_inline __u64 wire_receive_stamp(struct __sk_buff *skb, __u64 now)
{
	return skb->tstamp_type == SKEWSCOPE_BPF_SKB_CLOCK_REALTIME ? skb->tstamp : 0;
}

static __always_inline __u64 wire_hardware_stamp(struct __sk_buff *skb)
{
	return skb->hwtstamp;
}

static __always_inline __u32 wire_interface_netns(struct __sk_buff *skb)
{
	struct sk_buff *kskb = bpf_cast_to_kern_ctx(skb);
	return BPF_CORE_READ(kskb, dev, nd_net.net, ns.inum);
}

#include "lib/wire_segment.bpf.h"

SEC("tc")
int wire_ingress(struct __sk_buff *skb)
{
	return on_segment(skb, SKEWSCOPE_WIRE_INGRESS);
}

SEC("tc")
int wire_egress(struct __sk_buff *skb)
{
	return on_segment(skb, SKEWSCOPE_WIRE_EGRESS);
}
