/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep-vfu: the SDP block as a PCI function, served to QEMU's
 * vfio-user-pci device over a UNIX socket (QEMU's
 * docs/interop/vfio-user.rst). A userspace program: this header is its
 * wire format and the split between the protocol (vfu.c) and the device
 * (dev.c).
 */
#ifndef _OCTEP_VFU_H
#define _OCTEP_VFU_H

#include <linux/types.h>

#include "../../ethernet/octep_ipsec/octep_sdp.h"
#include "../rules.h"

/* Every message, command or reply, starts with this. */
struct vfu_hdr {
	u16 id;
	u16 cmd;
	u32 size;	/* the whole message, header included */
	u32 flags;
	u32 error;	/* reply with VFU_F_ERROR: a positive errno */
};

#define VFU_F_TYPE		0xf
#define  VFU_F_CMD		0
#define  VFU_F_REPLY		1
#define VFU_F_NO_REPLY		0x10
#define VFU_F_ERROR		0x20

/* The protocol's command numbers, 1 to 13 in its order. */
enum vfu_cmd {
	VFU_VERSION = 1,
	VFU_DMA_MAP,
	VFU_DMA_UNMAP,
	VFU_DEVICE_GET_INFO,
	VFU_GET_REGION_INFO,
	VFU_GET_REGION_IO_FDS,
	VFU_GET_IRQ_INFO,
	VFU_SET_IRQS,
	VFU_REGION_READ,
	VFU_REGION_WRITE,
	VFU_DMA_READ,
	VFU_DMA_WRITE,
	VFU_DEVICE_RESET,
};

/* What one message may carry: the client's fds, its data. */
#define VFU_MAX_FDS		16
#define VFU_MAX_XFER		(1024 * 1024)

/* The function: the IDs octep_ipsec's pci_driver takes (a CN93 SDP PF). */
#define VFU_VENDOR		0x177d	/* Cavium */
#define VFU_DEVICE		0xb200
#define VFU_CFG_SIZE		256
#define VFU_BAR_OFF(n)		(0x10 + 4 * (n))
/* BAR0: the SDP registers, up to OCTEP_SDP_PORT_SPEED. */
#define VFU_BAR0_SIZE		(8U << 20)
/* BAR4: the MSI-X table and PBA, which QEMU emulates over it. */
#define VFU_BAR4_SIZE		(64U << 10)
#define VFU_MSIX_PBA		0x8000
#define VFU_MSIX_CAP		0x40
/* Advanced Features: function-level reset from config space. */
#define VFU_AF_CAP		0x50
/* CN9K: 16 vectors before the rings' (octeon_ep), then one a ring pair. */
#define VFU_RING_VEC0		16
#define VFU_NVEC_DEF		(VFU_RING_VEC0 + 8)
#define VFU_NVEC_MAX		(VFU_RING_VEC0 + 16)

/* VFIO's PCI region and IRQ indexes (linux/vfio.h). */
#define VFU_BAR0		0
#define VFU_BAR4		4
#define VFU_CONFIG		7
#define VFU_NUM_REGIONS		9
#define VFU_IRQ_MSIX		2
#define VFU_IRQ_ERR		3
#define VFU_IRQ_REQ		4
#define VFU_NUM_IRQS		5

/**
 * struct vfu_oq - what the block keeps of an output (receive) ring
 * @fill: the next descriptor the host credits, counted from the enable
 * @seen: the first credits since the enable are in the log
 */
struct vfu_oq {
	u32 fill;
	bool seen;
};

/**
 * struct vfu_cnt - a CNTS register and its INT_LEVELS
 * @r: the rules' state, octep_sim's (rules.c)
 * @timer_at: when the block's timer for it fires (vfu_now()), 0 for never
 */
struct vfu_cnt {
	struct osim_rules r;
	u64 timer_at;
};

/**
 * struct vfu_ring - a ring pair's counts and doorbells
 * @out: OUT_CNTS and OUT_INT_LEVELS
 * @in: IN_CNTS and IN_INT_LEVELS
 * @credits: receive buffers the host credited (OUT_SLIST_DBELL)
 * @pending: instructions the host rang (IN_INSTR_DBELL)
 */
struct vfu_ring {
	struct vfu_cnt out;
	struct vfu_cnt in;
	u32 credits;
	u32 pending;
};

/**
 * struct vfu_dev - the function's state
 * @cfg: config space
 * @regs: BAR0, register by register (8-byte aligned)
 * @nvec: MSI-X vectors offered
 * @irq_fd: each vector's eventfd from the client, or -1
 * @err_fd: the client's error eventfd (AER into the guest), or -1
 * @req_fd: the client's request eventfd (asks the guest to let go), or -1
 * @oq: the output rings' state
 * @ring: the ring pairs' counts and doorbells
 * @rules: the settings of the rules (octep_sim's defaults)
 * @dbell_excess: doorbell writes past a ring's size (ignored)
 * @dma_faults: DMAs to an address the client had not mapped
 * @gone: off the bus: BAR0 reads all ones, writes are lost, no DMA
 * @verbose: log each register access
 */
struct vfu_dev {
	u8 cfg[VFU_CFG_SIZE];
	u64 *regs;
	unsigned int nvec;
	int irq_fd[VFU_NVEC_MAX];
	int err_fd;
	int req_fd;
	struct vfu_oq oq[OCTEP_SDP_MAX_RINGS];
	struct vfu_ring ring[OCTEP_SDP_MAX_RINGS];
	struct osim_rules_cfg rules;
	u64 dbell_excess;
	unsigned long dma_faults;
	bool gone;
	bool verbose;
};

void vfu_dev_init(struct vfu_dev *d, unsigned int nvec);
void vfu_dev_reset(struct vfu_dev *d);
int vfu_cfg_read(struct vfu_dev *d, u64 off, void *buf, u32 count);
int vfu_cfg_write(struct vfu_dev *d, u64 off, const void *buf, u32 count);
int vfu_bar0_read(struct vfu_dev *d, u64 off, void *buf, u32 count);
int vfu_bar0_write(struct vfu_dev *d, u64 off, const void *buf, u32 count);
bool vfu_irq_raise(struct vfu_dev *d, unsigned int vec);
u64 vfu_now(void);
u64 vfu_dev_timer(const struct vfu_dev *d);
void vfu_dev_tick(struct vfu_dev *d, u64 now);
int vfu_dma_read(struct vfu_dev *d, u64 iova, void *buf, u32 len,
		 const char *what);
u64 vfu_dma_mapped(struct vfu_dev *d);
int vfu_dma_check(struct vfu_dev *d, u64 iova, u64 len, bool write,
		  const char *what);

#endif /* _OCTEP_VFU_H */
