// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the control mailbox. Two queues of 64-bit words in a register
 * window (octep_sdp.h, "Control mailbox"). The host's write
 * of H2C_PROD is the doorbell: it queues the worker, which takes each
 * request, has the flow table answer it, writes the response into C2H and
 * raises the mailbox interrupt. Faults (debugfs ipsec/): fail or leave
 * unanswered the next N requests, optionally of one command only.
 */
#include <crypto/aead.h>
#include <linux/bitfield.h>
#include <linux/debugfs.h>
#include <linux/slab.h>

#include "octep_sim.h"
#include "ipsec.h"

#define OSIM_MBOX_Q		OCTEP_SDP_MBOX_Q_WORDS

static struct osim_ipsec *osim_ips(struct osim_dev *dev)
{
	return dev->ipsec;
}

/**
 * osim_mbox_read() - a host read in the mailbox window
 * @dev: model device
 * @off: register offset, osim_mbox_reg(@off) true
 *
 * Return: the register's value; all ones outside the defined registers.
 */
u64 osim_mbox_read(struct osim_dev *dev, u32 off)
{
	struct osim_ipsec *ips = osim_ips(dev);
	unsigned long flags;
	u64 val = ~0ULL;

	if (!ips)
		return val;
	spin_lock_irqsave(&ips->mbox_lock, flags);
	switch (off) {
	case OCTEP_SDP_MBOX_SIG:
		val = OCTEP_SDP_MBOX_SIG_VAL;
		break;
	case OCTEP_SDP_MBOX_VERSION:
		val = OCTEP_SDP_MBOX_VERSION_VAL;
		break;
	case OCTEP_SDP_MBOX_INT:
		val = ips->int_ena;
		break;
	case OCTEP_SDP_MBOX_H2C_PROD:
		val = ips->h2c_prod;
		break;
	case OCTEP_SDP_MBOX_H2C_CONS:
		val = ips->h2c_cons;
		break;
	case OCTEP_SDP_MBOX_C2H_PROD:
		val = ips->c2h_prod;
		break;
	case OCTEP_SDP_MBOX_C2H_CONS:
		val = ips->c2h_cons;
		break;
	case OCTEP_SDP_MBOX_H2C_SIZE:
	case OCTEP_SDP_MBOX_C2H_SIZE:
		val = OSIM_MBOX_Q;
		break;
	default:
		if (off >= OCTEP_SDP_MBOX_H2C_Q &&
		    off < OCTEP_SDP_MBOX_H2C_Q + OSIM_MBOX_Q * 8 && !(off & 7))
			val = ips->h2c[(off - OCTEP_SDP_MBOX_H2C_Q) / 8];
		else if (off >= OCTEP_SDP_MBOX_C2H_Q &&
			 off < OCTEP_SDP_MBOX_C2H_Q + OSIM_MBOX_Q * 8 &&
			 !(off & 7))
			val = ips->c2h[(off - OCTEP_SDP_MBOX_C2H_Q) / 8];
		break;
	}
	spin_unlock_irqrestore(&ips->mbox_lock, flags);
	return val;
}

/**
 * osim_mbox_write() - a host write in the mailbox window
 * @dev: model device
 * @off: register offset, osim_mbox_reg(@off) true
 * @val: value
 *
 * Writes to read-only registers and to the C2H queue are ignored.
 */
void osim_mbox_write(struct osim_dev *dev, u32 off, u64 val)
{
	struct osim_ipsec *ips = osim_ips(dev);
	unsigned long flags;
	bool kick = false;

	if (!ips)
		return;
	spin_lock_irqsave(&ips->mbox_lock, flags);
	switch (off) {
	case OCTEP_SDP_MBOX_INT:
		ips->int_ena = val & OCTEP_SDP_MBOX_INT_ENA;
		break;
	case OCTEP_SDP_MBOX_H2C_PROD:
		ips->h2c_prod = (u32)val;
		kick = !ips->dying;
		break;
	case OCTEP_SDP_MBOX_C2H_CONS:
		ips->c2h_cons = (u32)val;
		/* Room in C2H: a worker waiting for it can go on. */
		kick = !ips->dying;
		break;
	default:
		if (off >= OCTEP_SDP_MBOX_H2C_Q &&
		    off < OCTEP_SDP_MBOX_H2C_Q + OSIM_MBOX_Q * 8 && !(off & 7))
			ips->h2c[(off - OCTEP_SDP_MBOX_H2C_Q) / 8] = val;
		break;
	}
	spin_unlock_irqrestore(&ips->mbox_lock, flags);
	if (kick)
		mod_delayed_work(system_wq, &ips->mbox_work, 0);
}

