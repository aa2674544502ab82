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
#ifndef _OCTEP_SDP_H
#define _OCTEP_SDP_H

#include <linux/auxiliary_bus.h>
#include <linux/bits.h>
#include <linux/if_ether.h>
#include <linux/stddef.h>
#include <linux/types.h>

#define OCTEP_SDP_MAX_RINGS		16
#define OCTEP_SDP_RING_OFFSET		BIT_ULL(17)

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

/*
 * Receive side scaling (ours, like the mailbox): a block of registers at
 * OCTEP_SDP_RSS_BASE that chooses the output ring of each frame from the
 * wire. With RSS_CTL_ENA set, the ring is INDIR[hash % 128], where hash is
 * the Toeplitz hash under RSS_KEY of the outer headers' source address,
 * destination address, source port and destination port (network order,
 * in that order) for TCP and UDP over IPv4 and IPv6; of the addresses and
 * the SPI for ESP, so that the tunnels between two gateways spread; of the
 * addresses alone for other IP and for IP fragments; 0 for frames that are
 * not IP.
 * Its low 16 bits are the ext word's OCTEP_SDP_RX_HASH. A frame whose
 * entry names a ring that is not enabled is dropped and counted. With
 * RSS_CTL_ENA clear the block spreads flows by a hash of its own over the
 * leading run of enabled output rings.
 *
 * RSS_KEY(i), i < 5: key bytes 8i to 8i + 7 of the 40, byte 8i in bits
 * 7:0 (the key as a little-endian u64 array). RSS_INDIR(i), i < 16: table
 * entries 8i to 8i + 7, one byte each, entry 8i in bits 7:0. Reads return
 * what was written. The block reads the key and table per frame: a change
 * while RSS is enabled may steer the frames in flight by a mix of old and
 * new, never elsewhere than to a ring one of them names.
 */
#define OCTEP_SDP_RSS_BASE		0x500000
#define OCTEP_SDP_RSS_CTL		(OCTEP_SDP_RSS_BASE + 0x00)
#define OCTEP_SDP_RSS_KEY(i)		(OCTEP_SDP_RSS_BASE + 0x100 + (i) * 8)
#define OCTEP_SDP_RSS_INDIR(i)		(OCTEP_SDP_RSS_BASE + 0x200 + (i) * 8)
#define OCTEP_SDP_RSS_END		(OCTEP_SDP_RSS_BASE + 0x1000)

#define OCTEP_SDP_RSS_CTL_ENA		BIT_ULL(0)
#define OCTEP_SDP_RSS_KEY_SIZE		40	/* bytes */
#define OCTEP_SDP_RSS_KEY_REGS		(OCTEP_SDP_RSS_KEY_SIZE / 8)
#define OCTEP_SDP_RSS_INDIR_SIZE	128	/* entries */
#define OCTEP_SDP_RSS_INDIR_REGS	(OCTEP_SDP_RSS_INDIR_SIZE / 8)

/*
 * The port (ours, like RSS): PORT_SPEED reads the rate the port carries
 * towards the wire, in Mbit/s: its full rate, OCTEP_SDP_PORT_MBPS, or the
 * lower rate the block's side set. Read-only: a write is ignored.
 */
#define OCTEP_SDP_PORT_SPEED		0x600000
#define OCTEP_SDP_PORT_MBPS		10000

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
#define  OCTEP_SDP_IPSEC_POL_BLOCK	6	/* an inbound block policy */
#define  OCTEP_SDP_IPSEC_POL_MISMATCH	7	/* see OCTEP_SDP_MBOX_POLICY_ADD */
#define  OCTEP_SDP_IPSEC_EXPIRED	8	/* the entry's hard limit reached */
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
#define  OCTEP_SDP_TX_IPSEC_CLASSIFY	3	/* the policy table decides */
/*
 * ENCRYPT and ENCAP name their entry in OCTEP_SDP_TX_FLOW_HANDLE: the block
 * applies that entry or drops the frame (OCTEP_SDP_IPSEC_TX_DROP); it never
 * sends such a frame as it came, so what the host decided to protect is
 * protected even where the block's own tables would not have matched it.
 * An ENCAP frame whose best match in the policy table is an outbound BLOCK
 * policy is dropped too (OCTEP_SDP_IPSEC_TX_BLOCK): the table orders by
 * priority, where the host's choice may not have.
 */
