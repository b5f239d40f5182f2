/* A verbs provider built by hand for the lab: no RDMA device, the real libibverbs on top.
 *
 * Queue pairs are UDP sockets in the calling process's network namespace; a QP's number is its
 * socket's port, and a GID is the IPv4-mapped address of the host (as RoCEv2 GIDs are), so an
 * RC connection set up the ordinary way (exchange QPN + GID out of band, INIT -> RTR -> RTS)
 * carries SEND, SEND_WITH_IMM, RDMA_WRITE and RDMA_WRITE_WITH_IMM between two lab hosts.
 * Incoming messages are taken from the socket when the application polls its receive CQ (the
 * provider has no thread of its own). Tied to rdma-core 44 (IBVERBS_PRIVATE_34): the private
 * structures below were read off that library, not from an installed header (Debian has none). */
#ifndef SKEWSCOPE_TESTS_RDMA_LAB_PROVIDER_H
#define SKEWSCOPE_TESTS_RDMA_LAB_PROVIDER_H

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lab device, to pass to the real ibv_open_device(). The device list of libibverbs comes
 * from sysfs and cannot hold it: this is the one step that differs from code for real hardware. */
struct ibv_device *rdma_lab_device(void);

#ifdef __cplusplus
}
#endif

#endif
