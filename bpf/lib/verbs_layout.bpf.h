/* What the RDMA verbs programs read in user space: the probed function's registers, and the
 * verbs structures at rdma-core 44's offsets (infiniband/verbs.h, the stable public ABI of
 * libibverbs.so.1; checked against Debian 12's headers). */
#pragma once

/* struct pt_regs comes from kernel_types.bpf.h (CO-RE, only the registers read here). */
#if defined(__TARGET_ARCH_x86)
#define ARG1(c) ((c)->di)
#define ARG2(c) ((c)->si)
#define ARG3(c) ((c)->dx)
#define RET(c) ((c)->ax)
#elif defined(__TARGET_ARCH_arm64)
#define ARG1(c) ((c)->regs[0])
#define ARG2(c) ((c)->regs[1])
#define ARG3(c) ((c)->regs[2])
#define RET(c) ((c)->regs[0])
#endif

/* rdma-core 44 user-space layouts (infiniband/verbs.h; stable ABI of libibverbs.so.1). */
#define QP_CONTEXT 0
#define QP_NUM 52
#define CTX_OPS_POLL_CQ 96
#define CTX_OPS_POST_SEND 208
#define CTX_OPS_POST_RECV 216
#define WR_ID 0
#define WR_NEXT 8
#define WR_SG_LIST 16
#define WR_NUM_SGE 24
#define WR_OPCODE 28
#define SGE_LENGTH 8
#define SGE_SIZE 16
#define WC_SIZE 48
#define WC_STATUS 8
#define WC_OPCODE 12
#define WC_BYTE_LEN 20
#define WC_QP_NUM 28
#define ATTR_DEST_QPN 28
#define ATTR_DGID 56
#define ATTR_SGID_INDEX 76 /* ah_attr.grh.sgid_index */
#define ATTR_AH_PORT 86    /* ah_attr.port_num */
#define CTX_DEVICE 0
#define DEVICE_NAME 24      /* ibv_device.name[64] */
#define QP_STATE_MASK 1
#define QP_DEST_QPN_MASK (1 << 20)
#define QPS_RTR 2
#define WR_RDMA_WRITE 0
#define WR_RDMA_WRITE_WITH_IMM 1
#define WR_SEND 2
#define WR_SEND_WITH_IMM 3
#define WC_RECV_FLAG 128 /* IBV_WC_RECV and IBV_WC_RECV_RDMA_WITH_IMM */
#define WC_FLUSH_ERR 5