/* A fault that applies to @cmd: take one from @ctr if any is left. */
static bool osim_mbox_fault(struct osim_ipsec *ips, atomic_t *ctr, u8 cmd)
{
	u32 only = READ_ONCE(ips->fault_cmd);

	if (only && only != cmd)
		return false;
	return atomic_dec_if_positive(ctr) >= 0;
}

/*
 * Under mbox_lock, before an answer of @n words: the hostile mode's
 * response nobody asked for (an id the host never sent, any command but
 * FLOW_ADD, whose stray answers the host takes as a leaked entry), if C2H
 * has room for it and the answer.
 */
static void osim_mbox_hostile(struct osim_ipsec *ips, unsigned int n)
{
	unsigned int size, i;
	u32 rnd;
	u8 cmd;

	if (OSIM_MBOX_Q - (ips->c2h_prod - ips->c2h_cons) < n + 3 ||
	    !osim_hostile(ips->dev, OSIM_HK_MBOX, &rnd))
		return;
	size = rnd % 3;
	cmd = (rnd >> 8) & 0xff;
	if (cmd == OCTEP_SDP_MBOX_FLOW_ADD)
		cmd++;
	ips->c2h[ips->c2h_prod % OSIM_MBOX_Q] =
		FIELD_PREP(OCTEP_SDP_MBOX_HDR_SIZE, size) |
		FIELD_PREP(OCTEP_SDP_MBOX_HDR_FLAGS, OCTEP_SDP_MBOX_F_RESPONSE) |
		FIELD_PREP(OCTEP_SDP_MBOX_HDR_CMD, cmd) |
		FIELD_PREP(OCTEP_SDP_MBOX_HDR_ID, BIT(31) | rnd);
	for (i = 0; i < size; i++)
		ips->c2h[(ips->c2h_prod + 1 + i) % OSIM_MBOX_Q] = rnd;
	ips->c2h_prod += 1 + size;
}

/*
 * The hostile mode's answer gone wrong: its id or its command changed, or
 * a size past any response (the host then cannot find the next header).
 */
static void osim_mbox_corrupt(struct osim_ipsec *ips, u64 *hdr)
{
	u32 rnd;

	if (!osim_hostile(ips->dev, OSIM_HK_MBOX_BAD, &rnd))
		return;
	switch (rnd % 3) {
	case 0:
		*hdr ^= FIELD_PREP(OCTEP_SDP_MBOX_HDR_ID, BIT(31));
		break;
	case 1:
		*hdr ^= FIELD_PREP(OCTEP_SDP_MBOX_HDR_CMD, 0x80);
		break;
	default:
		*hdr |= OCTEP_SDP_MBOX_HDR_SIZE;
		break;
	}
}

/* Answer one request; runs without mbox_lock (the table may sleep). */
static unsigned int osim_mbox_answer(struct osim_ipsec *ips, u64 hdr,
				     const __le64 *body, unsigned int words,
				     u64 *out)
{
	u8 cmd = FIELD_GET(OCTEP_SDP_MBOX_HDR_CMD, hdr);
	__le64 resp[OCTEP_SDP_MBOX_MAX_BODY];
	unsigned int rw = 0, i;
	u32 status;

	atomic64_inc(&ips->mbox_requests);
	atomic64_inc(&ips->mbox_cmds[cmd < OSIM_MBOX_NCMD ? cmd : 0]);
	if (osim_mbox_fault(ips, &ips->timeout_next, cmd)) {
		atomic64_inc(&ips->mbox_timedout);
		return 0;
	}
	if (osim_mbox_fault(ips, &ips->fail_next, cmd)) {
		atomic64_inc(&ips->mbox_failed);
		status = EIO;
	} else {
		status = -osim_flow_cmd(ips, cmd, body, words, resp + 1, &rw);
	}
	if (status)
		rw = 0;
	resp[0] = cpu_to_le64(status);
	rw++;
	out[0] = FIELD_PREP(OCTEP_SDP_MBOX_HDR_SIZE, rw) |
		 FIELD_PREP(OCTEP_SDP_MBOX_HDR_FLAGS, OCTEP_SDP_MBOX_F_RESPONSE) |
		 FIELD_PREP(OCTEP_SDP_MBOX_HDR_CMD, cmd) |
		 (hdr & OCTEP_SDP_MBOX_HDR_ID);
	for (i = 0; i < rw; i++)
		out[1 + i] = le64_to_cpu(resp[i]);
	return 1 + rw;
}

