/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OCTEON SDP block: what the host driver (octep_ipsec) and the device model
 * (octep_sim) agree on. Everything here is hardware: register offsets and
 * bits, the ring descriptors and headers the block reads and writes by DMA,
 * and the auxiliary device through which the model offers a block to the
 * driver. Nothing else crosses between the two modules.
 *
 * Offsets and bit numbers are those of the CN9K PF (octeon_ep's
 * octep_regs_cn9k_pf.h). Descriptor extensions marked "ours" are this
 * project's; the .rst says where the model differs from the real block.
 */
#ifndef _LINUX_OCTEP_SDP_H
#define _LINUX_OCTEP_SDP_H

#include <linux/auxiliary_bus.h>
#include <linux/bits.h>
#include <linux/if_ether.h>
#include <linux/types.h>

#define OCTEP_SDP_MAX_RINGS		16
#define OCTEP_SDP_RING_OFFSET		(1ULL << 17)

/* Input rings: host to block (transmit). */
#define OCTEP_SDP_R_IN_CONTROL_START	0x10000
#define OCTEP_SDP_R_IN_ENABLE_START	0x10010
#define OCTEP_SDP_R_IN_INSTR_BADDR_START 0x10020
#define OCTEP_SDP_R_IN_INSTR_RSIZE_START 0x10030
#define OCTEP_SDP_R_IN_INSTR_DBELL_START 0x10040
#define OCTEP_SDP_R_IN_CNTS_START	0x10050
#define OCTEP_SDP_R_IN_INT_LEVELS_START	0x10060

/* Output rings: block to host (receive). */
#define OCTEP_SDP_R_OUT_CNTS_START	0x10100
#define OCTEP_SDP_R_OUT_INT_LEVELS_START 0x10110
#define OCTEP_SDP_R_OUT_SLIST_BADDR_START 0x10120
#define OCTEP_SDP_R_OUT_SLIST_RSIZE_START 0x10130
#define OCTEP_SDP_R_OUT_SLIST_DBELL_START 0x10140
#define OCTEP_SDP_R_OUT_CONTROL_START	0x10150
#define OCTEP_SDP_R_OUT_ENABLE_START	0x10160

#define OCTEP_SDP_RING_REG(start, ring)	((start) + (ring) * OCTEP_SDP_RING_OFFSET)

#define OCTEP_SDP_R_IN_CONTROL(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_CONTROL_START, r)
#define OCTEP_SDP_R_IN_ENABLE(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_ENABLE_START, r)
#define OCTEP_SDP_R_IN_INSTR_BADDR(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_INSTR_BADDR_START, r)
#define OCTEP_SDP_R_IN_INSTR_RSIZE(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_INSTR_RSIZE_START, r)
#define OCTEP_SDP_R_IN_INSTR_DBELL(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_INSTR_DBELL_START, r)
#define OCTEP_SDP_R_IN_CNTS(r)		OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_CNTS_START, r)
#define OCTEP_SDP_R_IN_INT_LEVELS(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_IN_INT_LEVELS_START, r)

#define OCTEP_SDP_R_OUT_CNTS(r)		OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_CNTS_START, r)
#define OCTEP_SDP_R_OUT_INT_LEVELS(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_INT_LEVELS_START, r)
#define OCTEP_SDP_R_OUT_SLIST_BADDR(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_SLIST_BADDR_START, r)
#define OCTEP_SDP_R_OUT_SLIST_RSIZE(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_SLIST_RSIZE_START, r)
#define OCTEP_SDP_R_OUT_SLIST_DBELL(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_SLIST_DBELL_START, r)
#define OCTEP_SDP_R_OUT_CONTROL(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_CONTROL_START, r)
#define OCTEP_SDP_R_OUT_ENABLE(r)	OCTEP_SDP_RING_REG(OCTEP_SDP_R_OUT_ENABLE_START, r)

/*
 * R_OUT_CNTS / R_IN_CNTS: the count of packets written to the host (or of
 * instructions done) and not yet acknowledged, in bits 31:0. A host write of
 * N in those bits subtracts N. Writing RESEND (bit 59) asks the block to
 * raise the ring's interrupt again if the ring is still pending.
 */
#define OCTEP_SDP_CNTS_COUNT		GENMASK_ULL(31, 0)
#define OCTEP_SDP_CNTS_RESEND		BIT_ULL(59)

/*
 * R_OUT_INT_LEVELS / R_IN_INT_LEVELS: packet level in bits 31:0, the
 * block's time threshold in bits 61:32 (microseconds in the model; SDP clock
 * ticks on silicon), and the ring's interrupt enable in bit 62.
 */
#define OCTEP_SDP_INT_LEVELS_PKTS	GENMASK_ULL(31, 0)
#define OCTEP_SDP_INT_LEVELS_TIME	GENMASK_ULL(61, 32)
#define OCTEP_SDP_INT_LEVELS_ENA	BIT_ULL(62)

/* R_OUT_CONTROL: the size of each receive buffer, in bytes (ours: 15:0). */
#define OCTEP_SDP_OUT_CTL_BUFSIZE	GENMASK_ULL(15, 0)

/* R_IN_ENABLE / R_OUT_ENABLE */
#define OCTEP_SDP_RING_ENABLE		BIT_ULL(0)

