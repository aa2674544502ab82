// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: the control channel to the block's flow table.
 *
 * Deletes are batched and retried from ctl_work, outside the xfrm core's
 * locks; after a mailbox outage a resync lists the block's entries and
 * frees the orphans the host no longer knows. Inbound ESN states tell the
 * block when their window enters a new 2^32 (FLOW_UPDATE), NAT-T states
 * when a NAT moved their ports (FLOW_ENCAP).
 */
#include <linux/bitfield.h>
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"
#include "xfrm.h"

/**
 * octep_ipsec_mbox_errmsg() - an extack message for a failed request
 * @err: the request's error
 * @what: the request, for the message
 * @extack: where the message goes
 *
 * Return: @err.
 */
int octep_ipsec_mbox_errmsg(int err, const char *what,
			    struct netlink_ext_ack *extack)
{
	switch (err) {
	case -ETIMEDOUT:
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "The coprocessor did not answer the %s within %u ms",
				       what, OCTEP_MBOX_TIMEOUT_MS);
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "The coprocessor's flow table is full (%s)",
				       what);
		break;
	case -EEXIST:
		NL_SET_ERR_MSG_MOD(extack,
				   "An inbound state with this SPI and destination is already offloaded");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_MOD(extack, "The control mailbox is full");
		break;
	default:
		NL_SET_ERR_MSG_FMT_MOD(extack, "The coprocessor refused the %s (%d)",
				       what, err);
		break;
	}
	return err;
}

/**
 * octep_ipsec_mbox_down() - refuse an add at once while the mailbox is down
 * @ips: the offload
 * @extack: where the refusal's message goes
 *
 * A state or policy add runs under the xfrm configuration mutex: with the
 * coprocessor not answering, each would hold every IPsec change in the
 * namespace for a timeout. Refused at once instead; the host can carry a
 * crypto offload state.
 *
 * Return: 0 if the mailbox answers, else the error to return.
 */
int octep_ipsec_mbox_down(struct octep_ipsec *ips,
			  struct netlink_ext_ack *extack)
{
	if (!octep_mbox_down(&ips->mbox))
		return 0;
	NL_SET_ERR_MSG_MOD(extack,
			   "The coprocessor's mailbox is not answering: offload refused until it does");
	return -EOPNOTSUPP;
}

/**
 * octep_ipsec_del_handles() - delete entries in the block
 * @ips: the offload
 * @h: their handles
 * @n: how many
 * @err: set to the error of the exchange that failed
 *
 * One FLOW_DEL_MANY when the block has it. An entry the block does not
 * have is as good as deleted.
 *
 * Return: how many of @h, from the first, are gone from the block; *@err
 * is set when that is fewer than @n.
 */
unsigned int octep_ipsec_del_handles(struct octep_ipsec *ips,
				     const u32 *h, unsigned int n,
				     int *err)
{
	__le64 req[OCTEP_SDP_MBOX_MAX_BODY] = {};
	__le64 missing;
	unsigned int i;

	*err = 0;
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_DEL_MANY)) {
		for (i = 0; i < n; i++) {
			req[0] = cpu_to_le64(h[i]);
			*err = octep_mbox_call(&ips->mbox,
					       OCTEP_SDP_MBOX_FLOW_DEL, req,
					       sizeof(req[0]), NULL, 0);
			if (*err && *err != -ENOENT)
				return i;
		}
		*err = 0;
		return n;
	}
	req[0] = cpu_to_le64(n);
	for (i = 0; i < n; i++)
		req[1 + i / 2] |= cpu_to_le64((u64)h[i] << (i % 2 * 32));
	*err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_DEL_MANY, req,
			       (1 + DIV_ROUND_UP(n, 2)) * sizeof(req[0]),
			       &missing, sizeof(missing));
	return *err ? 0 : n;
}

