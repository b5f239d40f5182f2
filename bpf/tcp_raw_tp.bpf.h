/* The raw_tp syscall family: one BTF raw tracepoint on sys_enter and one on sys_exit, filtered
 * by syscall number, the in-flight call in task-local storage. No classic tracepoint's argument
 * record is built for the hooked calls, but every syscall on the host runs the filter (measured:
 * more than the classic family costs the calls it does not hook), so the agent uses it only when
 * forced. Included by tcp_syscalls.bpf.c (one object, one ring buffer). */
#pragma once

/* The raw_tp family: the same hooks from two programs. The syscall number selects the call; its
 * arguments are read from the user registers the tracepoint hands over (plain BTF loads). */
SEC("tp_btf/sys_enter")
int sys_enter_tcp(unsigned long long *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	__u8 syscall = traced_syscall_of((long)ctx[1]);
	if (!syscall || !SYS_NATIVE(regs))
		return 0;
	long fd = (long)SYS_ARG(regs, 0);
	__u8 kind = traced_syscall_sends(syscall) ? SKEWSCOPE_HALF_SEND : SKEWSCOPE_HALF_RECV;
	__u64 vec = 0;
	/* The payload copy's buffer: (buf, len) for write/read/sendto/recvfrom and the iovec array
	 * (iov, count) for writev/readv; a msghdr (len 0) for sendmsg/recvmsg; none for the mmsg calls. */
	__u64 buf = SYS_ARG(regs, 1), buf_len = SYS_ARG(regs, 2), send_flags = 0;
	switch (syscall) {
	case SKEWSCOPE_SYS_SENDTO: send_flags = SYS_ARG(regs, 3); break;
	case SKEWSCOPE_SYS_SENDMSG:
		buf_len = 0;
		send_flags = SYS_ARG(regs, 2); /* MSG_DONTWAIT: never waits */
		break;
	case SKEWSCOPE_SYS_SENDMMSG:
		vec = SYS_ARG(regs, 1);
		buf = buf_len = 0;
		break;
	case SKEWSCOPE_SYS_RECVFROM:
		if (SYS_ARG(regs, 3) & MSG_PEEK_FLAG)
			return 0;
		break;
	case SKEWSCOPE_SYS_RECVMSG:
		if (SYS_ARG(regs, 2) & MSG_PEEK_FLAG)
			return 0;
		buf_len = 0;
		break;
	case SKEWSCOPE_SYS_RECVMMSG:
		if (SYS_ARG(regs, 3) & MSG_PEEK_FLAG)
			return 0;
		vec = SYS_ARG(regs, 1);
		buf = buf_len = 0;
		break;
	}
	return on_enter(V_RAW_TP, fd, kind, syscall, vec, buf, buf_len, send_flags);
}

SEC("tp_btf/sys_exit")
int sys_exit_tcp(unsigned long long *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	if (!is_traced_nr(SYS_NR(regs)))
		return 0;
	return on_exit(V_RAW_TP, (long)ctx[1]);
}