static void osim_mbox_work(struct work_struct *work)
{
	struct osim_ipsec *ips = container_of(to_delayed_work(work),
					      struct osim_ipsec, mbox_work);
	u64 out[1 + OCTEP_SDP_MBOX_MAX_BODY];
	__le64 body[OCTEP_SDP_MBOX_MAX_BODY];
	unsigned int size, n, i;
	bool fire;
	u32 avail;
	u64 hdr;

	for (;;) {
		spin_lock_irq(&ips->mbox_lock);
		if (ips->dying) {
			spin_unlock_irq(&ips->mbox_lock);
			return;
		}
		avail = ips->h2c_prod - ips->h2c_cons;
		if (!avail) {
			spin_unlock_irq(&ips->mbox_lock);
			return;
		}
		/* Wait for room for the largest response before taking it. */
		if (OSIM_MBOX_Q - (ips->c2h_prod - ips->c2h_cons) <
		    1 + OCTEP_SDP_MBOX_MAX_BODY) {
			spin_unlock_irq(&ips->mbox_lock);
			schedule_delayed_work(&ips->mbox_work, 1);
			return;
		}
		hdr = ips->h2c[ips->h2c_cons % OSIM_MBOX_Q];
		size = FIELD_GET(OCTEP_SDP_MBOX_HDR_SIZE, hdr);
		if (avail > OSIM_MBOX_Q || size > OCTEP_SDP_MBOX_MAX_BODY ||
		    1 + size > avail ||
		    !(FIELD_GET(OCTEP_SDP_MBOX_HDR_FLAGS, hdr) &
		      OCTEP_SDP_MBOX_F_REQUEST)) {
			/* Nothing in this queue can be trusted: skip it all. */
			ips->h2c_cons = ips->h2c_prod;
			spin_unlock_irq(&ips->mbox_lock);
			atomic64_inc(&ips->mbox_bad);
			return;
		}
		for (i = 0; i < size; i++)
			body[i] = cpu_to_le64(ips->h2c[(ips->h2c_cons + 1 + i) %
						       OSIM_MBOX_Q]);
		ips->h2c_cons += 1 + size;
		spin_unlock_irq(&ips->mbox_lock);

		n = osim_mbox_answer(ips, hdr, body, size, out);
		if (!n)
			continue;

		spin_lock_irq(&ips->mbox_lock);
		osim_mbox_hostile(ips, n);
		osim_mbox_corrupt(ips, out);
		for (i = 0; i < n; i++)
			ips->c2h[(ips->c2h_prod + i) % OSIM_MBOX_Q] = out[i];
		ips->c2h_prod += n;
		fire = ips->int_ena & OCTEP_SDP_MBOX_INT_ENA;
		spin_unlock_irq(&ips->mbox_lock);
		if (fire)
			osim_fire(ips->dev, OSIM_HWIRQ_MBOX);
	}
}

static int osim_ipsec_cnt_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_ipsec_cnt_fops, osim_ipsec_cnt_get, NULL,
			 "%llu\n");