/**
 * octep_ipsec_forget() - free an entry that is gone from the block
 * @ips: the offload
 * @sa: the entry
 *
 * Context: under ips->lock.
 */
void octep_ipsec_forget(struct octep_ipsec *ips,
			struct octep_ipsec_sa *sa)
{
	lockdep_assert_held(&ips->lock);
	/* Not if a newer entry took the handle (@sa->replaced). */
	xa_cmpxchg_bh(&ips->owned, sa->handle, sa, NULL, GFP_ATOMIC);
	kfree_rcu(sa, rcu);
}

/**
 * octep_ipsec_orphan() - keep an entry whose delete failed, for a resync
 * @ips: the offload
 * @sa: the entry
 *
 * Context: under ips->lock.
 */
void octep_ipsec_orphan(struct octep_ipsec *ips,
			struct octep_ipsec_sa *sa)
{
	lockdep_assert_held(&ips->lock);
	sa->where = OCTEP_SA_ORPHAN;
	list_add_tail(&sa->node, &ips->orphans);
	ips->n_orphans++;
}

/**
 * octep_ipsec_del_batch() - delete a batch of entries, then free them
 * @ips: the offload
 * @n: entries in @ips->batch, off every list
 * @fresh: a first failure, not a resync's retry
 * @freed: incremented by the entries freed
 *
 * Those the block did not delete become orphans, counted in
 * orphans_total when @fresh.
 *
 * Return: 0 or the error of the failed exchange.
 */
int octep_ipsec_del_batch(struct octep_ipsec *ips, unsigned int n,
			  bool fresh, unsigned int *freed)
{
	u32 h[OCTEP_SDP_MBOX_DEL_MANY_MAX];
	unsigned int i, done;
	int err;

	for (i = 0; i < n; i++)
		h[i] = ips->batch[i]->handle;
	done = octep_ipsec_del_handles(ips, h, n, &err);
	spin_lock_bh(&ips->lock);
	for (i = 0; i < n; i++) {
		if (i < done || ips->batch[i]->replaced)
			octep_ipsec_forget(ips, ips->batch[i]);
		else
			octep_ipsec_orphan(ips, ips->batch[i]);
	}
	/* Read locklessly by an add waiting for room (octep_ipsec_room()). */
	if (fresh)
		WRITE_ONCE(ips->n_dead, ips->n_dead - n);
	WRITE_ONCE(ips->del_batches, ips->del_batches + 1);
	spin_unlock_bh(&ips->lock);
	wake_up_all(&ips->drained);
	if (freed)
		*freed += done;
	if (done < n) {
		if (fresh)
			atomic64_add(n - done, &ips->orphans_total);
		dev_warn(ips->oct->dev,
			 "flow delete of %u entries failed (%d): kept for a resync\n",
			 n - done, err);
	}
	return err;
}

/*
 * Delete the entries of ips->dead, a batch per mailbox request. Stops at
 * the first failed exchange: a broken mailbox costs one timeout per
 * worker run, not one per entry (what is left waits for the retry).
 */
static int octep_ipsec_drain(struct octep_ipsec *ips)
{
	unsigned int max = octep_ipsec_has(ips, OCTEP_SDP_FEAT_DEL_MANY) ?
			   OCTEP_SDP_MBOX_DEL_MANY_MAX : 1;
	struct octep_ipsec_sa *sa;
	unsigned int n;
	int err;

	for (;;) {
		n = 0;
		spin_lock_bh(&ips->lock);
		while (n < max) {
			sa = list_first_entry_or_null(&ips->dead,
						      struct octep_ipsec_sa,
						      node);
			if (!sa)
				break;
			list_del_init(&sa->node);
			if (sa->replaced) {
				WRITE_ONCE(ips->n_dead, ips->n_dead - 1);
				octep_ipsec_forget(ips, sa);
				continue;
			}
			/* Still counted in n_dead until its batch is done. */
			ips->batch[n++] = sa;
		}
		spin_unlock_bh(&ips->lock);
		if (!n)
			return 0;
		err = octep_ipsec_del_batch(ips, n, true, NULL);
		if (err)
			return err;
	}
}

