// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the flow table. Entries are ESP security associations, one
 * table each way, each with a capacity (debugfs ipsec/capacity_in, _out).
 * The mailbox worker is the only writer (under table_lock); the engine
 * reads under RCU: inbound entries by SPI and outer destination, outbound
 * ones by the handle in the instruction.
 */
#include <crypto/aead.h>
#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/etherdevice.h>
#include <linux/jhash.h>
#include <linux/slab.h>

#include "octep_sim.h"
#include "ipsec.h"

static unsigned int osim_flow_alen(u8 family)
{
	return family == 4 ? 4 : 16;
}

static u32 osim_flow_hash(__be32 spi)
{
	return jhash_1word((__force u32)spi, 0);
}

/**
 * osim_flow_lookup_in() - the inbound entry for an ESP packet
 * @ips: IPsec state
 * @family: 4 or 6
 * @spi: the packet's SPI
 * @daddr: the packet's outer destination (4 or 16 bytes)
 *
 * Context: rcu_read_lock() held; the entry stays valid until it is dropped.
 * Return: the entry or NULL.
 */
struct osim_flow *osim_flow_lookup_in(struct osim_ipsec *ips, u8 family,
				      __be32 spi, const void *daddr)
{
	struct osim_flow *f;

	hash_for_each_possible_rcu(ips->in_hash, f, hnode,
				   osim_flow_hash(spi)) {
		if (f->spi == spi && f->family == family &&
		    !memcmp(f->daddr, daddr, osim_flow_alen(family)))
			return f;
	}
	return NULL;
}

/**
 * osim_flow_lookup_out() - the outbound entry an instruction names
 * @ips: IPsec state
 * @handle: OCTEP_SDP_TX_FLOW_HANDLE
 *
 * Context: rcu_read_lock() held.
 * Return: the entry or NULL.
 */
struct osim_flow *osim_flow_lookup_out(struct osim_ipsec *ips, u32 handle)
{
	struct osim_flow *f;

	if (!(handle & OSIM_FLOW_H_OUT))
		return NULL;
	f = xa_load(&ips->flows[OSIM_FLOW_OUT], handle & ~OSIM_FLOW_H_OUT);
	return f && f->handle == handle && !osim_hidden(ips, handle) ? f : NULL;
}

/**
 * osim_seq_infer() - the 64-bit sequence number an ESP header's low half means
 * @top: the highest sequence number seen (64 bits)
 * @lo: the low half from the packet
 * @win: the window below @top that still counts as current
 *
 * RFC 4303 appendix A2.1: the candidate nearest the window.
 * Return: the inferred sequence number.
 */
u64 osim_seq_infer(u64 top, u32 lo, u32 win)
{
	u32 th = upper_32_bits(top), tl = lower_32_bits(top);
	u32 bottom = tl - win + 1;

	if (!win)
		win = 1;
	if (tl >= win - 1) {
		/* The window lies within one 2^32 subspace. */
		if (lo >= bottom)
			return (u64)th << 32 | lo;
		return (u64)(th + 1) << 32 | lo;
	}
	/* The window spans the boundary from the subspace below. */
	if (lo >= bottom && th)
		return (u64)(th - 1) << 32 | lo;
	return (u64)th << 32 | lo;
}

/**
 * osim_replay_check() - may an inbound entry accept @seq
 * @f: inbound entry, f->lock held
 * @seq: the packet's sequence number (64 bits with ESN)
 *
 * Return: true if @seq is new and within the window.
 */
bool osim_replay_check(const struct osim_flow *f, u64 seq)
{
	if (!seq)
		return false;
	if (!f->window || seq > f->seq)
		return true;
	if (f->seq - seq >= f->window)
		return false;
	return !test_bit(seq % f->wbits, f->bitmap);
}

/**
 * osim_replay_advance() - note @seq as accepted
 * @f: inbound entry, f->lock held
 * @seq: a sequence number osim_replay_check() accepted
 */
void osim_replay_advance(struct osim_flow *f, u64 seq)
{
	u64 s;

	if (seq > f->seq) {
		if (f->window) {
			if (seq - f->seq >= f->wbits)
				bitmap_zero(f->bitmap, f->wbits);
			else
				for (s = f->seq + 1; s < seq; s++)
					clear_bit(s % f->wbits, f->bitmap);
		}
		f->seq = seq;
	}
	if (f->window)
		set_bit(seq % f->wbits, f->bitmap);
}

