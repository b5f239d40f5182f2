/* The kernel types the BPF programs read, and only the fields they read: written by hand instead
 * of dumping the build machine's /sys/kernel/btf/vmlinux, so the build needs no kernel BTF and
 * gives the same object on every builder. preserve_access_index makes every field access a CO-RE
 * relocation: libbpf finds the real offset (and checks the field exists) in the running kernel's
 * BTF at load, so these declarations need the right names and types, not the right layout.
 * Add a field here when a program starts reading it. */
#pragma once

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u16 umode_t;
typedef _Bool bool;
enum { false = 0, true = 1 };

/* UAPI constants of linux/bpf.h that the programs and libbpf's bpf_helpers.h use. */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};
enum { BPF_ANY = 0, BPF_NOEXIST = 1 };
enum { BPF_F_NO_PREALLOC = 1, BPF_F_MMAPABLE = 1024 };
enum { BPF_LOCAL_STORAGE_GET_F_CREATE = 1 };
enum { BPF_RB_NO_WAKEUP = 1, BPF_RB_FORCE_WAKEUP = 2 };
enum { BPF_RB_AVAIL_DATA = 0 };

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

struct trace_event_raw_sys_enter {
	struct trace_entry ent;
	long id;
	unsigned long args[6];
};

struct trace_event_raw_sys_exit {
	struct trace_entry ent;
	long id;
	long ret;
};

struct ns_common {
	unsigned int inum;
};

struct net {
	struct ns_common ns;
};

typedef struct {
	struct net *net;
} possible_net_t;

struct in6_addr {
	union {
		__u8 u6_addr8[16];
		__be16 u6_addr16[8];
		__be32 u6_addr32[4];
	} in6_u;
};

/* The kernel nests some of these in anonymous unions; CO-RE matches fields by name through them. */
struct sock_common {
	__be32 skc_daddr;
	__be32 skc_rcv_saddr;
	__be16 skc_dport;
	__u16 skc_num;
	unsigned short skc_family;
	possible_net_t skc_net;
	struct in6_addr skc_v6_daddr;
	struct in6_addr skc_v6_rcv_saddr;
	unsigned long skc_flags; /* where sk_flags lives on recent kernels (seen on 6.18: a define for it) */
};

struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
	unsigned long sk_flags; /* older kernels; SOCK_DONE: the peer's FIN arrived (tcp_fin) */
	int sk_sndbuf;
	int sk_wmem_queued;
};

/* The inet layer's copy of the local port (network order). A reset or a close of a socket whose
 * port was not bound explicitly gives the port back (__inet_put_port) and zeroes skc_num, but
 * inet_sport stays: a read of data queued before the reset still names its connection. */
struct inet_sock {
	struct sock sk;
	__be16 inet_sport;
};

struct tcp_sock {
	__u32 copied_seq;
	__u32 write_seq;
	__u32 rcv_nxt;
};

/* The kernel's msghdr as tcp_sendmsg_locked receives it: bytes still to send, and MSG_DONTWAIT. */
struct iov_iter {
	__u64 count;
};

struct msghdr {
	struct iov_iter msg_iter;
	unsigned int msg_flags;
};

struct socket {
	short type;
	struct sock *sk;
};

struct inode {
	umode_t i_mode;
};

struct file {
	struct inode *f_inode;
	void *private_data;
	unsigned int f_flags;
};

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

/* The path bpf_get_current_cgroup_id takes (the task's default-hierarchy cgroup, its kernfs id),
 * for programs that hold the task as a BTF pointer and read it with plain loads. */
struct kernfs_node {
	__u64 id;
};

struct cgroup {
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct task_struct {
	struct files_struct *files;
	struct css_set *cgroups;
	int pid;  /* the thread's id */
	int tgid; /* the process's id */
};

/* The registers a raw syscall tracepoint hands over: the user's syscall arguments at sys_enter,
 * the syscall number (orig_ax / syscallno) at both. */
#if defined(__TARGET_ARCH_arm64)
struct pt_regs {
	__u64 regs[31];
	__u64 orig_x0;
	__s32 syscallno;
};
#else
struct pt_regs {
	unsigned long r10;
	unsigned long ax; /* return value (uprobe returns) */
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned short cs;
};
#endif

#pragma clang attribute pop

/* User-space ABI (read with bpf_probe_read_user), not a kernel-internal type: fixed layout on
 * 64-bit architectures, so no relocation. */
struct user_msghdr {
	void *msg_name;
	int msg_namelen;
	void *msg_iov;
	__u64 msg_iovlen;
	void *msg_control;
	__u64 msg_controllen;
	unsigned int msg_flags;
};

struct mmsghdr {
	struct user_msghdr msg_hdr;
	unsigned int msg_len;
};