/*
 * Collect the handles of the block's entries that no state owns into a
 * growing array; mark the orphans the block still has. Return: 0 or the
 * mailbox error.
 */
static int octep_ipsec_list(struct octep_ipsec *ips, u32 **leak,
			    unsigned int *nleak)
{
	__le64 resp[OCTEP_SDP_MBOX_MAX_BODY - 1];
	struct octep_ipsec_sa *sa;
	unsigned int i, n, cap = 0;
	u64 cursor = 0, next;
	__le64 req;
	u32 h, *p;
	int err;

	do {
		req = cpu_to_le64(cursor);
		err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_LIST,
				      &req, sizeof(req), resp, sizeof(resp));
		if (err)
			return err;
		next = le64_to_cpu(resp[0]);
		n = min_t(u64, le64_to_cpu(resp[1]), OCTEP_SDP_MBOX_LIST_MAX);
		for (i = 0; i < n; i++) {
			h = (u32)(le64_to_cpu(resp[2 + i / 2]) >> (i % 2 * 32));
			spin_lock_bh(&ips->lock);
			sa = xa_load(&ips->owned, h);
			if (sa && sa->where == OCTEP_SA_ORPHAN)
				sa->seen = true;
			spin_unlock_bh(&ips->lock);
			if (sa)
				continue;
			if (*nleak == cap) {
				cap = max(2 * cap, 64U);
				p = krealloc_array(*leak, cap, sizeof(*p),
						   GFP_KERNEL);
				if (!p)
					return -ENOMEM;
				*leak = p;
			}
			(*leak)[(*nleak)++] = h;
		}
		cursor = (u32)next;
	} while (!(next & OCTEP_SDP_MBOX_LIST_DONE));
	return 0;
}

/**
 * octep_ipsec_resync() - find and free the block's entries nobody owns
 * @ips: the offload
 *
 * Leaks come from deletes that failed (the orphans: their states are gone,
 * their entries maybe not) and from adds that timed out but were done
 * after all. With FLOW_LIST, the block's entries are listed and those no
 * state owns are deleted; an orphan the list does not show is already
 * gone. Without it, the orphans' deletes are sent again. An add running
 * meanwhile could own an entry that is not yet in @ips->owned, or be
 * given the handle of an orphan the block freed: then nothing is freed,
 * and the resync is tried again later (the block does not reuse a handle
 * soon after freeing it, which covers an add that starts after the check).
 *
 * Context: ctl_work, or probe before the netdev exists.
 * Return: 0, -EAGAIN when adds ran, or the mailbox error.
 */