/*
 * TSO: the frame is one TCP frame over IPv4 or IPv6 (no VLAN tag, no IPv6
 * extension header) to be cut into segments of OCTEP_SDP_TX_MSS payload
 * bytes. It needs OCTEP_SDP_TX_CSUM with CSUM_START at the TCP header and
 * CSUM_OFFSET 16. The block writes each segment's headers as
 * tcp_gso_segment() would (sequence number, IPv4 total length, ID + i,
 * header checksum, IPv6 payload length; CWR on the first only, FIN and
 * PSH on the last only) and its TCP checksum, whatever the frame's check
 * field held. With OCTEP_SDP_TX_IPSEC_ENCAP each segment is encapsulated.
 * R_IN_CNTS counts the instruction once.
 *
 * With ENCRYPT (OCTEP_SDP_FEAT_ESP_GSO; refused without): the frame is
 * what the stack hands a device with NETIF_F_GSO_ESP. An outer IPv4 or
 * IPv6 header (no extension header) whose protocol is ESP; the ESP header
 * (SPI, the low half of the first segment's sequence number); 8 bytes for
 * the IV; then the TCP header (transport mode) or an inner IPv4 or IPv6
 * header and the TCP header (tunnel mode, told apart by CSUM_START); no
 * trailer, no room for the ICV. Each segment leaves as an ESP packet of
 * its own: the inner headers fixed as above, the outer length (and in
 * tunnel mode the outer IPv4 ID + i) and checksum too, sequence number
 * OCTEP_SDP_TX_ESP_SEQ + i (the ESN high half carried into the segments
 * that wrap the low half), its IV, its trailer and ICV. The entry counts
 * each segment as a packet; a low half that disagrees with the ESP
 * header's, or a non-ESN entry run past 2^32 - 1, drops the frame.
 */
#define OCTEP_SDP_TX_TSO		BIT_ULL(20)
/*
 * Gather: nonzero, DPTR is the bus address of that many struct
 * octep_sdp_sg entries whose buffers, in order, make the frame of
 * OCTEP_SDP_TX_LEN bytes; zero, DPTR is the frame.
 */
#define OCTEP_SDP_TX_GATHER		GENMASK_ULL(25, 21)
#define OCTEP_SDP_TX_GATHER_MAX		31	/* entries */
#define OCTEP_SDP_TX_FLOW_HANDLE	GENMASK_ULL(63, 32)

/* csum word */
#define OCTEP_SDP_TX_CSUM_START		GENMASK_ULL(15, 0)
#define OCTEP_SDP_TX_CSUM_OFFSET	GENMASK_ULL(31, 16)
#define OCTEP_SDP_TX_MSS		GENMASK_ULL(47, 32)	/* TSO */

/* seq word: ENCRYPT with TSO, the first segment's 64-bit sequence number. */
#define OCTEP_SDP_TX_ESP_SEQ		GENMASK_ULL(63, 0)

/**
 * struct octep_sdp_sg - one gather entry, 16 bytes
 * @addr: bus address of a piece of the frame
 * @len: its length in bits 15:0, nonzero; bits 63:16 zero
 */
struct octep_sdp_sg {
	__le64 addr;
	__le64 len;
};

#define OCTEP_SDP_SG_LEN		GENMASK_ULL(15, 0)

/**
 * struct octep_sdp_instr - an input ring (transmit) instruction, 64 bytes
 * @dptr: DMA address of the frame (one linear buffer), or of its gather
 *	list (OCTEP_SDP_TX_GATHER)
 * @flags: length, checksum request, TSO, gather count, IPsec operation and
 *	flow handle
 * @csum: csum_start and csum_offset for a checksum request, the MSS for TSO
 * @seq: ENCRYPT with TSO: OCTEP_SDP_TX_ESP_SEQ; zero otherwise
 * @rsvd: zero
 *
 * The host writes instructions in ring order and rings R_IN_INSTR_DBELL with
 * how many it added. The block counts each one done in R_IN_CNTS.
 */
