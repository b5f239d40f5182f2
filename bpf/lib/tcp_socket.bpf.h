/* fd -> TCP socket resolution and the pairing facts read from it (sequence numbers, 4-tuple). */
#pragma once

#define SKEWSCOPE_S_IFMT 00170000
#define SKEWSCOPE_S_IFSOCK 0140000
#define SKEWSCOPE_AF_INET 2
#define SKEWSCOPE_AF_INET6 10
#define SKEWSCOPE_SOCK_STREAM 1
#define SKEWSCOPE_IPPROTO_TCP 6

/* Kernel kfunc (Linux >= 6.2): re-types a pointer read from memory as a read-only BTF pointer, so
 * further field loads are single fault-safe loads rather than helper calls. Weak: on an older
 * kernel libbpf leaves it unresolved, which is harmless as long as no program that calls it is
 * loaded (the agent then loads the _core variants, see tcp_sock_of_fd_core_read). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* What both walks check once they hold the socket: a stream socket of an inet family, TCP. */
#define TCP_SOCK_CHECKS(sock_type, family, protocol)                          \
	((sock_type) == SKEWSCOPE_SOCK_STREAM &&                              \
	 ((family) == SKEWSCOPE_AF_INET || (family) == SKEWSCOPE_AF_INET6) && \
	 (protocol) == SKEWSCOPE_IPPROTO_TCP)

/* The TCP socket behind fd in the current task, or NULL. Ordered so that the common case,
 * a write/read on a file or pipe, is rejected after the inode mode check: a handful of loads.
 * Needs bpf_get_current_task_btf (5.11) and bpf_rdonly_cast (6.2). */
static __always_inline struct sock *tcp_sock_of_fd_btf(long fd)
{
	/* A BTF task pointer lets the verifier turn each field load into one fault-safe load instead
	 * of a bpf_probe_read_kernel call: this path runs on every read/write on the host. */
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	if (fd < 0 || fd >= fdt->max_fds)
		return NULL;
	struct file **fds = fdt->fd;
	struct file *file = NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return NULL;
	struct file *f = bpf_rdonly_cast(file, bpf_core_type_id_kernel(struct file));
	umode_t mode = f->f_inode->i_mode;
	if ((mode & SKEWSCOPE_S_IFMT) != SKEWSCOPE_S_IFSOCK)
		return NULL;
	struct socket *sock = bpf_rdonly_cast(f->private_data, bpf_core_type_id_kernel(struct socket));
	if (!sock)
		return NULL;
	struct sock *sk = sock->sk;
	if (!sk)
		return NULL;
	if (!TCP_SOCK_CHECKS(sock->type, sk->__sk_common.skc_family, sk->sk_protocol))
		return NULL;
	return sk;
}

/* The same walk with one bpf_probe_read_kernel per field (BPF_CORE_READ): slower, but it needs
 * nothing newer than the ring buffer the programs need anyway, so it loads on 5.8 and later. */
static __always_inline struct sock *tcp_sock_of_fd_core_read(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return NULL;
	umode_t mode = BPF_CORE_READ(file, f_inode, i_mode);
	if ((mode & SKEWSCOPE_S_IFMT) != SKEWSCOPE_S_IFSOCK)
		return NULL;
	struct socket *sock = BPF_CORE_READ(file, private_data);
	if (!sock)
		return NULL;
	struct sock *sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return NULL;
	if (!TCP_SOCK_CHECKS(BPF_CORE_READ(sock, type), BPF_CORE_READ(sk, __sk_common.skc_family),
			     BPF_CORE_READ(sk, sk_protocol)))
		return NULL;
	return sk;
}

/* Sequence number of the next byte this call moves: the first byte of a send is write_seq,
 * the first byte a receive copies out is copied_seq. Both ends number bytes the same way. */
static __always_inline __u32 tcp_first_byte_seq(struct sock *sk, int is_send)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	return is_send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
}

/* The same two reads through a BTF pointer: plain loads, no helper call (bpf_rdonly_cast). */
static __always_inline __u32 tcp_first_byte_seq_btf(struct sock *sk, int is_send)
{
	struct tcp_sock *tp = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
	return is_send ? tp->write_seq : tp->copied_seq;
}