/**
 * struct octep_sdp_oq_desc - an output ring (receive) descriptor
 * @buffer_ptr: DMA address of a host buffer of R_OUT_CONTROL's size
 * @info: unused by the block; the host may keep its own cookie here
 *
 * The host posts one descriptor per buffer and gives it to the block as one
 * credit in R_OUT_SLIST_DBELL. The block fills descriptors in ring order.
 */
struct octep_sdp_oq_desc {
	__le64 buffer_ptr;
	__le64 info;
};

/*
 * Each receive buffer begins with a response header, and the packet follows
 * it. The block writes the packet, then the extension word, then the length
 * word last; the host clears the length word before it posts the buffer. A
 * zero length under a nonzero R_OUT_CNTS is a buffer not yet written.
 */
#define OCTEP_SDP_RESP_HDR_LEN		16

/* ext word (ours) */
#define OCTEP_SDP_RX_CSUM		GENMASK_ULL(1, 0)
#define  OCTEP_SDP_RX_CSUM_NONE		0
#define  OCTEP_SDP_RX_CSUM_OK		1
#define  OCTEP_SDP_RX_CSUM_BAD		2
#define OCTEP_SDP_RX_IPSEC_STATUS	GENMASK_ULL(11, 8)
#define  OCTEP_SDP_IPSEC_NONE		0
#define  OCTEP_SDP_IPSEC_OK		1
#define  OCTEP_SDP_IPSEC_BAD_ICV	2
#define  OCTEP_SDP_IPSEC_REPLAY		3
#define  OCTEP_SDP_IPSEC_NO_ENTRY	4
#define  OCTEP_SDP_IPSEC_MALFORMED	5
#define OCTEP_SDP_RX_HASH		GENMASK_ULL(31, 16)
#define OCTEP_SDP_RX_FLOW_HANDLE	GENMASK_ULL(63, 32)

/**
 * struct octep_sdp_resp_hdr - the head of every receive buffer
 * @length: bytes of packet following the header; written last by the block
 * @ext: checksum result, flow hash, IPsec status and flow-table handle
 */
struct octep_sdp_resp_hdr {
	__be64 length;
	__le64 ext;
};

/* Input instruction flags (ours). */
#define OCTEP_SDP_TX_LEN		GENMASK_ULL(15, 0)
#define OCTEP_SDP_TX_CSUM		BIT_ULL(16)
#define OCTEP_SDP_TX_IPSEC_OP		GENMASK_ULL(19, 17)
#define  OCTEP_SDP_TX_IPSEC_NONE	0
#define  OCTEP_SDP_TX_IPSEC_ENCRYPT	1	/* crypto offload */
#define  OCTEP_SDP_TX_IPSEC_ENCAP	2	/* packet offload */
#define OCTEP_SDP_TX_FLOW_HANDLE	GENMASK_ULL(63, 32)

#define OCTEP_SDP_TX_CSUM_START		GENMASK_ULL(15, 0)
#define OCTEP_SDP_TX_CSUM_OFFSET	GENMASK_ULL(31, 16)

/**
 * struct octep_sdp_instr - an input ring (transmit) instruction, 64 bytes
 * @dptr: DMA address of the frame (one linear buffer)
 * @flags: length, checksum request, IPsec operation and flow handle
 * @csum: csum_start and csum_offset for a checksum request
 * @rsvd: zero
 *
 * The host writes instructions in ring order and rings R_IN_INSTR_DBELL with
 * how many it added. The block counts each one done in R_IN_CNTS.
 */
struct octep_sdp_instr {
	__le64 dptr;
	__le64 flags;
	__le64 csum;
	__le64 rsvd[5];
};

struct octep_sdp_dev;

/**
 * struct octep_sdp_ops - register access to one SDP block
 * @read64: read the 64-bit register at byte offset @off
 * @write64: write @val to the 64-bit register at byte offset @off; the write
 *	has the block's side effects before it returns
 */
struct octep_sdp_ops {
	u64 (*read64)(struct octep_sdp_dev *sdp, u32 off);
	void (*write64)(struct octep_sdp_dev *sdp, u32 off, u64 val);
};

/**
 * struct octep_sdp_dev - an SDP block offered on the auxiliary bus
 * @adev: the auxiliary device; its name is "octep_sim.sdp"
 * @ops: register accessors
 * @dma_dev: the device to map DMA buffers for
 * @num_rings: ring pairs the block has
 * @ring_irq: Linux IRQ of each ring pair (input and output share it)
 * @mbox_irq: Linux IRQ of the control mailbox
 * @mac_addr: the port's MAC address
 */
struct octep_sdp_dev {
	struct auxiliary_device adev;
	const struct octep_sdp_ops *ops;
	struct device *dma_dev;
	unsigned int num_rings;
	int ring_irq[OCTEP_SDP_MAX_RINGS];
	int mbox_irq;
	u8 mac_addr[ETH_ALEN];
};

#define OCTEP_SDP_AUX_NAME		"sdp"	/* "octep_sim.sdp" on the bus */

static inline struct octep_sdp_dev *to_octep_sdp_dev(struct auxiliary_device *adev)
{
	return container_of(adev, struct octep_sdp_dev, adev);
}

#endif /* _LINUX_OCTEP_SDP_H */
