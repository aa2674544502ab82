// SPDX-License-Identifier: GPL-2.0
/*
 * octep-vfu: the function itself. Config space with an MSI-X capability,
 * BAR0's registers and the control mailbox. A first slice: the registers
 * hold what the host wrote, but for the rings' counts and doorbells, and
 * the mailbox answers GET_INFO with no feature bits (the flow table
 * refused) and anything else with EINVAL, so that the driver's PCI probe
 * runs to its end. The rings do not move packets yet, but the receive
 * buffers the host credits are checked through its DMA maps.
 *
 * The counts (CNTS, INT_LEVELS) and the doorbell arithmetic are
 * octep_sim's own rules, its rules.c compiled in here: crossing the packet
 * level, the block's timer, RESEND, the enable's latch or drop, under
 * octep_sim's default settings. This file is their layer, as irq.c is the
 * kernel model's: a count's timer is a deadline the server's poll loop
 * waits for (vfu_dev_timer(), vfu_dev_tick()), and a send is the ring
 * pair's MSI-X eventfd.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/bits.h>
#include <linux/pci_regs.h>

#include "vfu.h"

#define VFU_MBOX_Q		OCTEP_SDP_MBOX_Q_WORDS

static u64 vfu_rd(struct vfu_dev *d, u32 off)
{
	return d->regs[off / 8];
}

static void vfu_wr(struct vfu_dev *d, u32 off, u64 val)
{
	d->regs[off / 8] = val;
}

static void vfu_cfg_put(struct vfu_dev *d, unsigned int off, u64 val,
			unsigned int len)
{
	memcpy(&d->cfg[off], &val, len);	/* little-endian host */
}

