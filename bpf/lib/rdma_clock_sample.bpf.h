/* Samples of the NIC clock: the provider's query_rt_values (what the inline
 * ibv_query_rt_values_ex calls), probed at entry and return. Each call the application makes is
 * one sample (the NIC's raw clock, bracketed by the probe's CLOCK_MONOTONIC), from which the agent
 * maps raw completion stamps (agent/capture/rdma_nic_clock.hpp). Included by rdma_verbs.bpf.c. */
#pragma once

/* query_rt_values entry -> return, per thread. */
struct rt_call {
	__u64 context, values, start_ns;
};
struct {
	__uint(type, 9 /* BPF_MAP_TYPE_LRU_HASH */);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct rt_call);
} rt_calls SEC(".maps");

/* int query_rt_values(struct ibv_context *, struct ibv_values_ex *): a sample of the NIC clock,
 * bracketed by the probe's CLOCK_MONOTONIC at entry and return. */
SEC("uprobe")
int rdma_query_rt_values(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rt_call call = {.context = ARG1(ctx), .values = ARG2(ctx), .start_ns = bpf_ktime_get_ns()};
	bpf_map_update_elem(&rt_calls, &id, &call, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int rdma_query_rt_values_ret(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	struct rt_call *call = bpf_map_lookup_elem(&rt_calls, &id);
	if (!call)
		return 0;
	struct rt_call c = *call;
	bpf_map_delete_elem(&rt_calls, &id);
	if ((int)RET(ctx) != 0 || !(read_user_u32(c.values + VALUES_COMP_MASK) & VALUES_MASK_RAW_CLOCK))
		return 0;
	struct skewscope_rdma_event *e = reserve(SKEWSCOPE_RDMA_CLOCK_SAMPLE, now);
	if (!e)
		return 0;
	/* timespec raw_clock: mlx5 puts the cycle count in tv_nsec with tv_sec 0; sec * 1e9 + nsec
	 * is that count, and a provider that fills both gets its value back. */
	e->nic_ts = read_user_u64(c.values + VALUES_RAW_CLOCK) * 1000000000ULL +
		    read_user_u64(c.values + VALUES_RAW_CLOCK + 8);
	e->sample_start_ns = c.start_ns;
	e->context = c.context;
	submit(e);
	return 0;
}