static int osim_ipsec_used_show(struct seq_file *m, void *v)
{
	struct osim_ipsec *ips = m->private;

	mutex_lock(&ips->table_lock);
	seq_printf(m, "in %u out %u\n", ips->used[OSIM_FLOW_IN],
		   ips->used[OSIM_FLOW_OUT]);

	mutex_unlock(&ips->table_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(osim_ipsec_used);

static int osim_ipsec_pols_show(struct seq_file *m, void *v)
{
	struct osim_ipsec *ips = m->private;

	mutex_lock(&ips->table_lock);
	seq_printf(m, "in %u out %u\n", ips->npols[OSIM_FLOW_IN],
		   ips->npols[OSIM_FLOW_OUT]);
	mutex_unlock(&ips->table_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(osim_ipsec_pols);

/*
 * One line an entry, for the tests and for a reader of a stall: flows with
 * their SPI, policies with their priority and action, by handle (what the
 * "hide" fault takes).
 */
static int osim_ipsec_table_show(struct seq_file *m, void *v)
{
	static const char * const way[] = { "in", "out" };
	struct osim_ipsec *ips = m->private;
	struct osim_flow *f;
	struct osim_pol *pol;
	unsigned long i;
	int d;

	mutex_lock(&ips->table_lock);
	for (d = 0; d < 2; d++) {
		xa_for_each(&ips->flows[d], i, f) {
			seq_printf(m, "flow %s %#x spi %#x reqid %u %s",
				   way[d], f->handle, ntohl(f->spi), f->reqid,
				   f->type == OCTEP_SDP_FLOW_TYPE_PACKET ?
				   "packet" : "crypto");
			/*
			 * Ports and MACs as FLOW_ENCAP and FLOW_L2 last set
			 * them (f->lock).
			 */
			spin_lock_bh(&f->lock);
			if (f->encap)
				seq_printf(m, " espinudp %u %u",
					   ntohs(f->sport), ntohs(f->dport));
			if (f->l2 == OCTEP_SDP_FLOW_L2_SET)
				seq_printf(m, " l2 %pM %pM", f->h_source,
					   f->h_dest);
			else if (f->l2 == OCTEP_SDP_FLOW_L2_HOLD)
				seq_puts(m, " l2 hold");
			spin_unlock_bh(&f->lock);
			seq_putc(m, '\n');
		}
		xa_for_each(&ips->pols[d], i, pol)
			seq_printf(m, "policy %s %#x priority %u action %u reqid %u\n",
				   way[d], pol->handle, pol->priority,
				   pol->action, pol->reqid);
	}
	mutex_unlock(&ips->table_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(osim_ipsec_table);

/* Requests taken, one line a command: "flow_stats 8192". */
static int osim_ipsec_cmds_show(struct seq_file *m, void *v)
{
	static const char * const name[OSIM_MBOX_NCMD] = {
		[0] = "other",
		[OCTEP_SDP_MBOX_GET_INFO] = "get_info",
		[OCTEP_SDP_MBOX_FLOW_ADD] = "flow_add",
		[OCTEP_SDP_MBOX_FLOW_DEL] = "flow_del",
		[OCTEP_SDP_MBOX_FLOW_STATS] = "flow_stats",
		[OCTEP_SDP_MBOX_FLOW_UPDATE] = "flow_update",
		[OCTEP_SDP_MBOX_FLOW_DEL_MANY] = "flow_del_many",
		[OCTEP_SDP_MBOX_FLOW_LIST] = "flow_list",
		[OCTEP_SDP_MBOX_POLICY_ADD] = "policy_add",
		[OCTEP_SDP_MBOX_FLOW_STATS_MANY] = "flow_stats_many",
		[OCTEP_SDP_MBOX_FLOW_ENCAP] = "flow_encap",
		[OCTEP_SDP_MBOX_FLOW_L2] = "flow_l2",
	};
	struct osim_ipsec *ips = m->private;
	int i;

	for (i = 0; i < OSIM_MBOX_NCMD; i++)
		seq_printf(m, "%s %lld\n", name[i],
			   atomic64_read(&ips->mbox_cmds[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(osim_ipsec_cmds);

static const char * const osim_ipsec_cnt_names[OSIM_IPSEC_NCNT] = {
	[OSIM_TX_ENCRYPT] = "tx_encrypt",
	[OSIM_TX_ENCAP] = "tx_encap",
	[OSIM_TX_NO_ENTRY] = "tx_no_entry",
	[OSIM_TX_BAD] = "tx_bad",
	[OSIM_TX_SEQ_OVERFLOW] = "tx_seq_overflow",
	[OSIM_TX_EXPIRED] = "tx_expired",
	[OSIM_RX_OK] = "rx_ok",
	[OSIM_RX_BAD_ICV] = "rx_bad_icv",
	[OSIM_RX_REPLAY] = "rx_replay",
	[OSIM_RX_NO_ENTRY] = "rx_no_entry",
	[OSIM_RX_MALFORMED] = "rx_malformed",
	[OSIM_TX_CLASSIFY_ENCAP] = "tx_classify_encap",
	[OSIM_TX_CLASSIFY_BYTES] = "tx_classify_bytes",
	[OSIM_TX_POL_BLOCK] = "tx_pol_block",
	[OSIM_TX_POL_NO_STATE] = "tx_pol_no_state",
	[OSIM_RX_POL_BLOCK] = "rx_pol_block",
	[OSIM_RX_POL_MISMATCH] = "rx_pol_mismatch",
	[OSIM_RX_EXPIRED] = "rx_expired",
	[OSIM_TX_NATT] = "tx_natt",
	[OSIM_RX_NATT] = "rx_natt",
	[OSIM_RX_NATT_PASS] = "rx_natt_pass",
	[OSIM_TX_NO_NEIGH] = "tx_no_neigh",
	[OSIM_POL_NO_PORTS] = "pol_no_ports",
};

static void osim_ipsec_debugfs(struct osim_ipsec *ips)
{
	struct dentry *d;
	int i;

	d = debugfs_create_dir("ipsec", ips->dev->dbg);
	ips->dbg = d;
	debugfs_create_u32("capacity_in", 0600, d, &ips->cap[OSIM_FLOW_IN]);
	debugfs_create_u32("capacity_out", 0600, d, &ips->cap[OSIM_FLOW_OUT]);
	debugfs_create_file("flows", 0400, d, ips, &osim_ipsec_used_fops);
	debugfs_create_file("policies", 0400, d, ips, &osim_ipsec_pols_fops);
	debugfs_create_file("table", 0400, d, ips, &osim_ipsec_table_fops);
	debugfs_create_atomic_t("mbox_fail_next", 0600, d, &ips->fail_next);
	debugfs_create_atomic_t("mbox_timeout_next", 0600, d,
				&ips->timeout_next);
	debugfs_create_u32("mbox_fault_cmd", 0600, d, &ips->fault_cmd);
	debugfs_create_x32("features", 0600, d, &ips->features);
	debugfs_create_x32("hide", 0600, d, &ips->hide);
	debugfs_create_file("mbox_requests", 0400, d, &ips->mbox_requests,
			    &osim_ipsec_cnt_fops);
	debugfs_create_file("mbox_cmds", 0400, d, ips, &osim_ipsec_cmds_fops);
	debugfs_create_file("mbox_failed", 0400, d, &ips->mbox_failed,
			    &osim_ipsec_cnt_fops);
	debugfs_create_file("mbox_timedout", 0400, d, &ips->mbox_timedout,
			    &osim_ipsec_cnt_fops);
	debugfs_create_file("mbox_bad", 0400, d, &ips->mbox_bad,
			    &osim_ipsec_cnt_fops);
	for (i = 0; i < OSIM_IPSEC_NCNT; i++)
		debugfs_create_file(osim_ipsec_cnt_names[i], 0400, d,
				    &ips->cnt[i], &osim_ipsec_cnt_fops);
}

/**
 * osim_ipsec_init() - give a model device its mailbox and flow table
 * @dev: model device; its debugfs directory exists
 *
 * Return: 0 or -ENOMEM.
 */
int osim_ipsec_init(struct osim_dev *dev)
{
	struct osim_ipsec *ips;

	/* Its hashes make it large: it need not be contiguous. */
	ips = kvzalloc(sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	ips->dev = dev;
	ips->features = OCTEP_SDP_FEAT_CRYPTO | OCTEP_SDP_FEAT_PACKET |
			OCTEP_SDP_FEAT_ESN | OCTEP_SDP_FEAT_TUNNEL |
			OCTEP_SDP_FEAT_IPV6 | OCTEP_SDP_FEAT_DEL_MANY |
			OCTEP_SDP_FEAT_LIST | OCTEP_SDP_FEAT_POLICY |
			OCTEP_SDP_FEAT_STATS_MANY | OCTEP_SDP_FEAT_NATT |
			OCTEP_SDP_FEAT_L2 | OCTEP_SDP_FEAT_ESP_GSO;
	spin_lock_init(&ips->mbox_lock);
	INIT_DELAYED_WORK(&ips->mbox_work, osim_mbox_work);
	osim_flow_table_init(ips);
	/* Instantiating rfc4106 runs its self-tests: once, here. */
	ips->warm = crypto_alloc_aead("rfc4106(gcm(aes))", 0, CRYPTO_ALG_ASYNC);
	if (IS_ERR(ips->warm))
		ips->warm = NULL;
	osim_ipsec_debugfs(ips);
	dev->ipsec = ips;
	return 0;
}

/**
 * osim_ipsec_fini() - stop the mailbox and empty the flow table
 * @dev: model device; the engine no longer runs
 */
void osim_ipsec_fini(struct osim_dev *dev)
{
	struct osim_ipsec *ips = dev->ipsec;

	if (!ips)
		return;
	spin_lock_irq(&ips->mbox_lock);
	ips->dying = true;
	spin_unlock_irq(&ips->mbox_lock);
	cancel_delayed_work_sync(&ips->mbox_work);
	/* ips->dbg went with the device's directory (osim_debugfs_dev_del). */
	dev->ipsec = NULL;
	osim_flow_table_fini(ips);
	if (ips->warm)
		crypto_free_aead(ips->warm);
	kvfree(ips);
}
