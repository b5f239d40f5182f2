// SPDX-License-Identifier: GPL-2.0
/* Send-side wire halves from the sock_ops TX timestamping callbacks (Linux 6.14), for the sockets
 * of the cgroups the operator names (--wire-cgroup).
 *
 * When a connection is established, TX timestamping is switched on for it (SK_BPF_CB_FLAGS: this
 * program's own callbacks, nothing the application sees). At each sendmsg the last skb is marked
 * for stamping; when the driver stamps it in software (SND_SW, the moment the packet is handed
 * to the device) a half is emitted with the program's own time, and when the NIC stamps it
 * (SND_HW) a second, hardware-only half with the NIC's stamp. The key is the kernel's tskey: the
 * sequence number of the sendmsg's last byte (seq = tskey, bytes = 1), so the receive segment
 * holding that byte completes the pair. Sockets always pass unchanged (return 1). */
#include "lib/kernel_types.bpf.h"
#include "lib/sockops_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "skewscope/abi/wire_event.h"
#include "lib/wire_maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
extern int bpf_sock_ops_enable_tx_tstamp(struct bpf_sock_ops_kern *skops, __u64 flags) __ksym;

static __always_inline void v4_mapped_sockops(__u8 out[16], __u32 addr)
{
	__builtin_memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(out + 12, &addr, 4);
}

static __always_inline void emit(struct bpf_sock_ops *skops, struct bpf_sock_ops_kern *kctx, __u8 origin)
{
	struct sk_buff___sockops *skb = kctx->skb;
	if (!skb)
		return;
	struct skb_shared_info *shinfo =
		bpf_rdonly_cast(skb->head + skb->end, bpf_core_type_id_kernel(struct skb_shared_info));
	__u32 tskey = shinfo->tskey;
	__u64 now = bpf_ktime_get_ns();
	struct skewscope_wire_event *e = bpf_ringbuf_reserve(&wire_halves, sizeof(*e), 0);
	if (!e) {
		count(SKEWSCOPE_WIRE_CNT_RINGBUF_FULL);
		return;
	}
	e->mono_ns = now;
	e->skb_real_ns = 0;
	e->hw_ns = origin == SKEWSCOPE_WIRE_FROM_SOCKOPS_HW ? skops->skb_hwtstamp : 0;
	if (e->hw_ns)
		count(SKEWSCOPE_WIRE_CNT_HW_STAMPED);
	e->cgroup_id = 0;
	if (skops->family == SKEWSCOPE_WIRE_AF_INET) {
		v4_mapped_sockops(e->local_addr, skops->local_ip4);
		v4_mapped_sockops(e->remote_addr, skops->remote_ip4);
	} else {
		/* The context allows only 4-byte loads of these fields. */
		__u32 word;
		for (int i = 0; i < 4; i++) {
			word = skops->local_ip6[i];
			__builtin_memcpy(e->local_addr + 4 * i, &word, 4);
			word = skops->remote_ip6[i];
			__builtin_memcpy(e->remote_addr + 4 * i, &word, 4);
		}
	}
	e->local_port = (__u16)skops->local_port;
	e->remote_port = (__u16)bpf_ntohl(skops->remote_port);
	e->seq = tskey;
	e->bytes = 1;
	struct sock *sk = kctx->sk;
	e->netns_ino = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	e->ifindex = BPF_CORE_READ(skb, dev, ifindex); /* the device that stamped it: its PHC */
	e->direction = SKEWSCOPE_WIRE_EGRESS;
	e->origin = origin;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	__u64 queued = bpf_ringbuf_query(&wire_halves, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, queued >= WIRE_WAKEUP_AT_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	count(SKEWSCOPE_WIRE_CNT_EMITTED);
}

SEC("sockops")
int wire_sockops(struct bpf_sock_ops *skops)
{
	struct bpf_sock_ops_kern *kctx = bpf_cast_to_kern_ctx(skops);
	int flags = SKEWSCOPE_SK_BPF_CB_TX_TIMESTAMPING;
	switch (skops->op) {
	case SKEWSCOPE_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case SKEWSCOPE_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_setsockopt(skops, SKEWSCOPE_SOL_SOCKET, SKEWSCOPE_SK_BPF_CB_FLAGS, &flags, sizeof(flags));
		break;
	case SKEWSCOPE_SOCK_OPS_TSTAMP_SENDMSG_CB: bpf_sock_ops_enable_tx_tstamp(kctx, 0); break;
	case SKEWSCOPE_SOCK_OPS_TSTAMP_SND_SW_CB: emit(skops, kctx, SKEWSCOPE_WIRE_FROM_SOCKOPS_SW); break;
	case SKEWSCOPE_SOCK_OPS_TSTAMP_SND_HW_CB: emit(skops, kctx, SKEWSCOPE_WIRE_FROM_SOCKOPS_HW); break;
	}
	return 1;
}
