/* For the raw sys_enter/sys_exit tracepoints: the traced syscalls' numbers and where their
 * arguments are in the user registers, per architecture. */
#pragma once

#if defined(__TARGET_ARCH_arm64)
#define SYS_ARG(regs, n) ((regs)->regs[n])
#define SYS_NR(regs) ((regs)->syscallno)
#define SYS_NATIVE(regs) 1
enum {
	NR_read = 63,
	NR_write = 64,
	NR_readv = 65,
	NR_writev = 66,
	NR_sendto = 206,
	NR_recvfrom = 207,
	NR_sendmsg = 211,
	NR_recvmsg = 212,
	NR_recvmmsg = 243,
	NR_sendmmsg = 269
};
#else
static __always_inline unsigned long sys_arg_x86(struct pt_regs *regs, int n)
{
	return n == 0 ? regs->di : n == 1 ? regs->si : n == 2 ? regs->dx : regs->r10;
}
#define SYS_ARG(regs, n) sys_arg_x86(regs, n)
#define SYS_NR(regs) ((long)(regs)->orig_ax)
/* A 32-bit process numbers its syscalls differently (ia32 1 is exit, not write): 64-bit user
 * code segment only (__USER_CS). The classic syscall tracepoints skip compat calls too. */
#define SYS_NATIVE(regs) ((regs)->cs == 0x33)
enum {
	NR_read = 0,
	NR_write = 1,
	NR_readv = 19,
	NR_writev = 20,
	NR_sendto = 44,
	NR_recvfrom = 45,
	NR_sendmsg = 46,
	NR_recvmsg = 47,
	NR_recvmmsg = 299,
	NR_sendmmsg = 307
};
#endif

/* The ABI's code of a traced syscall (SKEWSCOPE_SYS_WRITE..SENDMMSG send, READ..RECVMMSG
 * receive), or 0 for any other number. */
static __always_inline __u8 traced_syscall_of(long nr)
{
	switch (nr) {
	case NR_write: return SKEWSCOPE_SYS_WRITE;
	case NR_writev: return SKEWSCOPE_SYS_WRITEV;
	case NR_sendto: return SKEWSCOPE_SYS_SENDTO;
	case NR_sendmsg: return SKEWSCOPE_SYS_SENDMSG;
	case NR_sendmmsg: return SKEWSCOPE_SYS_SENDMMSG;
	case NR_read: return SKEWSCOPE_SYS_READ;
	case NR_readv: return SKEWSCOPE_SYS_READV;
	case NR_recvfrom: return SKEWSCOPE_SYS_RECVFROM;
	case NR_recvmsg: return SKEWSCOPE_SYS_RECVMSG;
	case NR_recvmmsg: return SKEWSCOPE_SYS_RECVMMSG;
	}
	return 0;
}

static __always_inline int traced_syscall_sends(__u8 syscall)
{
	return syscall >= SKEWSCOPE_SYS_WRITE && syscall <= SKEWSCOPE_SYS_SENDMMSG;
}

static __always_inline int is_traced_nr(long nr)
{
	return traced_syscall_of(nr) != 0;
}