int octep_ipsec_resync(struct octep_ipsec *ips)
{
	bool list = octep_ipsec_has(ips, OCTEP_SDP_FEAT_LIST);
	unsigned int nleak = 0, freed = 0, i, n;
	struct octep_ipsec_sa *sa, *tmp;
	int seq, err = 0;
	LIST_HEAD(todo);
	u32 *leak = NULL;

	seq = atomic_read(&ips->add_seq);
	if (atomic_read(&ips->adds_inflight))
		return -EAGAIN;
	clear_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
	spin_lock_bh(&ips->lock);
	list_for_each_entry(sa, &ips->orphans, node)
		sa->seen = false;
	spin_unlock_bh(&ips->lock);
	if (list) {
		err = octep_ipsec_list(ips, &leak, &nleak);
		if (err)
			goto out;
	}
	/* Pairs with the atomic_inc()s before an add's FLOW_ADD is sent. */
	smp_rmb();
	if (atomic_read(&ips->add_seq) != seq ||
	    atomic_read(&ips->adds_inflight)) {
		err = -EAGAIN;
		goto out;
	}

	spin_lock_bh(&ips->lock);
	list_splice_init(&ips->orphans, &todo);
	ips->n_orphans = 0;
	list_for_each_entry_safe(sa, tmp, &todo, node) {
		if (sa->replaced || (list && !sa->seen)) {
			list_del(&sa->node);
			octep_ipsec_forget(ips, sa);
			freed++;
		}
	}
	spin_unlock_bh(&ips->lock);

	/* The orphans the block still has: delete them again. */
	while (!list_empty(&todo)) {
		n = 0;
		list_for_each_entry_safe(sa, tmp, &todo, node) {
			if (n == OCTEP_SDP_MBOX_DEL_MANY_MAX)
				break;
			list_del_init(&sa->node);
			ips->batch[n++] = sa;
		}
		err = octep_ipsec_del_batch(ips, n, false, &freed);
		if (err) {
			spin_lock_bh(&ips->lock);
			list_for_each_entry_safe(sa, tmp, &todo, node) {
				list_del(&sa->node);
				octep_ipsec_orphan(ips, sa);
			}
			spin_unlock_bh(&ips->lock);
			goto out;
		}
	}
	/* Entries nobody owns. */
	for (i = 0; i < nleak; i += n) {
		n = min(nleak - i, (unsigned int)OCTEP_SDP_MBOX_DEL_MANY_MAX);
		freed += octep_ipsec_del_handles(ips, leak + i, n, &err);
		if (err)
			goto out;
	}
	atomic64_inc(&ips->resyncs);
	if (nleak)
		dev_info(ips->oct->dev,
			 "resync freed %u flow entries nobody owned\n", nleak);
out:
	if (err)
		set_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
	atomic64_add(freed, &ips->resync_freed);
	kfree(leak);
	return err;
}

/**
 * octep_ipsec_leaked() - a late FLOW_ADD left an entry behind
 * @mb: the mailbox
 *
 * Not once removal began; one that read dying just before it was set has
 * its work cancelled by octep_ipsec_fini() after the interrupt is freed.
 *
 * Context: the mailbox interrupt.
 */
void octep_ipsec_leaked(struct octep_mbox *mb)
{
	struct octep_ipsec *ips = container_of(mb, struct octep_ipsec, mbox);

	atomic64_inc(&ips->orphans_total);
	set_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
	if (!READ_ONCE(ips->dying))
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
}

/**
 * octep_ipsec_mbox_recover() - the mailbox reporter's recover: resync
 * @mb: the mailbox
 *
 * A timed-out request may have left an entry in the block, or lost a
 * delete. Not once removal began (dying is set under the lock before the
 * worker is cancelled).
 */
void octep_ipsec_mbox_recover(struct octep_mbox *mb)
{
	struct octep_ipsec *ips = container_of(mb, struct octep_ipsec, mbox);

	spin_lock_bh(&ips->lock);
	if (!ips->dying) {
		set_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	}
	spin_unlock_bh(&ips->lock);
}

/**
 * octep_ipsec_reports() - start or stop the mailbox's devlink reports
 * @oct: device
 * @on: see octep_mbox_reports()
 */
void octep_ipsec_reports(struct octep_dev *oct, bool on)
{
	struct octep_ipsec *ips = oct->ipsec;

	if (ips)
		octep_mbox_reports(&ips->mbox, on);
}

/* Send the ESN high halves advance_esn noted. */
static void octep_ipsec_esn_updates(struct octep_ipsec *ips)
{
	struct octep_ipsec_sa *sa;
	__le64 req[2];

	for (;;) {
		bool found = false;

		spin_lock_bh(&ips->lock);
		list_for_each_entry(sa, &ips->sas, node) {
			if (sa->esn_dirty) {
				sa->esn_dirty = false;
				req[0] = cpu_to_le64(sa->handle);
				req[1] = cpu_to_le64(sa->esn_hi);
				found = true;
				break;
			}
		}
		spin_unlock_bh(&ips->lock);
		if (!found)
			break;
		octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_UPDATE, req,
				sizeof(req), NULL, 0);
	}
}

