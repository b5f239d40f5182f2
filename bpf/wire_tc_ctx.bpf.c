// SPDX-License-Identifier: GPL-2.0
/* Wire halves of TCP traffic from tc (clsact): the variant for kernels without the
 * bpf_cast_to_kern_ctx kfunc (Linux < 6.2; Debian 11's 5.10 and Debian 12's 6.1). The same
 * segment parsing and record as wire_tc.bpf.c (lib/wire_segment.bpf.h); it reads only what
 * struct __sk_buff exposes.
 *
 * What the kfunc gave that the context cannot: the interface's network namespace (the context has
 * no device pointer, and at ingress no socket either). The agent knows it, since it attached the
 * program: it loads this object once per namespace it attaches in and sets iface_netns_ino before
 * load; the instances share one ring buffer and one set of counters.
 *
 * Stamps, by what the context has on the running kernel (CO-RE field checks, resolved at load):
 *  - tstamp_type (Linux >= 5.18): read, so skb->tstamp is seen as it is; a CLOCK_REALTIME value is
 *    the kernel's receive stamp, exactly as in wire_tc.bpf.c;
 *  - without it, a departure time (CLOCK_MONOTONIC) can still reach tc ingress. The two clocks are
 *    told apart by size: a value more than an hour past the program's own monotonic time is not a
 *    departure time (TCP paces at most seconds ahead), so it is the CLOCK_REALTIME receive stamp;
 *    anything else is counted as unstamped (a host whose realtime clock is near 1970 loses the
 *    kernel's stamps, never gets a wrong one);
 *  - hwtstamp (Linux >= 5.16): the NIC's stamp; 0 before. */
#include "lib/kernel_types.bpf.h"
#include "lib/wire_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "skewscope/abi/wire_event.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the agent before load: the namespace of every interface this instance is attached to. */
const volatile __u32 iface_netns_ino = 0;

#define WIRE_DEPARTURE_HORIZON_NS (3600ULL * 1000000000ULL)

static __always_inline __u64 wire_receive_stamp(struct __sk_buff *skb, __u64 now)
{
	if (bpf_core_field_exists(((struct __sk_buff___fields *)0)->tstamp_type))
		return skb->tstamp_type == SKEWSCOPE_BPF_SKB_CLOCK_REALTIME ? skb->tstamp : 0;
	__u64 stamp = skb->tstamp;
	return stamp > now + WIRE_DEPARTURE_HORIZON_NS ? stamp : 0;
}

static __always_inline __u64 wire_hardware_stamp(struct __sk_buff *skb)
{
	if (bpf_core_field_exists(((struct __sk_buff___fields *)0)->hwtstamp))
		return skb->hwtstamp;
	return 0;
}

static __always_inline __u32 wire_interface_netns(struct __sk_buff *skb)
{
	return iface_netns_ino;
}

#include "lib/wire_segment.bpf.h"

SEC("tc")
int wire_ingress_ctx(struct __sk_buff *skb)
{
	return on_segment(skb, SKEWSCOPE_WIRE_INGRESS);
}

SEC("tc")
int wire_egress_ctx(struct __sk_buff *skb)
{
	return on_segment(skb, SKEWSCOPE_WIRE_EGRESS);
}
