// SPDX-License-Identifier: GPL-2.0
/* Send and receive halves of TCP traffic: one object, three capture families that fill one ring
 * buffer, one family loaded (chosen by the agent's candidate table, agent/capture/features.cpp):
 * - sock_tp (tcp_sock_tp.bpf.h): socket-layer tracepoints, the socket in hand, no fd walk; only
 *   socket calls pay anything. Preferred where the tracepoints exist and payload capture is off.
 * - btf / core_read (here): one classic tracepoint per syscall (sys_enter_write, ...), entry
 *   walks fd -> socket, the in-flight call in a hash keyed by thread (lib/syscall_calls.bpf.h).
 * - raw_tp (tcp_raw_tp.bpf.h): sys_enter/sys_exit filtered by syscall number. */
#include "lib/kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "skewscope/abi/half_event.h"
#include "lib/counters.bpf.h"
#include "lib/tcp_socket.bpf.h"
#include "lib/tcp_halves.bpf.h"
#include "lib/payload_capture.bpf.h"
#include "lib/syscall_regs.bpf.h"
#include "lib/syscall_calls.bpf.h"
#include "tcp_raw_tp.bpf.h"
#include "tcp_sock_tp.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define ARG(n) (ctx->args[n])

/* Each syscall's entry logic, written once for both walks. */
#define ENTRY(name, body)                                                                                    \
	static __always_inline int on_enter_##name(struct trace_event_raw_sys_enter *ctx, enum variant walk) \
	{                                                                                                    \
		body                                                                                         \
	}

/* Sends */
ENTRY(write, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_WRITE, 0, ARG(1), ARG(2), 0);)
ENTRY(writev, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_WRITEV, 0, ARG(1), ARG(2), 0);)
ENTRY(sendto,
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SENDTO, 0, ARG(1), ARG(2), ARG(3));)
ENTRY(sendmsg,
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SENDMSG, 0, ARG(1), 0, ARG(2));)
ENTRY(sendmmsg, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_SEND, SKEWSCOPE_SYS_SENDMMSG, ARG(1), 0, 0, 0);)

/* Receives: a peek copies bytes without consuming them, so it is not a receive. */
ENTRY(read, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_READ, 0, ARG(1), ARG(2), 0);)
ENTRY(readv, return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_READV, 0, ARG(1), ARG(2), 0);)
ENTRY(recvfrom, if (ARG(3) & MSG_PEEK_FLAG) return 0;
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_RECVFROM, 0, ARG(1), ARG(2), 0);)
ENTRY(recvmsg, if (ARG(2) & MSG_PEEK_FLAG) return 0;
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_RECVMSG, 0, ARG(1), 0, 0);)
ENTRY(recvmmsg, if (ARG(3) & MSG_PEEK_FLAG) return 0;
      return on_enter(walk, ARG(0), SKEWSCOPE_HALF_RECV, SKEWSCOPE_SYS_RECVMMSG, ARG(1), 0, 0, 0);)

/* Two entry programs per syscall, the same logic over each walk; the agent loads one of them
 * (autoload, decided before load by its candidate table). */
#define ENTRY_PROGRAMS(name)                                           \
	SEC("tracepoint/syscalls/sys_enter_" #name)                    \
	int enter_##name(struct trace_event_raw_sys_enter *ctx)        \
	{                                                              \
		return on_enter_##name(ctx, V_BTF);                    \
	}                                                              \
	SEC("tracepoint/syscalls/sys_enter_" #name)                    \
	int enter_##name##_core(struct trace_event_raw_sys_enter *ctx) \
	{                                                              \
		return on_enter_##name(ctx, V_CORE_READ);              \
	}

ENTRY_PROGRAMS(write)
ENTRY_PROGRAMS(writev)
ENTRY_PROGRAMS(sendto)
ENTRY_PROGRAMS(sendmsg)
ENTRY_PROGRAMS(sendmmsg)
ENTRY_PROGRAMS(read)
ENTRY_PROGRAMS(readv)
ENTRY_PROGRAMS(recvfrom)
ENTRY_PROGRAMS(recvmsg)
ENTRY_PROGRAMS(recvmmsg)

/* One exit program per syscall: each exit only finds an entry its own entry program stored. */
#define EXIT_PROGRAM(name)                                    \
	SEC("tracepoint/syscalls/sys_exit_" #name)            \
	int exit_##name(struct trace_event_raw_sys_exit *ctx) \
	{                                                     \
		return on_exit(V_BTF, ctx->ret);              \
	}

EXIT_PROGRAM(write)
EXIT_PROGRAM(writev)
EXIT_PROGRAM(sendto)
EXIT_PROGRAM(sendmsg)
EXIT_PROGRAM(sendmmsg)
EXIT_PROGRAM(read)
EXIT_PROGRAM(readv)
EXIT_PROGRAM(recvfrom)
EXIT_PROGRAM(recvmsg)
EXIT_PROGRAM(recvmmsg)

/* Fires for every exiting thread, as that thread: its in-flight entry, if any, can never be
 * completed, and its send slot (sock_tp) is free for another thread. Not in the hook table: it
 * captures nothing, it only keeps the tables clean. */
SEC("tracepoint/sched/sched_process_exit")
int forget_exited_thread(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	bpf_map_delete_elem(&inflight_calls, &id);
	payload_forget(id);
	send_slot_forget((__u32)id);
	return 0;
}