/**
 * octep_ipsec_encap_stale() - has the block other NAT-T ports than the state
 * @sa: the state's entry
 * @x: the state
 *
 * A NAT's mapping moved: the key manager updated @x (xfrm_state_update()
 * copies the new encap into the offloaded state and tells no driver). The
 * first to see it queues FLOW_ENCAP for ctl_work; until the block has the
 * ports, a packet-offload state sends nothing (octep_ipsec_offload_ok()).
 * A torn read of the ports costs at most a FLOW_ENCAP that changes nothing.
 *
 * Context: any; takes ips->lock (under x->lock from update_stats).
 * Return: true while the block's ports are not @x's.
 */
bool octep_ipsec_encap_stale(struct octep_ipsec_sa *sa,
			     const struct xfrm_state *x)
{
	struct octep_ipsec *ips = sa->ips;
	bool queue;

	if (!sa->encap || !x->encap || !READ_ONCE(sa->handle))
		return false;
	if (READ_ONCE(x->encap->encap_sport) == READ_ONCE(sa->sport) &&
	    READ_ONCE(x->encap->encap_dport) == READ_ONCE(sa->dport))
		return false;
	/* Not once removal began: dying is set under the lock. */
	spin_lock_bh(&ips->lock);
	queue = !sa->encap_dirty && !ips->dying;
	sa->encap_dirty = true;
	if (queue)
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	spin_unlock_bh(&ips->lock);
	return true;
}

/**
 * octep_ipsec_update_send() - send one entry's update to the block
 * @ips: the offload
 * @cmd: OCTEP_SDP_MBOX_FLOW_*
 * @req: the request body, the handle word first
 * @len: its length
 * @err: set to the exchange's result
 *
 * The entry is looked up again by its handle after the exchange: its
 * state may have been freed meanwhile. octep_ipsec_update_done() ends.
 *
 * Context: ctl_work; returns with ips->lock held.
 * Return: the entry if it is still live, else NULL.
 */
struct octep_ipsec_sa *octep_ipsec_update_send(struct octep_ipsec *ips,
					       u8 cmd, const __le64 *req,
					       size_t len, int *err)
	__acquires(&ips->lock)
{
	struct octep_ipsec_sa *sa;

	*err = octep_mbox_call(&ips->mbox, cmd, req, len, NULL, 0);
	spin_lock_bh(&ips->lock);
	sa = xa_load(&ips->owned, (u32)le64_to_cpu(req[0]));
	return sa && sa->where == OCTEP_SA_LIVE ? sa : NULL;
}

/**
 * octep_ipsec_update_done() - after octep_ipsec_update_send()
 * @ips: the offload
 * @what: the update, for the warning
 * @handle: the entry's handle
 * @err: the exchange's result
 *
 * Context: ctl_work, under ips->lock, which it releases.
 * Return: @err, or 0 for an entry the block no longer has (ENOENT).
 */
int octep_ipsec_update_done(struct octep_ipsec *ips, const char *what,
			    u32 handle, int err)
	__releases(&ips->lock)
{
	spin_unlock_bh(&ips->lock);
	if (!err || err == -ENOENT)
		return 0;
	dev_warn(ips->oct->dev, "%s of flow %#x failed (%d): retried\n",
		 what, handle, err);
	return err;
}

/*
 * Send the NAT-T ports octep_ipsec_encap_stale() found moved. Return: 0
 * or the first failed exchange's error (the entry stays dirty, for
 * ctl_work's retry).
 */