/* Word stores: every record's address fields sit at a multiple of 16 (static_asserts in the
 * decoders), and byte-wise copies were ~30 single-byte stores per half. */
static __always_inline void ipv4_mapped(__u8 out[16], __be32 addr)
{
	__u32 *words = (__u32 *)out;
	words[0] = 0;
	words[1] = 0;
	words[2] = bpf_htonl(0xffff);
	words[3] = addr;
}

/* The local port, host order. skc_num is 0 once a reset (or a close) gave an unbound socket's port
 * back, while data queued before the reset can still be read: then inet_sport, which stays (one
 * helper call, only on that path). */
static __always_inline __u16 local_port_after_reset(struct sock *sk)
{
	return bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
}

/* The socket's identity as every record carries it (half and payload records name the same
 * fields): addresses IPv4-mapped, ports in host order. A macro, not a function, so that it fills
 * either record type in place. */
#define READ_SOCK_TUPLE(sk, e)                                                                              \
	do {                                                                                                \
		(e)->local_port = BPF_CORE_READ(sk, __sk_common.skc_num);                                   \
		if (!(e)->local_port)                                                                       \
			(e)->local_port = local_port_after_reset(sk);                                       \
		(e)->remote_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));                     \
		if (BPF_CORE_READ(sk, __sk_common.skc_family) == SKEWSCOPE_AF_INET) {                       \
			ipv4_mapped((e)->local_addr, BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr));         \
			ipv4_mapped((e)->remote_addr, BPF_CORE_READ(sk, __sk_common.skc_daddr));            \
		} else {                                                                                    \
			BPF_CORE_READ_INTO(&(e)->local_addr, sk,                                            \
					   __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);                    \
			BPF_CORE_READ_INTO(&(e)->remote_addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8); \
		}                                                                                           \
		(e)->netns_ino = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);                       \
	} while (0)

static __always_inline void read_tuple(struct sock *sk, struct skewscope_half_event *e)
{
	READ_SOCK_TUPLE(sk, e);
}

/* The tuple through a BTF pointer (a tp_btf argument, or re-typed by bpf_rdonly_cast): about
 * twelve plain loads instead of twelve helper calls. */
#define READ_SOCK_TUPLE_TYPED(sk, e)                                                              \
	do {                                                                                      \
		(e)->local_port = (sk)->__sk_common.skc_num;                                      \
		if (!(e)->local_port)                                                             \
			(e)->local_port = local_port_after_reset((struct sock *)(sk));            \
		(e)->remote_port = bpf_ntohs((sk)->__sk_common.skc_dport);                        \
		if ((sk)->__sk_common.skc_family == SKEWSCOPE_AF_INET) {                          \
			ipv4_mapped((e)->local_addr, (sk)->__sk_common.skc_rcv_saddr);            \
			ipv4_mapped((e)->remote_addr, (sk)->__sk_common.skc_daddr);               \
		} else {                                                                          \
			const __be32 *local = (sk)->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32; \
			const __be32 *remote = (sk)->__sk_common.skc_v6_daddr.in6_u.u6_addr32;    \
			for (int i = 0; i < 4; i++) {                                             \
				((__u32 *)(e)->local_addr)[i] = local[i];                         \
				((__u32 *)(e)->remote_addr)[i] = remote[i];                       \
			}                                                                         \
		}                                                                                 \
		(e)->netns_ino = (sk)->__sk_common.skc_net.net->ns.inum;                          \
	} while (0)

static __always_inline void read_tuple_typed(struct sock *sk, struct skewscope_half_event *e)
{
	READ_SOCK_TUPLE_TYPED(sk, e);
}

static __always_inline void read_tuple_btf(struct sock *sock, struct skewscope_half_event *e)
{
	struct sock *sk = bpf_rdonly_cast(sock, bpf_core_type_id_kernel(struct sock));
	READ_SOCK_TUPLE_TYPED(sk, e);
}