struct octep_sdp_instr {
	__le64 dptr;
	__le64 flags;
	__le64 csum;
	__le64 seq;
	__le64 rsvd[4];
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
 * @rss: the block has the RSS registers at OCTEP_SDP_RSS_BASE (octep_sim's
 *	layout; a CN9K PF's firmware takes RSS over its own mailbox)
 * @port: the block has OCTEP_SDP_PORT_SPEED (octep_sim's; a CN9K PF's
 *	firmware reports the link over its mailbox)
 */
struct octep_sdp_dev {
	struct auxiliary_device adev;
	const struct octep_sdp_ops *ops;
	struct device *dma_dev;
	unsigned int num_rings;
	int ring_irq[OCTEP_SDP_MAX_RINGS];
	int mbox_irq;
	u8 mac_addr[ETH_ALEN];
	bool rss;
	bool port;
};

#define OCTEP_SDP_AUX_NAME		"sdp"	/* "octep_sim.sdp" on the bus */

static inline struct octep_sdp_dev *to_octep_sdp_dev(struct auxiliary_device *adev)
{
	return container_of(adev, struct octep_sdp_dev, adev);
}

/*
 * Control mailbox (ours, shaped after octeon_ep's ctrl_mbox): a window of
 * 64-bit registers reached through the same read64/write64 as the rings.
 * Two queues of 64-bit words live in it, host-to-coprocessor (H2C) and
 * coprocessor-to-host (C2H), each with a producer and a consumer index.
 * Indices are free-running word counts (u32, wrapping); a queue holds
 * PROD - CONS words and word i lives at slot i % SIZE. The writer of a
 * queue advances PROD after the words are in place, the reader advances
 * CONS after it has copied them out.
 *
 * The host writes a request into H2C and then H2C_PROD; that write is the
 * doorbell. The coprocessor answers in C2H (a response carries the id of
 * its request) and raises sdp->mbox_irq when it advances C2H_PROD, if
 * MBOX_INT_ENA is set. Requests and responses are matched by id, so a
 * response may come late (after the host gave up) and is then dropped.
 */
#define OCTEP_SDP_MBOX_BASE		0x400000
#define OCTEP_SDP_MBOX_SIG		(OCTEP_SDP_MBOX_BASE + 0x00)	/* RO */
#define OCTEP_SDP_MBOX_VERSION		(OCTEP_SDP_MBOX_BASE + 0x08)	/* RO */
#define OCTEP_SDP_MBOX_INT		(OCTEP_SDP_MBOX_BASE + 0x10)
#define OCTEP_SDP_MBOX_H2C_PROD		(OCTEP_SDP_MBOX_BASE + 0x20)	/* host */
#define OCTEP_SDP_MBOX_H2C_CONS		(OCTEP_SDP_MBOX_BASE + 0x28)	/* copro */
#define OCTEP_SDP_MBOX_H2C_SIZE		(OCTEP_SDP_MBOX_BASE + 0x30)	/* RO */
#define OCTEP_SDP_MBOX_C2H_PROD		(OCTEP_SDP_MBOX_BASE + 0x40)	/* copro */
#define OCTEP_SDP_MBOX_C2H_CONS		(OCTEP_SDP_MBOX_BASE + 0x48)	/* host */
#define OCTEP_SDP_MBOX_C2H_SIZE		(OCTEP_SDP_MBOX_BASE + 0x50)	/* RO */
#define OCTEP_SDP_MBOX_H2C_Q		(OCTEP_SDP_MBOX_BASE + 0x1000)
#define OCTEP_SDP_MBOX_C2H_Q		(OCTEP_SDP_MBOX_BASE + 0x3000)
#define OCTEP_SDP_MBOX_END		(OCTEP_SDP_MBOX_BASE + 0x5000)
#define OCTEP_SDP_MBOX_Q_WORDS		512	/* SIZE of each queue, words */

#define OCTEP_SDP_MBOX_SIG_VAL		0x314f424d5044534fULL	/* "OSDPMBO1" */
#define OCTEP_SDP_MBOX_VERSION_VAL	0x00010000	/* 1.0 */

/* MBOX_INT: bit 0 enables the C2H interrupt. */
#define OCTEP_SDP_MBOX_INT_ENA		BIT_ULL(0)

/* Message header word: body size in words, flags, command, id. */
#define OCTEP_SDP_MBOX_HDR_SIZE		GENMASK_ULL(15, 0)
#define OCTEP_SDP_MBOX_HDR_FLAGS	GENMASK_ULL(23, 16)
#define  OCTEP_SDP_MBOX_F_REQUEST	BIT(0)
#define  OCTEP_SDP_MBOX_F_RESPONSE	BIT(1)
#define  OCTEP_SDP_MBOX_F_NOTIFY	BIT(2)
#define OCTEP_SDP_MBOX_HDR_CMD		GENMASK_ULL(31, 24)
#define OCTEP_SDP_MBOX_HDR_ID		GENMASK_ULL(63, 32)
#define OCTEP_SDP_MBOX_MAX_BODY		32	/* words */

enum octep_sdp_mbox_cmd {
	OCTEP_SDP_MBOX_GET_INFO = 1,
	OCTEP_SDP_MBOX_FLOW_ADD = 2,
	OCTEP_SDP_MBOX_FLOW_DEL = 3,
	OCTEP_SDP_MBOX_FLOW_STATS = 4,
	OCTEP_SDP_MBOX_FLOW_UPDATE = 5,
	OCTEP_SDP_MBOX_FLOW_DEL_MANY = 6,	/* OCTEP_SDP_FEAT_DEL_MANY */
	OCTEP_SDP_MBOX_FLOW_LIST = 7,		/* OCTEP_SDP_FEAT_LIST */
	OCTEP_SDP_MBOX_POLICY_ADD = 8,		/* OCTEP_SDP_FEAT_POLICY */
	OCTEP_SDP_MBOX_FLOW_STATS_MANY = 9,	/* OCTEP_SDP_FEAT_STATS_MANY */
	OCTEP_SDP_MBOX_FLOW_ENCAP = 10,		/* OCTEP_SDP_FEAT_NATT */
	OCTEP_SDP_MBOX_FLOW_L2 = 11,		/* OCTEP_SDP_FEAT_L2 */
};

/*
 * FLOW_DEL_MANY: word 0 of the request is the count n (1 to
 * OCTEP_SDP_MBOX_DEL_MANY_MAX), then the n handles, two to a word (the
 * first in the low half). The response body after the status is one word:
 * bit i set when handle i named no entry (the others are deleted). One
 * request for a batch: the block waits for its datapath to let go of the
 * entries once per batch, not once per entry.
 *
 * FLOW_LIST: request word 0 is a cursor, 0 to start. The response body
 * after the status: word 0 the cursor to pass next, with
 * OCTEP_SDP_MBOX_LIST_DONE set when there is nothing after; word 1 the
 * count n (at most OCTEP_SDP_MBOX_LIST_MAX); then n handles of installed
 * entries, two to a word. Lets the host find entries it no longer knows
 * of (a delete or an add whose response it did not get) and free them.
 */
#define OCTEP_SDP_MBOX_DEL_MANY_MAX	((OCTEP_SDP_MBOX_MAX_BODY - 1) * 2)
#define OCTEP_SDP_MBOX_LIST_MAX		((OCTEP_SDP_MBOX_MAX_BODY - 3) * 2)
#define OCTEP_SDP_MBOX_LIST_DONE	BIT_ULL(32)

/*
 * Every response body starts with a status word: 0 or a positive errno
 * (EINVAL: the request is malformed or asks for what the table cannot do;
 * ENOSPC: the direction's table is full; ENOENT: no such handle; EEXIST:
 * an inbound entry with the same SPI, daddr and family is installed).
 */

/**
 * struct octep_sdp_mbox_info - GET_INFO response body after the status
 * @version: OCTEP_SDP_MBOX_VERSION_VAL
 * @features: OCTEP_SDP_FEAT_* bits
 * @cap_in: inbound entries the table holds
 * @cap_out: outbound entries the table holds
 * @used_in: inbound entries installed
 * @used_out: outbound entries installed
 */
struct octep_sdp_mbox_info {
	__le32 version;
	__le32 features;
	__le32 cap_in;
	__le32 cap_out;
	__le32 used_in;
	__le32 used_out;
};

#define OCTEP_SDP_FEAT_CRYPTO		BIT(0)
#define OCTEP_SDP_FEAT_PACKET		BIT(1)
#define OCTEP_SDP_FEAT_ESN		BIT(2)
#define OCTEP_SDP_FEAT_TUNNEL		BIT(3)
#define OCTEP_SDP_FEAT_IPV6		BIT(4)
#define OCTEP_SDP_FEAT_DEL_MANY		BIT(5)	/* FLOW_DEL_MANY */
#define OCTEP_SDP_FEAT_LIST		BIT(6)	/* FLOW_LIST */
#define OCTEP_SDP_FEAT_POLICY		BIT(7)	/* POLICY_ADD, IPSEC_CNT */
#define OCTEP_SDP_FEAT_STATS_MANY	BIT(8)	/* FLOW_STATS_MANY */
#define OCTEP_SDP_FEAT_NATT		BIT(9)	/* encap, FLOW_ENCAP */
#define OCTEP_SDP_FEAT_L2		BIT(10)	/* l2, FLOW_L2 */
#define OCTEP_SDP_FEAT_ESP_GSO		BIT(11)	/* TSO with ENCRYPT */

#define OCTEP_SDP_FLOW_DIR_IN		1
#define OCTEP_SDP_FLOW_DIR_OUT		2
#define OCTEP_SDP_FLOW_MODE_TRANSPORT	0
#define OCTEP_SDP_FLOW_MODE_TUNNEL	1
#define OCTEP_SDP_FLOW_TYPE_CRYPTO	1	/* host builds ESP; block ciphers */
#define OCTEP_SDP_FLOW_TYPE_PACKET	2	/* block builds and strips ESP */
#define OCTEP_SDP_FLOW_ALG_RFC4106	1	/* AES-GCM, 8-byte IV, 4-byte salt */
#define OCTEP_SDP_FLOW_F_ESN		BIT(0)
#define OCTEP_SDP_FLOW_ENCAP_NONE	0
#define OCTEP_SDP_FLOW_ENCAP_ESPINUDP	1	/* RFC 3948, IPv4 outer only */
#define OCTEP_SDP_FLOW_MAX_REPLAY	1024	/* packets */
#define OCTEP_SDP_FLOW_L2_NONE		0	/* to the link's far end */
#define OCTEP_SDP_FLOW_L2_SET		1	/* the host's MACs */
#define OCTEP_SDP_FLOW_L2_HOLD		2	/* no next hop yet: drop */

/**
 * struct octep_sdp_mbox_flow_l2 - how an outbound tunnel entry's frames
 *	are addressed on the link (OCTEP_SDP_FEAT_L2)
 * @state: OCTEP_SDP_FLOW_L2_*
 * @rsvd: zero
 * @h_source: SET: the source MAC
 * @h_dest: SET: the destination MAC, the next hop's
 * @rsvd2: zero
 *
 * Packet offload, tunnel mode, outbound: the block builds the outer frame
 * and the host's Ethernet header, if any, is not its (the stack leaves L2
 * of forwarded packets to the device). NONE: the block sends to the link's far end with the source
 * the host's frame had, as a block without OCTEP_SDP_FEAT_L2 does. SET:
 * @h_source and @h_dest. HOLD: the host has no next hop to give (its
 * neighbour is unresolved or failed): the block drops the entry's frames
 * (OCTEP_SDP_IPSEC_TX_DROP), never sends them to a guessed address.
 * Other entries take NONE only.
 */
struct octep_sdp_mbox_flow_l2 {
	u8 state;
	u8 rsvd;
	u8 h_source[ETH_ALEN];
	u8 h_dest[ETH_ALEN];
	u8 rsvd2[2];
};

/**
 * struct octep_sdp_mbox_flow - FLOW_ADD request body
 * @dir: OCTEP_SDP_FLOW_DIR_*
 * @family: 4 or 6 (outer addresses)
 * @mode: OCTEP_SDP_FLOW_MODE_*
 * @type: OCTEP_SDP_FLOW_TYPE_*
 * @alg: OCTEP_SDP_FLOW_ALG_*
 * @key_len: cipher key bytes, 16 or 32
 * @icv_len: ICV bytes, 16
 * @flags: OCTEP_SDP_FLOW_F_*
 * @spi: SPI, network order
 * @replay_window: inbound anti-replay window in packets, 0 for none
 * @salt: the 4-byte rfc4106 nonce salt
 * @seq_hi: outbound: high half of the last sequence number sent;
 *	inbound: high half of the highest sequence number seen. The ESP
 *	header carries only the low half: the block infers the high half in
 *	both directions (RFC 4303 appendix A) from the highest it has seen
 * @seq_lo: the low half of the same
 * @inner_family: packet offload tunnel: 4 or 6, the family of what the
 *	outbound entry carries (0: either)
 * @saddr: outer source address (IPv4 in the first 4 bytes)
 * @daddr: outer destination address
 * @key: cipher key, @key_len bytes used
 * @reqid: outbound packet offload: the reqid a policy's template names
 *	the entry by (OCTEP_SDP_MBOX_POLICY_ADD)
 * @rsvd: zero
 * @hard_packets: packet offload: the entry carries this many packets, then
 *	drops what comes after as a hard-expired xfrm state would (outbound
 *	OCTEP_SDP_IPSEC_TX_DROP, inbound status OCTEP_SDP_IPSEC_EXPIRED, checked
 *	after the replay window and before decryption); 0 for no limit
 * @hard_bytes: the same in bytes as FLOW_STATS counts them (the plain
 *	text ESP carries): the packet that finds the count at or past it is
 *	dropped; 0 for no limit
 * @encap: OCTEP_SDP_FLOW_ENCAP_* (OCTEP_SDP_FEAT_NATT; a host without it
 *	sends the request up to here, the block reads the rest as zero)
 * @rsvd2: zero
 * @encap_sport: ESPINUDP: the UDP source port, network order
 * @encap_dport: ESPINUDP: the UDP destination port, network order
 * @l2: OCTEP_SDP_FEAT_L2: the entry's link-layer addressing (a host
 *	without it sends the request up to here, read as NONE)
 *
 * ESPINUDP (RFC 3948), outer IPv4: outbound, packet offload, the block
 * puts a UDP header of the entry's ports (checksum 0) between the outer
 * IP header and ESP; crypto offload, the host built it and the block
 * finds ESP after it. Inbound, a UDP datagram to an entry's
 * @encap_dport whose payload is longer than 8 bytes and starts with a
 * nonzero word is ESP for that entry's SPI: packet offload strips the
 * UDP header with ESP; crypto offload decrypts in place and zeroes the
 * UDP checksum. A 1-byte 0xff payload (NAT keepalive) or a zero first
 * word (IKE's non-ESP marker) goes up untouched; a UDP length that
 * disagrees with the IP one is OCTEP_SDP_IPSEC_MALFORMED.
 *
 * The FLOW_ADD response body is the status word then the handle word (low
 * 32 bits): the handle names the entry in the instruction's
 * OCTEP_SDP_TX_FLOW_HANDLE, in the response header's
 * OCTEP_SDP_RX_FLOW_HANDLE and in FLOW_DEL/FLOW_STATS/FLOW_UPDATE.
 */
struct octep_sdp_mbox_flow {
	u8 dir;
	u8 family;
	u8 mode;
	u8 type;
	u8 alg;
	u8 key_len;
	u8 icv_len;
	u8 flags;
	__be32 spi;
	__le32 replay_window;
	u8 salt[4];
	__le32 seq_hi;
	__le32 seq_lo;
	__le32 inner_family;
	u8 saddr[16];
	u8 daddr[16];
	u8 key[32];
	__le32 reqid;
	__le32 rsvd;
	__le64 hard_packets;
	__le64 hard_bytes;
	u8 encap;
	u8 rsvd2[3];
	__be16 encap_sport;
	__be16 encap_dport;
	struct octep_sdp_mbox_flow_l2 l2;
};

/* The FLOW_ADD body of a host that does not know OCTEP_SDP_FEAT_NATT. */
#define OCTEP_SDP_MBOX_FLOW_V1_LEN	offsetof(struct octep_sdp_mbox_flow, encap)
/* ... and of one that knows NAT-T but not OCTEP_SDP_FEAT_L2. */
#define OCTEP_SDP_MBOX_FLOW_V2_LEN	offsetof(struct octep_sdp_mbox_flow, l2)

/*
 * FLOW_DEL and FLOW_STATS request bodies: one word, the handle. FLOW_UPDATE:
 * the handle word, then a word with the host's ESN high half in 31:0
 * (advance_esn): an inbound entry whose window is behind moves up to it.
 * FLOW_ENCAP (OCTEP_SDP_FEAT_NATT): the handle word, then a word with an
 * ESPINUDP entry's new source port in 15:0 and destination port in 31:16
 * (network order, as in FLOW_ADD): a NAT's mapping moved. EINVAL for an
 * entry without encap.
 * FLOW_L2 (OCTEP_SDP_FEAT_L2): the handle word, then a struct
 * octep_sdp_mbox_flow_l2 (two words): the entry's next hop or source MAC
 * changed, or it now has or lost one. EINVAL for an entry FLOW_ADD could
 * not have given other than NONE.
 */
#define OCTEP_SDP_ENCAP_SPORT		GENMASK_ULL(15, 0)
#define OCTEP_SDP_ENCAP_DPORT		GENMASK_ULL(31, 16)

/**
 * struct octep_sdp_mbox_flow_stats - FLOW_STATS response body after status
 * @packets: packets the entry carried
 * @bytes: bytes the entry carried (the ESP packets, outer IP header on)
 * @seq: outbound: the last sequence number sent; inbound: the highest seen
 *	(64 bits with ESN)
 * @bad_icv: inbound packets whose ICV did not verify
 * @replay: inbound packets refused by the replay window
 */
struct octep_sdp_mbox_flow_stats {
	__le64 packets;
	__le64 bytes;
	__le64 seq;
	__le64 bad_icv;
	__le64 replay;
};

/*
 * FLOW_STATS_MANY: the counters of the packet-offload entries whose
 * packets, bytes or sequence number changed since the block last reported
 * them here, so that a host polling many mostly idle entries sends one
 * request a pass, not one per entry. Request word 0 is a cursor, 0 to
 * start; word 1 (may be left out: 0) holds flags: OCTEP_SDP_STATS_ALL
 * reports every packet-offload entry, changed or not. The response body
 * after the status: word 0 the cursor to pass next, with
 * OCTEP_SDP_MBOX_LIST_DONE set when nothing is left; word 1 the count n (at
 * most OCTEP_SDP_MBOX_STATS_MANY_MAX); then n struct
 * octep_sdp_mbox_stats_rec in handle order. An entry is reported once
 * per change: a response the host does not get loses those changes until
 * the entry counts again, so a host that missed one passes with
 * OCTEP_SDP_STATS_ALL next. Crypto-offload entries are never reported
 * (the host counts their packets itself).
 */
#define OCTEP_SDP_STATS_ALL		BIT_ULL(0)
#define OCTEP_SDP_MBOX_STATS_MANY_MAX	((OCTEP_SDP_MBOX_MAX_BODY - 3) / 4)

/**
 * struct octep_sdp_mbox_stats_rec - one entry of a FLOW_STATS_MANY response
 * @handle: the entry's handle (low 32 bits)
 * @packets: as struct octep_sdp_mbox_flow_stats
 * @bytes: as struct octep_sdp_mbox_flow_stats
 * @seq: as struct octep_sdp_mbox_flow_stats
 */
struct octep_sdp_mbox_stats_rec {
	__le64 handle;
	__le64 packets;
	__le64 bytes;
	__le64 seq;
};

/*
 * POLICY_ADD: an entry of the block's policy table, for packet offload.
 * The block classifies each packet the host sends with
 * OCTEP_SDP_TX_IPSEC_CLASSIFY, and each packet it receives, by the
 * outbound or inbound policies: of those whose selector matches, the one
 * of the lowest @priority (then the oldest) decides. Selectors are grouped
 * by their masks, and each group is a hash of the masked fields, so a
 * lookup costs one probe per distinct mask, not one per policy.
 *
 * Outbound: BLOCK drops the packet; ALLOW sends it as it is; IPSEC finds
 * the newest packet-offload outbound entry whose outer destination is the
 * template's (tunnel) or the packet's (transport), whose reqid is the
 * template's (unless that is 0), and encapsulates; without one, the packet
 * is dropped. A packet that is ESP already matches only a selector of
 * protocol ESP.
 *
 * Inbound: a clear packet under BLOCK is dropped with status
 * OCTEP_SDP_IPSEC_POL_BLOCK, under IPSEC with OCTEP_SDP_IPSEC_POL_MISMATCH
 * (it should have come encrypted); ESP goes to the SA lookup, and what a
 * packet-offload entry decapsulated must fall under an IPSEC policy whose
 * template the entry fits (mode, reqid unless the template's is 0, the SPI
 * if the template names one, and a tunnel's outer source and destination
 * unless the template leaves them unspecified), else POL_MISMATCH.
 *
 * The response body after the status is the handle word: bit 30 set,
 * bit 31 for outbound. FLOW_DEL, FLOW_DEL_MANY and FLOW_LIST take and give
 * policy handles too.
 */
#define OCTEP_SDP_POL_H			BIT(30)
#define OCTEP_SDP_POL_ALLOW		0
#define OCTEP_SDP_POL_BLOCK		1
#define OCTEP_SDP_POL_IPSEC		2

/**
 * struct octep_sdp_mbox_policy - POLICY_ADD request body
 * @dir: OCTEP_SDP_FLOW_DIR_*
 * @action: OCTEP_SDP_POL_*
 * @family: the selector's family, 4 or 6, 0 for either
 * @proto: the selector's IP protocol, 0 for any
 * @plen_s: source prefix length
 * @plen_d: destination prefix length
 * @mode: IPSEC: the template's OCTEP_SDP_FLOW_MODE_*
 * @tfamily: IPSEC, tunnel: the template's outer family, 4 or 6
 * @sport: source port (TCP, UDP), network order, under @sport_mask
 * @sport_mask: network order
 * @dport: destination port, network order, under @dport_mask
 * @dport_mask: network order
 * @priority: lower wins
 * @reqid: IPSEC: the template's reqid, 0 for any
 * @saddr: the selector's source prefix
 * @daddr: the selector's destination prefix
 * @tsaddr: IPSEC, tunnel: the template's outer source
 * @tdaddr: IPSEC, tunnel: the template's outer destination
 * @tspi: IPSEC: the SPI the template names (network order), 0 for any
 * @rsvd: zero
 */
struct octep_sdp_mbox_policy {
	u8 dir;
	u8 action;
	u8 family;
	u8 proto;
	u8 plen_s;
	u8 plen_d;
	u8 mode;
	u8 tfamily;
	__be16 sport;
	__be16 sport_mask;
	__be16 dport;
	__be16 dport_mask;
	__le32 priority;
	__le32 reqid;
	u8 saddr[16];
	u8 daddr[16];
	u8 tsaddr[16];
	u8 tdaddr[16];
	__be32 tspi;
	__le32 rsvd;
};

/*
 * The policy table's counters (OCTEP_SDP_FEAT_POLICY): read-only 64-bit
 * registers, counting since the block started. What the block drops of
 * what the host sent is counted here only: an input ring has no status
 * to give back per packet.
 */
#define OCTEP_SDP_IPSEC_CNT_BASE	0x480000
#define OCTEP_SDP_IPSEC_CNT(i)		(OCTEP_SDP_IPSEC_CNT_BASE + (i) * 8)
enum octep_sdp_ipsec_cnt {
	OCTEP_SDP_IPSEC_TX_ENCAP,	/* packets CLASSIFY encapsulated */
	OCTEP_SDP_IPSEC_TX_ENCAP_BYTES,	/* their bytes as the host gave them */
	OCTEP_SDP_IPSEC_TX_BLOCK,	/* dropped by an outbound BLOCK */
	OCTEP_SDP_IPSEC_TX_NO_STATE,	/* IPSEC policy, no entry: dropped */
	OCTEP_SDP_IPSEC_RX_BLOCK,	/* dropped by an inbound BLOCK */
	OCTEP_SDP_IPSEC_RX_MISMATCH,	/* dropped with POL_MISMATCH */
	/*
	 * Dropped: an ENCRYPT or ENCAP instruction whose handle names no
	 * entry of its type, a frame its entry cannot take (or that does not
	 * parse), an entry out of sequence numbers; CLASSIFY's encapsulation
	 * failing the same ways.
	 */
	OCTEP_SDP_IPSEC_TX_DROP,
	OCTEP_SDP_IPSEC_NCNT,
};

#endif /* _OCTEP_SDP_H */