/* Config space as the function comes out of reset. */
static void vfu_cfg_init(struct vfu_dev *d)
{
	unsigned int c = VFU_MSIX_CAP;

	memset(d->cfg, 0, sizeof(d->cfg));
	vfu_cfg_put(d, PCI_VENDOR_ID, VFU_VENDOR, 2);
	vfu_cfg_put(d, PCI_DEVICE_ID, VFU_DEVICE, 2);
	vfu_cfg_put(d, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	vfu_cfg_put(d, PCI_CLASS_PROG, 0x020000, 3);	/* Ethernet */
	vfu_cfg_put(d, VFU_BAR_OFF(0), PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	vfu_cfg_put(d, VFU_BAR_OFF(4), PCI_BASE_ADDRESS_MEM_TYPE_64, 4);
	vfu_cfg_put(d, PCI_SUBSYSTEM_VENDOR_ID, VFU_VENDOR, 2);
	vfu_cfg_put(d, PCI_CAPABILITY_LIST, c, 1);
	/* MSI-X: table at BAR4 + 0, PBA at BAR4 + VFU_MSIX_PBA. */
	vfu_cfg_put(d, c, PCI_CAP_ID_MSIX, 1);
	vfu_cfg_put(d, c + 2, d->nvec - 1, 2);
	vfu_cfg_put(d, c + 4, 0 | VFU_BAR4, 4);
	vfu_cfg_put(d, c + 8, VFU_MSIX_PBA | VFU_BAR4, 4);
	/*
	 * Advanced Features with FLR, what the kernel's af_flr reset method
	 * takes: a PCI function on q35's root bus, with no bridge above it
	 * to reset, has no other way to a function-level reset.
	 */
	vfu_cfg_put(d, c + 1, VFU_AF_CAP, 1);
	c = VFU_AF_CAP;
	vfu_cfg_put(d, c, PCI_CAP_ID_AF, 1);
	vfu_cfg_put(d, c + 2, PCI_CAP_AF_SIZEOF, 1);
	vfu_cfg_put(d, c + PCI_AF_CAP, PCI_AF_CAP_TP | PCI_AF_CAP_FLR, 1);
}

/**
 * vfu_dev_reset() - a function-level reset: registers, mailbox, config
 * @d: function
 *
 * The client's eventfds stay: they are the client's, not the function's.
 */
void vfu_dev_reset(struct vfu_dev *d)
{
	memset(d->regs, 0, VFU_BAR0_SIZE);
	memset(d->oq, 0, sizeof(d->oq));
	memset(d->ring, 0, sizeof(d->ring));
	vfu_wr(d, OCTEP_SDP_MBOX_SIG, OCTEP_SDP_MBOX_SIG_VAL);
	vfu_wr(d, OCTEP_SDP_MBOX_VERSION, OCTEP_SDP_MBOX_VERSION_VAL);
	vfu_wr(d, OCTEP_SDP_MBOX_H2C_SIZE, VFU_MBOX_Q);
	vfu_wr(d, OCTEP_SDP_MBOX_C2H_SIZE, VFU_MBOX_Q);
	vfu_wr(d, OCTEP_SDP_PORT_SPEED, OCTEP_SDP_PORT_MBPS);
	vfu_cfg_init(d);
}

/**
 * vfu_dev_init() - a function fresh from power-on
 * @d: function
 * @nvec: MSI-X vectors to offer
 */
void vfu_dev_init(struct vfu_dev *d, unsigned int nvec)
{
	unsigned int i;

	d->nvec = nvec;
	d->regs = calloc(1, VFU_BAR0_SIZE);
	if (!d->regs) {
		perror("octep-vfu: BAR0");
		exit(1);
	}
	for (i = 0; i < VFU_NVEC_MAX; i++)
		d->irq_fd[i] = -1;
	d->err_fd = -1;
	d->req_fd = -1;
	/* octep_sim's defaults (its dev.c): what a driver meets there. */
	d->rules.resend_pending = OSIM_RESEND_NONZERO;
	d->rules.masked = OSIM_MASKED_LATCH;
	d->rules.left_ns = OSIM_LEFT_NS_DEF;
	vfu_dev_reset(d);
}

/**
 * vfu_irq_raise() - send an MSI-X vector's message
 * @d: function
 * @vec: vector
 *
 * Masking is the client's: QEMU holds the table and the PBA.
 *
 * Return: false if it went nowhere (no such vector, no eventfd from the
 * client, or the function off the link).
 */
bool vfu_irq_raise(struct vfu_dev *d, unsigned int vec)
{
	u64 one = 1;

	if (d->gone || vec >= d->nvec || d->irq_fd[vec] < 0)
		return false;
	if (write(d->irq_fd[vec], &one, sizeof(one)) != sizeof(one)) {
		perror("octep-vfu: eventfd");
		return false;
	}
	return true;
}

/* ------------------------------------------------ the rules' layer */

/**
 * vfu_now() - the clock the rules run on
 *
 * Return: CLOCK_MONOTONIC in ns, as the kernel model's ktime_get_ns().
 */
u64 vfu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * Carry out what an event of the rules asked (rules.h), in its order:
 * the timer is the count's deadline, the send ring pair @r's vector. Then
 * the registers the host reads show the count and levels as they are.
 */
static void vfu_cnt_act(struct vfu_dev *d, unsigned int r, bool in, u64 now,
			unsigned int act)
{
	struct vfu_cnt *c = in ? &d->ring[r].in : &d->ring[r].out;
	bool sent = false;

	if (act & OSIM_RULES_CANCEL)
		c->timer_at = 0;
	if (act & OSIM_RULES_START)
		c->timer_at = c->r.timer_expires;
	if (act & OSIM_RULES_SEND)
		sent = vfu_irq_raise(d, VFU_RING_VEC0 + r);
	osim_rules_done(&c->r, &d->rules, now, act, sent);
	vfu_wr(d, in ? OCTEP_SDP_R_IN_CNTS(r) : OCTEP_SDP_R_OUT_CNTS(r),
	       c->r.count);
	vfu_wr(d, in ? OCTEP_SDP_R_IN_INT_LEVELS(r) : OCTEP_SDP_R_OUT_INT_LEVELS(r),
	       osim_rules_levels_read(&c->r));
}

/**
 * vfu_dev_timer() - when the next of the block's timers fires
 * @d: function
 *
 * Return: the earliest deadline (vfu_now()), 0 if none is running.
 */
u64 vfu_dev_timer(const struct vfu_dev *d)
{
	u64 next = 0;
	unsigned int r;

	for (r = 0; r < OCTEP_SDP_MAX_RINGS; r++) {
		const struct vfu_cnt *c[] = { &d->ring[r].out, &d->ring[r].in };
		unsigned int i;

		for (i = 0; i < 2; i++)
			if (c[i]->timer_at && (!next || c[i]->timer_at < next))
				next = c[i]->timer_at;
	}
	return next;
}

/**
 * vfu_dev_tick() - run the block's timers that are due
 * @d: function
 * @now: vfu_now()
 */
void vfu_dev_tick(struct vfu_dev *d, u64 now)
{
	unsigned int r, i;

	for (r = 0; r < OCTEP_SDP_MAX_RINGS; r++) {
		for (i = 0; i < 2; i++) {
			struct vfu_cnt *c = i ? &d->ring[r].in : &d->ring[r].out;

			if (!c->timer_at || c->timer_at > now)
				continue;
			c->timer_at = 0;
			vfu_cnt_act(d, r, i, now,
				    osim_rules_timer(&c->r, &d->rules, now));
		}
	}
}

/* ------------------------------------------------ config space */

/**
 * vfu_cfg_read() - a client read of config space
 * @d: function
 * @off: byte offset
 * @buf: where the bytes go
 * @count: bytes
 *
 * Return: 0, or -EINVAL outside config space.
 */
int vfu_cfg_read(struct vfu_dev *d, u64 off, void *buf, u32 count)
{
	if (off > VFU_CFG_SIZE || count > VFU_CFG_SIZE - off)
		return -EINVAL;
	memcpy(buf, &d->cfg[off], count);
	return 0;
}

/* A BAR's dword: the address bits the size leaves, the type bits fixed. */
static u32 vfu_bar_val(u32 val, u32 type, u64 size, bool high)
{
	if (high)
		return size > (1ULL << 32) ? val & ~(u32)((size - 1) >> 32) : val;
	return (val & ~(u32)(size - 1)) | type;
}

/* The writable bits of each config byte; the rest keep their value. */
static u8 vfu_cfg_wmask(unsigned int off)
{
	unsigned int c = VFU_MSIX_CAP;

	switch (off) {
	case PCI_COMMAND:
		return 0x46;	/* memory space, bus master, parity */
	case PCI_COMMAND + 1:
		return 0x05;	/* SERR, INTx disable */
	case PCI_INTERRUPT_LINE:
		return 0xff;
	}
	if (off == c + 3)
		return 0xc0;	/* MSI-X enable, function mask */
	return 0;
}

/**
 * vfu_cfg_write() - a client write of config space
 * @d: function
 * @off: byte offset
 * @buf: the bytes
 * @count: bytes
 *
 * Only the writable bits change; a BAR keeps its type and size bits.
 *
 * Return: 0, or -EINVAL outside config space.
 */
int vfu_cfg_write(struct vfu_dev *d, u64 off, const void *buf, u32 count)
{
	const u8 *p = buf;
	unsigned int i, bar;

	if (off > VFU_CFG_SIZE || count > VFU_CFG_SIZE - off)
		return -EINVAL;
	/* Nothing is ever pending: the reset is done before the reply. */
	if (off <= VFU_AF_CAP + PCI_AF_CTRL &&
	    off + count > VFU_AF_CAP + PCI_AF_CTRL &&
	    (p[VFU_AF_CAP + PCI_AF_CTRL - off] & PCI_AF_CTRL_FLR)) {
		fprintf(stderr, "octep-vfu: function-level reset\n");
		vfu_dev_reset(d);
		return 0;
	}
	for (i = 0; i < count; i++) {
		unsigned int o = off + i;
		u8 m = vfu_cfg_wmask(o);

		d->cfg[o] = (d->cfg[o] & ~m) | (p[i] & m);
	}
	/* BARs: whole dwords, sized as the guest's probe expects. */
	for (bar = 0; bar < 6; bar++) {
		unsigned int o = VFU_BAR_OFF(bar);
		u64 size = bar < 2 ? VFU_BAR0_SIZE : VFU_BAR4_SIZE;
		u32 val;

		if (bar != 0 && bar != 1 && bar != 4 && bar != 5)
			continue;
		if (off > o || off + count < o + 4)
			continue;
		memcpy(&val, &p[o - off], 4);
		val = vfu_bar_val(val, PCI_BASE_ADDRESS_MEM_TYPE_64, size, bar & 1);
		memcpy(&d->cfg[o], &val, 4);
	}
	return 0;
}

/* ------------------------------------------------ the mailbox */

/* One response into C2H; false when it has no room (the host is stuck). */
static bool vfu_mbox_respond(struct vfu_dev *d, u64 req, const u64 *body,
			     unsigned int n)
{
	u32 prod = vfu_rd(d, OCTEP_SDP_MBOX_C2H_PROD);
	u32 cons = vfu_rd(d, OCTEP_SDP_MBOX_C2H_CONS);
	u64 hdr = (req & ~(OCTEP_SDP_MBOX_HDR_SIZE | OCTEP_SDP_MBOX_HDR_FLAGS)) |
		  n | ((u64)OCTEP_SDP_MBOX_F_RESPONSE << 16);
	unsigned int i;

	if (VFU_MBOX_Q - (prod - cons) < 1 + n)
		return false;
	vfu_wr(d, OCTEP_SDP_MBOX_C2H_Q + (prod % VFU_MBOX_Q) * 8, hdr);
	for (i = 0; i < n; i++)
		vfu_wr(d, OCTEP_SDP_MBOX_C2H_Q + ((prod + 1 + i) % VFU_MBOX_Q) * 8,
		       body[i]);
	/* The words first, then the index the host reads them by. */
	vfu_wr(d, OCTEP_SDP_MBOX_C2H_PROD, (u32)(prod + 1 + n));
	return true;
}

/*
 * The doorbell: answer every request in H2C. GET_INFO says the block has
 * no flow table (no feature bits): the driver then runs without IPsec
 * offload, which is what this server offers so far.
 */
static void vfu_mbox_kick(struct vfu_dev *d)
{
	u32 prod = vfu_rd(d, OCTEP_SDP_MBOX_H2C_PROD);
	u32 cons = vfu_rd(d, OCTEP_SDP_MBOX_H2C_CONS);
	bool sent = false;

	while (cons != prod) {
		u64 hdr = vfu_rd(d, OCTEP_SDP_MBOX_H2C_Q + (cons % VFU_MBOX_Q) * 8);
		unsigned int size = hdr & OCTEP_SDP_MBOX_HDR_SIZE;
		unsigned int cmd = (hdr & OCTEP_SDP_MBOX_HDR_CMD) >> 24;
		u64 body[4] = { EINVAL };
		unsigned int n = 1;

		if (prod - cons > VFU_MBOX_Q || 1 + size > prod - cons) {
			fprintf(stderr, "octep-vfu: mailbox H2C out of step (prod %u cons %u)\n",
				prod, cons);
			cons = prod;
			break;
		}
		if (cmd == OCTEP_SDP_MBOX_GET_INFO) {
			struct octep_sdp_mbox_info info = {
				.version = OCTEP_SDP_MBOX_VERSION_VAL,
			};

			body[0] = 0;
			memcpy(&body[1], &info, sizeof(info));
			n = 1 + sizeof(info) / 8;
		}
		if (!vfu_mbox_respond(d, hdr, body, n))
			break;
		sent = true;
		cons += 1 + size;
	}
	vfu_wr(d, OCTEP_SDP_MBOX_H2C_CONS, cons);
	if (sent && (vfu_rd(d, OCTEP_SDP_MBOX_INT) & OCTEP_SDP_MBOX_INT_ENA))
		vfu_irq_raise(d, 0);
}

/* ------------------------------------------------ BAR0 */

/**
 * vfu_bar0_read() - a client read of the registers
 * @d: function
 * @off: byte offset in BAR0
 * @buf: where the bytes go
 * @count: bytes
 *
 * Return: 0, or -EINVAL outside BAR0.
 */
int vfu_bar0_read(struct vfu_dev *d, u64 off, void *buf, u32 count)
{
	if (off > VFU_BAR0_SIZE || count > VFU_BAR0_SIZE - off)
		return -EINVAL;
	/* What a host reads from a function that fell off the link. */
	if (d->gone) {
		memset(buf, 0xff, count);
		return 0;
	}
	memcpy(buf, (u8 *)d->regs + off, count);
	if (d->verbose && count == 8)
		fprintf(stderr, "octep-vfu: rd %#llx = %#llx\n",
			(unsigned long long)off,
			(unsigned long long)d->regs[off / 8]);
	return 0;
}

/*
 * A ring turned on or off, in the log: the record the PCI tests read
 * (through the repo the guest shares, $VM_VFU_LOG) where octep_sim's tests
 * read its debugfs; the driver's own region keeps BAR0 from the guest's
 * sysfs while it is bound.
 */
static void vfu_ring_log(struct vfu_dev *d, u64 off, u64 val)
{
	static const char *const onoff[] = { "off", "on" };
	u64 r = off % OCTEP_SDP_RING_OFFSET;
	bool out = r == OCTEP_SDP_R_OUT_ENABLE_START;

	if (off >= OCTEP_SDP_MAX_RINGS * OCTEP_SDP_RING_OFFSET ||
	    (!out && r != OCTEP_SDP_R_IN_ENABLE_START) ||
	    !((vfu_rd(d, off) ^ val) & OCTEP_SDP_RING_ENABLE))
		return;
	fprintf(stderr, "octep-vfu: ring %u %s %s\n",
		(unsigned int)(off / OCTEP_SDP_RING_OFFSET), out ? "out" : "in",
		onoff[!!(val & OCTEP_SDP_RING_ENABLE)]);
}

/*
 * The host credited @n buffers to output ring @r (R_OUT_SLIST_DBELL): the
 * block reads each one's descriptor and checks that it may write the
 * buffer, all through the client's maps, so that a descriptor or buffer
 * the driver did not map for the block is a DMA fault when it is
 * credited, not when a packet comes. The first credits after an enable
 * are logged, with what the block can reach: the PCI tests' record that
 * DMA went through, behind an IOMMU.
 */
static void vfu_oq_credit(struct vfu_dev *d, unsigned int r, u64 n)
{
	u64 base = vfu_rd(d, OCTEP_SDP_R_OUT_SLIST_BADDR(r));
	u32 size = vfu_rd(d, OCTEP_SDP_R_OUT_SLIST_RSIZE(r));
	u32 bufsize = vfu_rd(d, OCTEP_SDP_R_OUT_CONTROL(r)) &
		      OCTEP_SDP_OUT_CTL_BUFSIZE;
	struct vfu_oq *oq = &d->oq[r];
	unsigned int faults = d->dma_faults;
	u64 i;

	if (!size || n > size)
		return;
	for (i = 0; i < n; i++) {
		u32 k = (oq->fill + i) % size;
		struct octep_sdp_oq_desc desc;
		char what[48];

		snprintf(what, sizeof(what), "ring %u out descriptor %u", r, k);
		if (vfu_dma_read(d, base + k * sizeof(desc), &desc, sizeof(desc),
				 what))
			continue;
		snprintf(what, sizeof(what), "ring %u out buffer %u", r, k);
		vfu_dma_check(d, le64toh(desc.buffer_ptr), bufsize, true, what);
	}
	oq->fill = (oq->fill + n) % size;
	if (!oq->seen)
		fprintf(stderr,
			"octep-vfu: ring %u out: %llu buffers credited, %u DMA faults, %llu KiB mapped\n",
			r, (unsigned long long)n, (unsigned int)(d->dma_faults - faults),
			(unsigned long long)(vfu_dma_mapped(d) >> 10));
	oq->seen = true;
}

/*
 * A write to ring pair @r's count, levels or doorbell registers (@reg, an
 * offset in the ring's window): the block's rules (octep_sim's rules.c).
 * False for the other registers.
 */
static bool vfu_ring_rules(struct vfu_dev *d, unsigned int r, u64 reg, u64 val)
{
	struct vfu_ring *ring = &d->ring[r];
	u64 now = vfu_now();
	u32 old;

	switch (reg) {
	case OCTEP_SDP_R_OUT_CNTS_START:
		vfu_cnt_act(d, r, false, now,
			    osim_rules_host_write(&ring->out.r, &d->rules, now, val));
		return true;
	case OCTEP_SDP_R_IN_CNTS_START:
		vfu_cnt_act(d, r, true, now,
			    osim_rules_host_write(&ring->in.r, &d->rules, now, val));
		return true;
	case OCTEP_SDP_R_OUT_INT_LEVELS_START:
		vfu_cnt_act(d, r, false, now,
			    osim_rules_levels_write(&ring->out.r, now, val));
		return true;
	case OCTEP_SDP_R_IN_INT_LEVELS_START:
		vfu_cnt_act(d, r, true, now,
			    osim_rules_levels_write(&ring->in.r, now, val));
		return true;
	case OCTEP_SDP_R_OUT_SLIST_DBELL_START:
		old = ring->credits;
		ring->credits = osim_rules_dbell(old, vfu_rd(d, OCTEP_SDP_R_OUT_SLIST_RSIZE(r)),
						 val, &d->dbell_excess);
		/* The buffers just credited, on an enabled ring. */
		if (ring->credits > old &&
		    (vfu_rd(d, OCTEP_SDP_R_OUT_ENABLE(r)) & OCTEP_SDP_RING_ENABLE))
			vfu_oq_credit(d, r, ring->credits - old);
		vfu_wr(d, OCTEP_SDP_R_OUT_SLIST_DBELL(r), ring->credits);
		return true;
	case OCTEP_SDP_R_IN_INSTR_DBELL_START:
		ring->pending = osim_rules_dbell(ring->pending,
						 vfu_rd(d, OCTEP_SDP_R_IN_INSTR_RSIZE(r)),
						 val, &d->dbell_excess);
		vfu_wr(d, OCTEP_SDP_R_IN_INSTR_DBELL(r), ring->pending);
		return true;
	/* A new ring (base or size written): nothing credited or rung yet. */
	case OCTEP_SDP_R_OUT_SLIST_BADDR_START:
	case OCTEP_SDP_R_OUT_SLIST_RSIZE_START:
		ring->credits = 0;
		vfu_wr(d, OCTEP_SDP_R_OUT_SLIST_DBELL(r), 0);
		return false;
	case OCTEP_SDP_R_IN_INSTR_BADDR_START:
	case OCTEP_SDP_R_IN_INSTR_RSIZE_START:
		ring->pending = 0;
		vfu_wr(d, OCTEP_SDP_R_IN_INSTR_DBELL(r), 0);
		return false;
	}
	return false;
}

static bool vfu_ro_reg(u64 off)
{
	switch (off) {
	case OCTEP_SDP_MBOX_SIG:
	case OCTEP_SDP_MBOX_VERSION:
	case OCTEP_SDP_MBOX_H2C_CONS:
	case OCTEP_SDP_MBOX_H2C_SIZE:
	case OCTEP_SDP_MBOX_C2H_PROD:
	case OCTEP_SDP_MBOX_C2H_SIZE:
	case OCTEP_SDP_PORT_SPEED:
		return true;
	}
	return (off >= OCTEP_SDP_MBOX_C2H_Q && off < OCTEP_SDP_MBOX_END) ||
	       (off >= OCTEP_SDP_IPSEC_CNT(0) &&
		off < OCTEP_SDP_IPSEC_CNT(OCTEP_SDP_IPSEC_NCNT));
}

/**
 * vfu_bar0_write() - a client write of the registers, with its effects
 * @d: function
 * @off: byte offset in BAR0
 * @buf: the bytes
 * @count: bytes
 *
 * A write to a read-only register is dropped; H2C_PROD rings the mailbox.
 *
 * Return: 0, or -EINVAL outside BAR0.
 */
int vfu_bar0_write(struct vfu_dev *d, u64 off, const void *buf, u32 count)
{
	u64 val = 0;

	if (off > VFU_BAR0_SIZE || count > VFU_BAR0_SIZE - off)
		return -EINVAL;
	if (d->gone)
		return 0;
	/* The block's registers are 64-bit: other writes land as they are. */
	if (count != 8 || (off & 7)) {
		if (!vfu_ro_reg(off & ~7ULL))
			memcpy((u8 *)d->regs + off, buf, count);
		return 0;
	}
	memcpy(&val, buf, 8);
	if (d->verbose)
		fprintf(stderr, "octep-vfu: wr %#llx = %#llx\n",
			(unsigned long long)off, (unsigned long long)val);
	if (vfu_ro_reg(off))
		return 0;
	vfu_ring_log(d, off, val);
	if (off < OCTEP_SDP_MAX_RINGS * OCTEP_SDP_RING_OFFSET) {
		unsigned int r = off / OCTEP_SDP_RING_OFFSET;
		u64 reg = off % OCTEP_SDP_RING_OFFSET;

		if (vfu_ring_rules(d, r, reg, val))
			return 0;
		/* An enable starts the ring at its first descriptor. */
		if (reg == OCTEP_SDP_R_OUT_ENABLE_START &&
		    (val & ~vfu_rd(d, off) & OCTEP_SDP_RING_ENABLE))
			d->oq[r] = (struct vfu_oq){ 0 };
	}
	vfu_wr(d, off, val);
	if (off == OCTEP_SDP_MBOX_H2C_PROD)
		vfu_mbox_kick(d);
	return 0;
}
