/* SPDX-License-Identifier: GPL-2.0 */
/* Where a code address of the current process lies in its file: (inode, file offset), the
 * identity of a probed function that holds across processes and mount namespaces. Also the
 * caller's network namespace, for the RDMA records. */
#ifndef SKEWSCOPE_CODE_POSITION_BPF_H
#define SKEWSCOPE_CODE_POSITION_BPF_H

#include "kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* Only the network namespace of the caller: flavoured names so they never clash with the shared
 * kernel_types declarations (libbpf matches "task_struct___rdma" against task_struct). */
struct nsproxy___rdma {
	struct net *net_ns;
} __attribute__((preserve_access_index));
struct task_struct___rdma {
	struct nsproxy___rdma *nsproxy;
} __attribute__((preserve_access_index));
struct inode___rdma {
	unsigned long i_ino;
} __attribute__((preserve_access_index));
struct file___rdma {
	struct inode___rdma *f_inode;
} __attribute__((preserve_access_index));
struct vm_area_struct___rdma {
	unsigned long vm_start;
	unsigned long vm_pgoff;
	struct file___rdma *vm_file;
} __attribute__((preserve_access_index));

struct code_position_lookup {
	__u64 address;
	__u64 inode;
	__u64 offset;
};

static long code_position_of_vma(struct task_struct *task, struct vm_area_struct___rdma *vma,
				 struct code_position_lookup *l)
{
	struct file___rdma *file = BPF_CORE_READ(vma, vm_file);
	if (!file)
		return 0;
	l->inode = BPF_CORE_READ(file, f_inode, i_ino);
	l->offset = l->address - BPF_CORE_READ(vma, vm_start) + ((__u64)BPF_CORE_READ(vma, vm_pgoff) << 12);
	return 0;
}

/* False when the address is 0 or not in a file-backed mapping of the current process. */
static __always_inline bool code_file_position(__u64 address, __u64 *inode, __u64 *offset)
{
	struct code_position_lookup l = {.address = address};
	if (!address ||
	    bpf_find_vma((void *)bpf_get_current_task_btf(), address, code_position_of_vma, &l, 0) != 0 ||
	    !l.inode)
		return false;
	*inode = l.inode;
	*offset = l.offset;
	return true;
}

#endif