static void osim_flow_free(struct osim_flow *f)
{
	if (!IS_ERR_OR_NULL(f->aead))
		crypto_free_aead(f->aead);
	bitmap_free(f->bitmap);
	kfree_sensitive(f);
}

/*
 * Only an outbound packet-offload tunnel entry has its frames addressed
 * by the host: the block builds their whole header. Others take NONE.
 */
static int osim_flow_l2_check(const struct octep_sdp_mbox_flow *r,
			      const struct octep_sdp_mbox_flow_l2 *l2)
{
	if (l2->rsvd || l2->rsvd2[0] || l2->rsvd2[1])
		return -EINVAL;
	switch (l2->state) {
	case OCTEP_SDP_FLOW_L2_NONE:
		return 0;
	case OCTEP_SDP_FLOW_L2_SET:
		if (!is_valid_ether_addr(l2->h_dest) ||
		    !is_valid_ether_addr(l2->h_source))
			return -EINVAL;
		fallthrough;
	case OCTEP_SDP_FLOW_L2_HOLD:
		if (r->dir != OCTEP_SDP_FLOW_DIR_OUT ||
		    r->type != OCTEP_SDP_FLOW_TYPE_PACKET ||
		    r->mode != OCTEP_SDP_FLOW_MODE_TUNNEL)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

static int osim_flow_check(const struct octep_sdp_mbox_flow *r)
{
	if (r->dir != OCTEP_SDP_FLOW_DIR_IN && r->dir != OCTEP_SDP_FLOW_DIR_OUT)
		return -EINVAL;
	if (r->family != 4 && r->family != 6)
		return -EINVAL;
	if (r->mode != OCTEP_SDP_FLOW_MODE_TRANSPORT &&
	    r->mode != OCTEP_SDP_FLOW_MODE_TUNNEL)
		return -EINVAL;
	if (r->type != OCTEP_SDP_FLOW_TYPE_CRYPTO &&
	    r->type != OCTEP_SDP_FLOW_TYPE_PACKET)
		return -EINVAL;
	if (r->alg != OCTEP_SDP_FLOW_ALG_RFC4106 ||
	    (r->key_len != 16 && r->key_len != 32) ||
	    r->icv_len != OSIM_ICV_LEN)
		return -EINVAL;
	if (r->flags & ~OCTEP_SDP_FLOW_F_ESN)
		return -EINVAL;
	if (le32_to_cpu(r->replay_window) > OCTEP_SDP_FLOW_MAX_REPLAY)
		return -EINVAL;
	switch (le32_to_cpu(r->inner_family)) {
	case 0:
	case 4:
	case 6:
		break;
	default:
		return -EINVAL;
	}
	if (r->rsvd2[0] || r->rsvd2[1] || r->rsvd2[2])
		return -EINVAL;
	switch (r->encap) {
	case OCTEP_SDP_FLOW_ENCAP_NONE:
		break;
	case OCTEP_SDP_FLOW_ENCAP_ESPINUDP:
		/* RFC 3948's zero checksum is IPv4's alone. */
		if (r->family != 4 || !r->encap_sport || !r->encap_dport)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return osim_flow_l2_check(r, &r->l2);
}

/*
 * ips->natt_ports: how many inbound ESPINUDP entries take UDP to @port.
 * The engine looks a datagram's port up there before it looks for ESP.
 */
static int osim_natt_port_get(struct osim_ipsec *ips, __be16 port)
{
	void *v;

	lockdep_assert_held(&ips->table_lock);
	v = xa_load(&ips->natt_ports, (__force u16)port);
	v = xa_mk_value(v ? xa_to_value(v) + 1 : 1);
	return xa_err(xa_store(&ips->natt_ports, (__force u16)port, v,
			       GFP_KERNEL));
}

static void osim_natt_port_put(struct osim_ipsec *ips, __be16 port)
{
	unsigned long n;
	void *v;

	lockdep_assert_held(&ips->table_lock);
	v = xa_load(&ips->natt_ports, (__force u16)port);
	n = v ? xa_to_value(v) : 0;
	if (n <= 1)
		xa_erase(&ips->natt_ports, (__force u16)port);
	else
		/* Replaces an existing slot: no allocation. */
		xa_store(&ips->natt_ports, (__force u16)port,
			 xa_mk_value(n - 1), GFP_ATOMIC);
}

static int osim_flow_add(struct osim_ipsec *ips,
			 const struct octep_sdp_mbox_flow *r, u32 *handle)
{
	int d = r->dir == OCTEP_SDP_FLOW_DIR_OUT ? OSIM_FLOW_OUT : OSIM_FLOW_IN;
	u8 key[32 + 4];
	struct osim_flow *f;
	u32 id;
	int status;
	int err;

	status = osim_flow_check(r);
	if (status)
		return status;
	/* Pairs with debugfs writes of "features". */
	if (r->encap && !(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_NATT))
		return -EOPNOTSUPP;
	if (r->l2.state && !(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_L2))
		return -EOPNOTSUPP;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->lock);
	f->dir = d;
	f->family = r->family;
	f->mode = r->mode;
	f->type = r->type;
	f->inner_family = le32_to_cpu(r->inner_family);
	f->reqid = le32_to_cpu(r->reqid);
	f->esn = r->flags & OCTEP_SDP_FLOW_F_ESN;
	f->encap = r->encap;
	f->sport = r->encap_sport;
	f->dport = r->encap_dport;
	f->l2 = r->l2.state;
	ether_addr_copy(f->h_source, r->l2.h_source);
	ether_addr_copy(f->h_dest, r->l2.h_dest);
	f->spi = r->spi;
	memcpy(f->salt, r->salt, sizeof(f->salt));
	memcpy(f->saddr, r->saddr, sizeof(f->saddr));
	memcpy(f->daddr, r->daddr, sizeof(f->daddr));
	f->hard_packets = le64_to_cpu(r->hard_packets);
	f->hard_bytes = le64_to_cpu(r->hard_bytes);
	f->seq = (u64)le32_to_cpu(r->seq_hi) << 32 | le32_to_cpu(r->seq_lo);
	if (!f->esn)
		f->seq = lower_32_bits(f->seq);
	if (d == OSIM_FLOW_IN) {
		f->window = le32_to_cpu(r->replay_window);
		if (f->window) {
			f->wbits = round_up(f->window, BITS_PER_LONG);
			f->bitmap = bitmap_zalloc(f->wbits, GFP_KERNEL);
			if (!f->bitmap) {
				status = -ENOMEM;
				goto err_free;
			}
		}
	}

	/*
	 * A synchronous implementation: the engine runs the cipher inline,
	 * in whatever context it moves packets in.
	 */
	f->aead = crypto_alloc_aead("rfc4106(gcm(aes))", 0, CRYPTO_ALG_ASYNC);
	if (IS_ERR(f->aead)) {
		status = -EOPNOTSUPP;
		goto err_free;
	}
	memcpy(key, r->key, r->key_len);
	memcpy(key + r->key_len, r->salt, 4);
	err = crypto_aead_setkey(f->aead, key, r->key_len + 4);
	memzero_explicit(key, sizeof(key));
	if (!err)
		err = crypto_aead_setauthsize(f->aead, OSIM_ICV_LEN);
	if (err) {
		status = -EINVAL;
		goto err_free;
	}

	mutex_lock(&ips->table_lock);
	if (ips->used[d] >= READ_ONCE(ips->cap[d])) {
		status = -ENOSPC;
		goto err_unlock;
	}
	if (d == OSIM_FLOW_IN &&
	    osim_flow_lookup_in(ips, f->family, f->spi, f->daddr)) {
		status = -EEXIST;
		goto err_unlock;
	}
	/*
	 * Cyclic, as a block with a handle generation would: a handle just
	 * freed is not given out again soon, so a host that retries the
	 * delete of an entry that is gone (its response was lost) does not
	 * hit a newer one.
	 */
	if (d == OSIM_FLOW_IN && f->encap &&
	    osim_natt_port_get(ips, f->dport)) {
		status = -ENOMEM;
		goto err_unlock;
	}
	err = xa_alloc_cyclic(&ips->flows[d], &id, f,
			      XA_LIMIT(1, OSIM_FLOW_CAP_MAX), &ips->next_id[d],
			      GFP_KERNEL);
	if (err < 0) {
		if (d == OSIM_FLOW_IN && f->encap)
			osim_natt_port_put(ips, f->dport);
		status = err == -EBUSY ? -ENOSPC : -ENOMEM;
		goto err_unlock;
	}
	f->handle = id | (d == OSIM_FLOW_OUT ? OSIM_FLOW_H_OUT : 0);
	if (d == OSIM_FLOW_IN)
		hash_add_rcu(ips->in_hash, &f->hnode, osim_flow_hash(f->spi));
	else if (f->type == OCTEP_SDP_FLOW_TYPE_PACKET)
		osim_pol_link_out(ips, f);
	/* Read locklessly by osim_ipsec_rx() (a look or not). */
	WRITE_ONCE(ips->used[d], ips->used[d] + 1);
	mutex_unlock(&ips->table_lock);
	*handle = f->handle;
	return 0;

err_unlock:
	mutex_unlock(&ips->table_lock);
err_free:
	osim_flow_free(f);
	return status;
}

static struct osim_flow *osim_flow_get(struct osim_ipsec *ips, u32 handle)
{
	int d = handle & OSIM_FLOW_H_OUT ? OSIM_FLOW_OUT : OSIM_FLOW_IN;
	struct osim_flow *f;

	lockdep_assert_held(&ips->table_lock);
	f = xa_load(&ips->flows[d], handle & ~OSIM_FLOW_H_OUT);
	return f && f->handle == handle ? f : NULL;
}

/* Unlink @f; the caller frees it after a grace period. */
static void osim_flow_unlink(struct osim_ipsec *ips, struct osim_flow *f)
{
	lockdep_assert_held(&ips->table_lock);
	xa_erase(&ips->flows[f->dir], f->handle & ~OSIM_FLOW_H_OUT);
	if (f->dir == OSIM_FLOW_IN && f->encap)
		osim_natt_port_put(ips, f->dport);
	if (f->dir == OSIM_FLOW_IN)
		hash_del_rcu(&f->hnode);
	else if (f->type == OCTEP_SDP_FLOW_TYPE_PACKET)
		osim_pol_unlink_out(ips, f);
	WRITE_ONCE(ips->used[f->dir], ips->used[f->dir] - 1);
}

static int osim_flow_del(struct osim_ipsec *ips, u32 handle)
{
	struct osim_flow *f = NULL;
	struct osim_pol *pol;

	if (handle & OCTEP_SDP_POL_H) {
		mutex_lock(&ips->table_lock);
		pol = osim_pol_unlink(ips, handle);
		mutex_unlock(&ips->table_lock);
		if (!pol)
			return -ENOENT;
		synchronize_rcu();
		osim_pol_free(pol);
		return 0;
	}
	mutex_lock(&ips->table_lock);
	f = osim_flow_get(ips, handle);
	if (f)
		osim_flow_unlink(ips, f);
	mutex_unlock(&ips->table_lock);
	if (!f)
		return -ENOENT;
	/* The engine may be inside the entry: wait it out. */
	synchronize_rcu();
	osim_flow_free(f);
	return 0;
}

/* FLOW_DEL_MANY: one grace period for the whole batch. */
static int osim_flow_del_many(struct osim_ipsec *ips, const __le64 *req,
			      unsigned int req_words, __le64 *resp)
{
	u64 n = le64_to_cpu(req[0]), missing = 0;
	struct osim_pol *pol, *ptmp;
	struct osim_flow *f, *tmp;
	LIST_HEAD(dead_pols);
	LIST_HEAD(dead);
	unsigned int i;
	u32 handle;

	if (!n || n > OCTEP_SDP_MBOX_DEL_MANY_MAX ||
	    req_words < 1 + DIV_ROUND_UP(n, 2))
		return -EINVAL;
	mutex_lock(&ips->table_lock);
	for (i = 0; i < n; i++) {
		handle = (u32)(le64_to_cpu(req[1 + i / 2]) >> (i % 2 * 32));
		if (handle & OCTEP_SDP_POL_H) {
			pol = osim_pol_unlink(ips, handle);
			if (pol)
				list_add(&pol->dead, &dead_pols);
			else
				missing |= BIT_ULL(i);
			continue;
		}
		f = osim_flow_get(ips, handle);
		if (!f) {
			missing |= BIT_ULL(i);
			continue;
		}
		osim_flow_unlink(ips, f);
		list_add(&f->dead, &dead);
	}
	mutex_unlock(&ips->table_lock);
	if (!list_empty(&dead) || !list_empty(&dead_pols))
		synchronize_rcu();
	list_for_each_entry_safe(f, tmp, &dead, dead)
		osim_flow_free(f);
	list_for_each_entry_safe(pol, ptmp, &dead_pols, dead)
		osim_pol_free(pol);
	resp[0] = cpu_to_le64(missing);
	return 0;
}

/*
 * FLOW_LIST: the cursor is the next handle to look at. Handles sort into
 * four spaces by their top two bits (inbound entries, inbound policies,
 * outbound entries, outbound policies), each an xarray by index.
 */
static struct xarray *osim_space(struct osim_ipsec *ips, unsigned int s)
{
	return s & 1 ? &ips->pols[s >> 1] : &ips->flows[s >> 1];
}

/*
 * The end of a walk under table_lock (FLOW_LIST, FLOW_STATS_MANY): the
 * response's cursor @next and count @n ahead of the @words of what it
 * found.
 */
static int osim_walk_end(struct osim_ipsec *ips, u64 next, u32 n,
			 unsigned int words, __le64 *resp,
			 unsigned int *resp_words)
{
	mutex_unlock(&ips->table_lock);
	resp[0] = cpu_to_le64(next);
	resp[1] = cpu_to_le64(n);
	*resp_words = 2 + words;
	return 0;
}

static int osim_flow_list(struct osim_ipsec *ips, u64 cursor, __le64 *resp,
			  unsigned int *resp_words)
{
	u32 cur = (u32)cursor, n = 0;
	u64 next = OCTEP_SDP_MBOX_LIST_DONE;
	unsigned long idx;
	unsigned int s;
	void *entry;

	memset(resp, 0, (2 + OCTEP_SDP_MBOX_LIST_MAX / 2) * 8);
	mutex_lock(&ips->table_lock);
	for (s = cur >> 30; s < 4; s++) {
		idx = s == cur >> 30 ? cur & (OCTEP_SDP_POL_H - 1) : 0;
		xa_for_each_start(osim_space(ips, s), idx, entry, idx) {
			u32 h = (u32)s << 30 | (u32)idx;

			if (n == OCTEP_SDP_MBOX_LIST_MAX) {
				next = h;
				goto out;
			}
			resp[2 + n / 2] |= cpu_to_le64((u64)h << (n % 2 * 32));
			n++;
		}
	}
out:
	return osim_walk_end(ips, next, n, DIV_ROUND_UP(n, 2), resp,
			     resp_words);
}

static int osim_flow_stats(struct osim_ipsec *ips, u32 handle,
			   struct octep_sdp_mbox_flow_stats *st)
{
	struct osim_flow *f;

	mutex_lock(&ips->table_lock);
	f = osim_flow_get(ips, handle);
	if (f) {
		spin_lock_bh(&f->lock);
		st->packets = cpu_to_le64(f->packets);
		st->bytes = cpu_to_le64(f->bytes);
		st->seq = cpu_to_le64(f->seq);
		st->bad_icv = cpu_to_le64(f->bad_icv);
		st->replay = cpu_to_le64(f->replay);
		spin_unlock_bh(&f->lock);
	}
	mutex_unlock(&ips->table_lock);
	return f ? 0 : ENOENT;
}

/*
 * The next entry of way @d at or after index *@idx that FLOW_STATS_MANY
 * reports: any packet-offload entry with @all, else one marked changed.
 * Marks that name no such entry (left by an entry deleted, or a crypto
 * one) are cleared on the way.
 */
static struct osim_flow *osim_flow_next_changed(struct osim_ipsec *ips,
						int d, unsigned long *idx,
						bool all)
{
	struct osim_flow *f;

	lockdep_assert_held(&ips->table_lock);
	for (;; (*idx)++) {
		if (all) {
			f = xa_find(&ips->flows[d], idx, OSIM_FLOW_CAP_MAX,
				    XA_PRESENT);
			if (!f)
				return NULL;
		} else {
			*idx = find_next_bit(ips->changed[d],
					     OSIM_FLOW_CAP_MAX + 1, *idx);
			if (*idx > OSIM_FLOW_CAP_MAX)
				return NULL;
			f = xa_load(&ips->flows[d], *idx);
		}
		if (f && f->type == OCTEP_SDP_FLOW_TYPE_PACKET)
			return f;
		if (!all)
			clear_bit(*idx, ips->changed[d]);
	}
}

/*
 * FLOW_STATS_MANY: the cursor is the next handle to look at, inbound
 * entries first (bit 31 clear), then outbound ones. Each entry reported
 * has its mark cleared before its counters are read (osim_flow_changed()).
 */
static int osim_flow_stats_many(struct osim_ipsec *ips, u64 cursor,
				u64 flags, __le64 *resp,
				unsigned int *resp_words)
{
	struct octep_sdp_mbox_stats_rec *rec = (void *)&resp[2];
	bool all = flags & OCTEP_SDP_STATS_ALL;
	u64 next = OCTEP_SDP_MBOX_LIST_DONE;
	u32 cur = (u32)cursor, n = 0;
	struct osim_flow *f;
	unsigned long idx;
	int d;

	if (flags & ~OCTEP_SDP_STATS_ALL)
		return -EINVAL;
	mutex_lock(&ips->table_lock);
	for (d = cur >> 31; d < 2; d++) {
		idx = d == cur >> 31 ? cur & ~OSIM_FLOW_H_OUT : 0;
		for (; (f = osim_flow_next_changed(ips, d, &idx, all)); idx++) {
			if (n == OCTEP_SDP_MBOX_STATS_MANY_MAX) {
				next = f->handle;
				goto out;
			}
			/* Before f->lock: see osim_flow_changed(). */
			clear_bit(idx, ips->changed[d]);
			spin_lock_bh(&f->lock);
			rec[n].handle = cpu_to_le64(f->handle);
			rec[n].packets = cpu_to_le64(f->packets);
			rec[n].bytes = cpu_to_le64(f->bytes);
			rec[n].seq = cpu_to_le64(f->seq);
			spin_unlock_bh(&f->lock);
			n++;
		}
	}
out:
	return osim_walk_end(ips, next, n, n * sizeof(*rec) / 8, resp,
			     resp_words);
}

static int osim_flow_update(struct osim_ipsec *ips, u32 handle, u32 seq_hi)
{
	struct osim_flow *f;
	int status = 0;

	mutex_lock(&ips->table_lock);
	f = osim_flow_get(ips, handle);
	if (!f) {
		status = -ENOENT;
	} else if (f->dir != OSIM_FLOW_IN || !f->esn) {
		status = -EINVAL;
	} else {
		spin_lock_bh(&f->lock);
		/* Only forward: the host saw the window move on. */
		if (upper_32_bits(f->seq) < seq_hi) {
			f->seq = (u64)seq_hi << 32;
			if (f->window)
				bitmap_zero(f->bitmap, f->wbits);
			osim_flow_changed(ips, f);
		}
		spin_unlock_bh(&f->lock);
	}
	mutex_unlock(&ips->table_lock);
	return status;
}

/*
 * FLOW_ENCAP: an ESPINUDP entry's ports move (the host followed a NAT's
 * new mapping). Outbound frames after the answer carry the new ones.
 */
static int osim_flow_encap(struct osim_ipsec *ips, u32 handle, u64 ports)
{
	__be16 sport = (__force __be16)FIELD_GET(OCTEP_SDP_ENCAP_SPORT, ports);
	__be16 dport = (__force __be16)FIELD_GET(OCTEP_SDP_ENCAP_DPORT, ports);
	struct osim_flow *f;
	int status = 0;

	if (!sport || !dport || (ports & ~(OCTEP_SDP_ENCAP_SPORT |
					   OCTEP_SDP_ENCAP_DPORT)))
		return -EINVAL;
	mutex_lock(&ips->table_lock);
	f = osim_flow_get(ips, handle);
	if (!f) {
		status = -ENOENT;
	} else if (!f->encap) {
		status = -EINVAL;
	} else {
		if (f->dir == OSIM_FLOW_IN && f->dport != dport) {
			status = osim_natt_port_get(ips, dport);
			if (!status)
				osim_natt_port_put(ips, f->dport);
		}
		if (!status) {
			spin_lock_bh(&f->lock);
			f->sport = sport;
			/* Read locklessly by the inbound path. */
			WRITE_ONCE(f->dport, dport);
			spin_unlock_bh(&f->lock);
		}
	}
	mutex_unlock(&ips->table_lock);
	return status;
}

/*
 * FLOW_L2: an outbound tunnel entry's next hop or source MAC changed, or
 * it gained or lost its next hop. Frames after the answer use the new.
 */
static int osim_flow_l2(struct osim_ipsec *ips, u32 handle,
			const struct octep_sdp_mbox_flow_l2 *l2)
{
	struct octep_sdp_mbox_flow r = {};
	struct osim_flow *f;
	int status;

	mutex_lock(&ips->table_lock);
	f = osim_flow_get(ips, handle);
	if (!f) {
		status = -ENOENT;
		goto out;
	}
	r.dir = f->dir == OSIM_FLOW_OUT ? OCTEP_SDP_FLOW_DIR_OUT :
					 OCTEP_SDP_FLOW_DIR_IN;
	r.type = f->type;
	r.mode = f->mode;
	status = osim_flow_l2_check(&r, l2);
	if (!status) {
		spin_lock_bh(&f->lock);
		f->l2 = l2->state;
		ether_addr_copy(f->h_source, l2->h_source);
		ether_addr_copy(f->h_dest, l2->h_dest);
		spin_unlock_bh(&f->lock);
	}
out:
	mutex_unlock(&ips->table_lock);
	return status;
}

/**
 * osim_flow_cmd() - answer one mailbox request
 * @ips: IPsec state
 * @cmd: enum octep_sdp_mbox_cmd
 * @req: request body
 * @req_words: its length in words
 * @resp: response body after the status word
 * @resp_words: set to the response body's length in words
 *
 * Context: process (the mailbox worker); may sleep.
 * Return: 0 or a negative errno (the status word is its magnitude).
 */
int osim_flow_cmd(struct osim_ipsec *ips, u8 cmd, const __le64 *req,
		  unsigned int req_words, __le64 *resp,
		  unsigned int *resp_words)
{
	struct octep_sdp_mbox_flow_stats st = {};
	struct octep_sdp_mbox_info info = {};
	struct octep_sdp_mbox_flow_l2 l2;
	struct octep_sdp_mbox_flow fl;
	u32 handle;
	int status;

	*resp_words = 0;
	switch (cmd) {
	case OCTEP_SDP_MBOX_GET_INFO:
		info.version = cpu_to_le32(OCTEP_SDP_MBOX_VERSION_VAL);
		/* Pairs with debugfs writes of "features": any value goes. */
		info.features = cpu_to_le32(READ_ONCE(ips->features));
		mutex_lock(&ips->table_lock);
		info.cap_in = cpu_to_le32(ips->cap[OSIM_FLOW_IN]);
		info.cap_out = cpu_to_le32(ips->cap[OSIM_FLOW_OUT]);
		info.used_in = cpu_to_le32(ips->used[OSIM_FLOW_IN]);
		info.used_out = cpu_to_le32(ips->used[OSIM_FLOW_OUT]);
		mutex_unlock(&ips->table_lock);
		memcpy(resp, &info, sizeof(info));
		*resp_words = DIV_ROUND_UP(sizeof(info), 8);
		return 0;
	case OCTEP_SDP_MBOX_FLOW_ADD:
		/* A host without OCTEP_SDP_FEAT_NATT sends the shorter body. */
		if (req_words * 8 < OCTEP_SDP_MBOX_FLOW_V1_LEN)
			return -EINVAL;
		memset(&fl, 0, sizeof(fl));
		memcpy(&fl, req, min_t(size_t, req_words * 8, sizeof(fl)));
		status = osim_flow_add(ips, &fl, &handle);
		memzero_explicit(&fl, sizeof(fl));
		if (status)
			return status;
		resp[0] = cpu_to_le64(handle);
		*resp_words = 1;
		return 0;
	case OCTEP_SDP_MBOX_FLOW_DEL:
		if (req_words < 1)
			return -EINVAL;
		return osim_flow_del(ips, (u32)le64_to_cpu(req[0]));
	case OCTEP_SDP_MBOX_FLOW_DEL_MANY:
		if (req_words < 1)
			return -EINVAL;
		status = osim_flow_del_many(ips, req, req_words, resp);
		if (!status)
			*resp_words = 1;
		return status;
	case OCTEP_SDP_MBOX_FLOW_LIST:
		if (req_words < 1)
			return -EINVAL;
		return osim_flow_list(ips, le64_to_cpu(req[0]), resp,
				      resp_words);
	case OCTEP_SDP_MBOX_FLOW_STATS:
		if (req_words < 1)
			return -EINVAL;
		status = osim_flow_stats(ips, (u32)le64_to_cpu(req[0]), &st);
		if (status)
			return status;
		memcpy(resp, &st, sizeof(st));
		*resp_words = sizeof(st) / 8;
		return 0;
	case OCTEP_SDP_MBOX_FLOW_STATS_MANY:
		if (!(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_STATS_MANY))
			return -EOPNOTSUPP;
		if (req_words < 1)
			return -EINVAL;
		return osim_flow_stats_many(ips, le64_to_cpu(req[0]),
					    req_words > 1 ?
					    le64_to_cpu(req[1]) : 0,
					    resp, resp_words);
	case OCTEP_SDP_MBOX_FLOW_UPDATE:
		if (req_words < 2)
			return -EINVAL;
		return osim_flow_update(ips, (u32)le64_to_cpu(req[0]),
					(u32)le64_to_cpu(req[1]));
	case OCTEP_SDP_MBOX_FLOW_ENCAP:
		if (!(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_NATT))
			return -EOPNOTSUPP;
		if (req_words < 2)
			return -EINVAL;
		return osim_flow_encap(ips, (u32)le64_to_cpu(req[0]),
				       le64_to_cpu(req[1]));
	case OCTEP_SDP_MBOX_FLOW_L2:
		if (!(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_L2))
			return -EOPNOTSUPP;
		if (req_words * 8 < 8 + sizeof(l2))
			return -EINVAL;
		memcpy(&l2, &req[1], sizeof(l2));
		return osim_flow_l2(ips, (u32)le64_to_cpu(req[0]), &l2);
	case OCTEP_SDP_MBOX_POLICY_ADD:
		if (!(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_POLICY))
			return -EOPNOTSUPP;
		status = osim_pol_add(ips, req, req_words, &handle);
		if (status)
			return status;
		resp[0] = cpu_to_le64(handle);
		*resp_words = 1;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * osim_flow_table_init() - empty tables of the default capacity
 * @ips: IPsec state
 */
void osim_flow_table_init(struct osim_ipsec *ips)
{
	mutex_init(&ips->table_lock);
	xa_init_flags(&ips->flows[OSIM_FLOW_IN], XA_FLAGS_ALLOC1);
	xa_init_flags(&ips->flows[OSIM_FLOW_OUT], XA_FLAGS_ALLOC1);
	hash_init(ips->in_hash);
	xa_init(&ips->natt_ports);
	osim_pol_init(ips);
	ips->cap[OSIM_FLOW_IN] = OSIM_FLOW_CAP_DEF;
	ips->cap[OSIM_FLOW_OUT] = OSIM_FLOW_CAP_DEF;
}

/**
 * osim_flow_table_fini() - drop every entry
 * @ips: IPsec state; the engine and the mailbox no longer run
 */
void osim_flow_table_fini(struct osim_ipsec *ips)
{
	struct osim_pol *pol, *ptmp;
	struct osim_flow *f, *tmp;
	LIST_HEAD(dead_pols);
	unsigned long i;
	LIST_HEAD(dead);
	int d;

	mutex_lock(&ips->table_lock);
	for (d = 0; d < 2; d++) {
		xa_for_each(&ips->flows[d], i, f) {
			osim_flow_unlink(ips, f);
			list_add(&f->dead, &dead);
		}
		xa_destroy(&ips->flows[d]);
		xa_for_each(&ips->pols[d], i, pol) {
			osim_pol_unlink(ips, pol->handle);
			list_add(&pol->dead, &dead_pols);
		}
		xa_destroy(&ips->pols[d]);
	}
	xa_destroy(&ips->natt_ports);
	mutex_unlock(&ips->table_lock);
	synchronize_rcu();
	list_for_each_entry_safe(f, tmp, &dead, dead)
		osim_flow_free(f);
	list_for_each_entry_safe(pol, ptmp, &dead_pols, dead)
		osim_pol_free(pol);
}