static int octep_ipsec_encap_updates(struct octep_ipsec *ips)
{
	__be16 sport = 0, dport = 0;
	struct octep_ipsec_sa *sa;
	__le64 req[2];
	u32 handle;
	int err;

	for (;;) {
		handle = 0;
		spin_lock_bh(&ips->lock);
		list_for_each_entry(sa, &ips->sas, node) {
			if (sa->encap_dirty && sa->handle) {
				sa->encap_dirty = false;
				handle = sa->handle;
				sport = READ_ONCE(sa->x->encap->encap_sport);
				dport = READ_ONCE(sa->x->encap->encap_dport);
				break;
			}
		}
		spin_unlock_bh(&ips->lock);
		if (!handle)
			return 0;
		req[0] = cpu_to_le64(handle);
		req[1] = cpu_to_le64(FIELD_PREP(OCTEP_SDP_ENCAP_SPORT,
						(__force u16)sport) |
				     FIELD_PREP(OCTEP_SDP_ENCAP_DPORT,
						(__force u16)dport));
		sa = octep_ipsec_update_send(ips, OCTEP_SDP_MBOX_FLOW_ENCAP,
					     req, sizeof(req), &err);
		if (sa) {
			if (err) {
				sa->encap_dirty = true;
			} else {
				/* Read locklessly by encap_stale. */
				WRITE_ONCE(sa->sport, sport);
				WRITE_ONCE(sa->dport, dport);
			}
		}
		err = octep_ipsec_update_done(ips, "NAT-T port update", handle,
					      err);
		if (err)
			return err;
	}
}

/**
 * octep_ipsec_ctl_work() - the control worker, one per device
 * @work: ips->ctl_work
 *
 * Deletes the entries of freed states in batches, resyncs when something
 * leaked, sends ESN, NAT-T port and next hop updates. Nothing waits for
 * it (an add at most waits a bounded while for room): a mailbox that
 * times out delays only this worker, which then retries with a back-off.
 */
void octep_ipsec_ctl_work(struct work_struct *work)
{
	struct octep_ipsec *ips = container_of(to_delayed_work(work),
					       struct octep_ipsec, ctl_work);
	unsigned int ms;
	bool dying, want;
	int err;

	err = octep_ipsec_drain(ips);
	octep_ipsec_esn_updates(ips);
	if (octep_ipsec_encap_updates(ips) && !err)
		err = -EIO;
	if (octep_ipsec_nh_updates(ips) && !err)
		err = -EIO;
	spin_lock_bh(&ips->lock);
	dying = ips->dying;
	want = test_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags) || ips->n_orphans;
	spin_unlock_bh(&ips->lock);
	if (dying)
		return;
	if (!err && want)
		err = octep_ipsec_resync(ips);
	if (!err) {
		ips->ctl_fails = 0;
		return;
	}
	ms = err == -EAGAIN ? 100 :
	     min(OCTEP_IPSEC_RETRY_MS << min(ips->ctl_fails++, 4U),
		 OCTEP_IPSEC_RETRY_MAX_MS);
	queue_delayed_work(system_wq, &ips->ctl_work, msecs_to_jiffies(ms));
}

/**
 * octep_ipsec_advance_esn() - xdo_dev_state_advance_esn
 * @x: an inbound ESN state
 *
 * The block infers the high half of each sequence number from its own
 * window; it only needs telling when the host's window has moved into a
 * new 2^32, so only a change of the high half costs a FLOW_UPDATE.
 *
 * Context: under x->lock, for every packet the stack accepts.
 */
void octep_ipsec_advance_esn(struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa = (void *)x->xso.offload_handle;

	if (!sa || !sa->handle || sa->dir != XFRM_DEV_OFFLOAD_IN ||
	    !x->replay_esn)
		return;
	/* Written only here (serialized by x->lock) and before the add. */
	if (sa->esn_hi == x->replay_esn->seq_hi)
		return;
	spin_lock_bh(&sa->ips->lock);
	sa->esn_hi = x->replay_esn->seq_hi;
	sa->esn_dirty = true;
	spin_unlock_bh(&sa->ips->lock);
	mod_delayed_work(system_wq, &sa->ips->ctl_work, 0);
}
