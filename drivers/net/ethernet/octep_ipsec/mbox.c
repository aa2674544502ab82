// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: the control mailbox, host side (octep_sdp.h,
 * "Control mailbox"). A request is written into the H2C queue and H2C_PROD
 * rung; the caller sleeps until the interrupt handler finds the response
 * with the request's id in C2H, or until the timeout. A response that
 * comes after its caller gave up matches nothing and is counted (stray).
 */
#include <linux/bitfield.h>
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/workqueue.h>
#include <net/devlink.h>

#include "octep_ipsec.h"
#include "octep_trace.h"
#include "ipsec.h"

struct octep_mbox_req {
	struct list_head node;
	u32 id;
	u8 cmd;
	struct completion done;
	unsigned int words;
	__le64 resp[OCTEP_SDP_MBOX_MAX_BODY];
};

/*
 * Under mb->lock: a response nobody waits for (its caller timed out and
 * took its request off @pending). A FLOW_ADD that succeeded after all left
 * an entry in the block that no state owns: the owner is told, and its
 * resync with the block frees it. Only the owner's flag is set here: the
 * interrupt handler cannot send requests.
 */
static void octep_mbox_stray(struct octep_mbox *mb, u64 hdr,
			     unsigned int size)
{
	u32 slot = mb->c2h_cons + 1;
	u64 status;

	if (FIELD_GET(OCTEP_SDP_MBOX_HDR_CMD, hdr) != OCTEP_SDP_MBOX_FLOW_ADD ||
	    size < 2)
		return;
	status = octep_rd64(mb->oct, OCTEP_SDP_MBOX_C2H_Q +
			    (slot % mb->c2h_size) * 8);
	if (!status && mb->leaked)
		mb->leaked(mb);
}

/*
 * Under mb->lock: H2C_CONS (a 32-bit index) read all ones: the device is
 * off the bus (a surprise removal, an AER error). Nothing would answer a
 * request, so none waits its timeout: the caller fails at once.
 */
static bool octep_mbox_gone(struct octep_mbox *mb, u64 cons)
{
	if (cons != U64_MAX)
		return false;
	WRITE_ONCE(mb->down, true);
	if (!mb->gone) {
		mb->gone = true;
		dev_warn(mb->oct->dev, "mailbox reads all ones: the device is gone, no request is sent\n");
	}
	return true;
}

/* Under mb->lock: take every response in C2H. */
static void octep_mbox_drain(struct octep_mbox *mb)
{
	struct octep_dev *oct = mb->oct;
	struct octep_mbox_req *r;
	unsigned int size, i;
	u32 prod, id;
	bool found;
	u64 hdr;

	prod = (u32)octep_rd64(oct, OCTEP_SDP_MBOX_C2H_PROD);
	while (mb->c2h_cons != prod) {
		u32 avail = prod - mb->c2h_cons;

		hdr = octep_rd64(oct, OCTEP_SDP_MBOX_C2H_Q +
				 (mb->c2h_cons % mb->c2h_size) * 8);
		size = FIELD_GET(OCTEP_SDP_MBOX_HDR_SIZE, hdr);
		if (avail > mb->c2h_size || 1 + size > avail ||
		    size > OCTEP_SDP_MBOX_MAX_BODY) {
			/* Out of step with the block: skip what is there. */
			atomic64_inc(&mb->stray);
			mb->c2h_cons = prod;
			break;
		}
		id = FIELD_GET(OCTEP_SDP_MBOX_HDR_ID, hdr);
		found = false;
		list_for_each_entry(r, &mb->pending, node) {
			/*
			 * Ids are never reused within 2^32 requests and a
			 * timed-out request leaves @pending at once, so a late
			 * response cannot match a later request; the command
			 * must agree too, in case the block is confused.
			 */
			if (r->id != id ||
			    FIELD_GET(OCTEP_SDP_MBOX_HDR_CMD, hdr) != r->cmd ||
			    !(FIELD_GET(OCTEP_SDP_MBOX_HDR_FLAGS, hdr) &
			      OCTEP_SDP_MBOX_F_RESPONSE))
				continue;
			for (i = 0; i < size; i++) {
				u32 slot = (mb->c2h_cons + 1 + i) % mb->c2h_size;
				u64 w = octep_rd64(oct, OCTEP_SDP_MBOX_C2H_Q +
						   slot * 8);

				r->resp[i] = cpu_to_le64(w);
			}
			r->words = size;
			list_del_init(&r->node);
			complete(&r->done);
			found = true;
			break;
		}
		if (!found) {
			atomic64_inc(&mb->stray);
			octep_mbox_stray(mb, hdr, size);
		}
		mb->c2h_cons += 1 + size;
	}
	octep_wr64(oct, OCTEP_SDP_MBOX_C2H_CONS, mb->c2h_cons);
}

static irqreturn_t octep_mbox_irq(int irq, void *data)
{
	struct octep_mbox *mb = data;
	unsigned long flags;

	spin_lock_irqsave(&mb->lock, flags);
	octep_mbox_drain(mb);
	spin_unlock_irqrestore(&mb->lock, flags);
	return IRQ_HANDLED;
}

/**
 * octep_mbox_call() - send a request and wait for its response
 * @mb: mailbox
 * @cmd: enum octep_sdp_mbox_cmd
 * @req: request body (a multiple of 8 bytes is sent; the tail zero-padded)
 * @req_len: its length in bytes
 * @resp: response body after the status word, or NULL
 * @resp_len: bytes of it wanted
 *
 * Requests of several callers may be outstanding at once (each waits for
 * the response with its own id); one device's mailbox never waits for
 * another's. A request that times out is reclaimed: it leaves the pending
 * list, so its response, if it ever comes, is counted as stray (and a
 * FLOW_ADD's entry reported through @mb->leaked).
 *
 * Context: process; sleeps up to OCTEP_MBOX_TIMEOUT_MS.
 * Return: 0; -ETIMEDOUT when no response came; -EBUSY when the queue is
 * full; -ENODEV when the mailbox is not ready or the device reads all ones
 * (gone); or minus the status the coprocessor answered with.
 */
int octep_mbox_call(struct octep_mbox *mb, u8 cmd, const void *req,
		    size_t req_len, void *resp, size_t resp_len)
{
	unsigned int words = DIV_ROUND_UP(req_len, 8), i;
	struct octep_dev *oct = mb->oct;
	struct octep_mbox_req r = {};
	u64 body[OCTEP_SDP_MBOX_MAX_BODY] = {};
	unsigned long left;
	u32 cons, status;
	bool failed = true;
	u64 t0, raw;
	int ret = 0;

	if (words > OCTEP_SDP_MBOX_MAX_BODY)
		return -EINVAL;
	memcpy(body, req, req_len);
	init_completion(&r.done);
	r.cmd = cmd;

	spin_lock_irq(&mb->lock);
	if (!mb->ready) {
		spin_unlock_irq(&mb->lock);
		return -ENODEV;
	}
	raw = octep_rd64(oct, OCTEP_SDP_MBOX_H2C_CONS);
	if (octep_mbox_gone(mb, raw)) {
		spin_unlock_irq(&mb->lock);
		return -ENODEV;
	}
	cons = (u32)raw;
	if (mb->h2c_size - (mb->h2c_prod - cons) < 1 + words) {
		spin_unlock_irq(&mb->lock);
		return -EBUSY;
	}
	r.id = mb->next_id++;
	octep_wr64(oct, OCTEP_SDP_MBOX_H2C_Q + (mb->h2c_prod % mb->h2c_size) * 8,
		   FIELD_PREP(OCTEP_SDP_MBOX_HDR_SIZE, words) |
		   FIELD_PREP(OCTEP_SDP_MBOX_HDR_FLAGS,
			      OCTEP_SDP_MBOX_F_REQUEST) |
		   FIELD_PREP(OCTEP_SDP_MBOX_HDR_CMD, cmd) |
		   FIELD_PREP(OCTEP_SDP_MBOX_HDR_ID, r.id));
	for (i = 0; i < words; i++)
		octep_wr64(oct, OCTEP_SDP_MBOX_H2C_Q +
			   ((mb->h2c_prod + 1 + i) % mb->h2c_size) * 8,
			   le64_to_cpu((__force __le64)body[i]));
	mb->h2c_prod += 1 + words;
	list_add_tail(&r.node, &mb->pending);
	/* The doorbell, after the words it announces. */
	octep_wr64(oct, OCTEP_SDP_MBOX_H2C_PROD, mb->h2c_prod);
	spin_unlock_irq(&mb->lock);
	atomic64_inc(&mb->requests);
	t0 = ktime_get_ns();

	left = wait_for_completion_timeout(&r.done,
					   msecs_to_jiffies(OCTEP_MBOX_TIMEOUT_MS));
	spin_lock_irq(&mb->lock);
	if (!left && !list_empty(&r.node)) {
		/* Take ours off the list: a late response then matches none. */
		list_del(&r.node);
		ret = -ETIMEDOUT;
		if (octep_mbox_gone(mb, octep_rd64(oct, OCTEP_SDP_MBOX_H2C_CONS)))
			ret = -ENODEV;
	}
	spin_unlock_irq(&mb->lock);
	if (ret) {
		atomic64_inc(&mb->timeouts);
		if (ret == -ETIMEDOUT)
			dev_warn(oct->dev, "mailbox command %u got no response in %u ms\n",
				 cmd, OCTEP_MBOX_TIMEOUT_MS);
	} else if (r.words < 1) {
		ret = -EPROTO;
	} else {
		failed = false;
		status = (u32)le64_to_cpu(r.resp[0]);
		if (status) {
			atomic64_inc(&mb->errors);
			ret = status < 4096 ? -(int)status : -EIO;
		}
	}
	trace_octep_mbox(cmd, r.id, ret, ktime_get_ns() - t0);
	if (ret != -ETIMEDOUT && ret != -ENODEV && READ_ONCE(mb->down)) {
		spin_lock_irq(&mb->lock);
		WRITE_ONCE(mb->down, false);
		spin_unlock_irq(&mb->lock);
	}
	/* A request the block did not answer, or answered with nonsense. */
	if (failed) {
		spin_lock_irq(&mb->lock);
		if (ret == -ETIMEDOUT || ret == -ENODEV)
			WRITE_ONCE(mb->down, true);
		mb->fail_cmd = cmd;
		mb->fail_id = r.id;
		mb->fail_err = ret;
		mb->fail_ns = ktime_get_ns();
		/* Under the lock: octep_mbox_reports() then cancels it. */
		if (mb->reports)
			schedule_work(&mb->report_work);
		spin_unlock_irq(&mb->lock);
	}
	if (ret)
		return ret;
	if (resp)
		memcpy(resp, &r.resp[1],
		       min_t(size_t, resp_len, (r.words - 1) * 8));
	return 0;
}

/* ---------------------------------------------- the health reporter */

/* The last failure and the mailbox's state; read without RTNL. */
static void octep_mbox_fmsg(struct octep_mbox *mb, struct devlink_fmsg *fmsg)
{
	struct octep_dev *oct = mb->oct;
	u32 cmd, id, pending = 0;
	struct octep_mbox_req *r;
	u64 ns;
	int err;

	spin_lock_irq(&mb->lock);
	cmd = mb->fail_cmd;
	id = mb->fail_id;
	err = mb->fail_err;
	ns = mb->fail_ns;
	list_for_each_entry(r, &mb->pending, node)
		pending++;
	spin_unlock_irq(&mb->lock);

	devlink_fmsg_u64_pair_put(fmsg, "requests", atomic64_read(&mb->requests));
	devlink_fmsg_u64_pair_put(fmsg, "timeouts", atomic64_read(&mb->timeouts));
	devlink_fmsg_u64_pair_put(fmsg, "errors", atomic64_read(&mb->errors));
	devlink_fmsg_u64_pair_put(fmsg, "stray", atomic64_read(&mb->stray));
	devlink_fmsg_u32_pair_put(fmsg, "waiting", pending);
	devlink_fmsg_bool_pair_put(fmsg, "answering", !octep_mbox_down(mb));
	devlink_fmsg_u32_pair_put(fmsg, "h2c_prod",
				  (u32)octep_rd64(oct, OCTEP_SDP_MBOX_H2C_PROD));
	devlink_fmsg_u32_pair_put(fmsg, "h2c_cons",
				  (u32)octep_rd64(oct, OCTEP_SDP_MBOX_H2C_CONS));
	devlink_fmsg_u32_pair_put(fmsg, "c2h_prod",
				  (u32)octep_rd64(oct, OCTEP_SDP_MBOX_C2H_PROD));
	devlink_fmsg_u32_pair_put(fmsg, "c2h_cons",
				  (u32)octep_rd64(oct, OCTEP_SDP_MBOX_C2H_CONS));
	if (!ns) {
		devlink_fmsg_string_pair_put(fmsg, "last_failure", "none");
		return;
	}
	devlink_fmsg_pair_nest_start(fmsg, "last_failure");
	devlink_fmsg_obj_nest_start(fmsg);
	devlink_fmsg_u32_pair_put(fmsg, "command", cmd);
	devlink_fmsg_u32_pair_put(fmsg, "id", id);
	devlink_fmsg_string_pair_put(fmsg, "error",
				     err == -ETIMEDOUT ? "timeout" : "bad response");
	devlink_fmsg_u64_pair_put(fmsg, "ms_ago",
				  div_u64(ktime_get_ns() - ns, NSEC_PER_MSEC));
	devlink_fmsg_obj_nest_end(fmsg);
	devlink_fmsg_pair_nest_end(fmsg);
}

static int octep_mbox_diagnose(struct devlink_health_reporter *reporter,
			       struct devlink_fmsg *fmsg,
			       struct netlink_ext_ack *extack)
{
	octep_mbox_fmsg(devlink_health_reporter_priv(reporter), fmsg);
	return 0;
}

static int octep_mbox_dump(struct devlink_health_reporter *reporter,
			   struct devlink_fmsg *fmsg, void *priv_ctx,
			   struct netlink_ext_ack *extack)
{
	octep_mbox_fmsg(devlink_health_reporter_priv(reporter), fmsg);
	return 0;
}

/* Under the devlink lock: the owner only queues its resync. */
static int octep_mbox_recover(struct devlink_health_reporter *reporter,
			      void *priv_ctx, struct netlink_ext_ack *extack)
{
	struct octep_mbox *mb = devlink_health_reporter_priv(reporter);

	if (mb->recover)
		mb->recover(mb);
	return 0;
}

static const struct devlink_health_reporter_ops octep_mbox_reporter_ops = {
	.name = "mbox",
	.diagnose = octep_mbox_diagnose,
	.dump = octep_mbox_dump,
	.recover = octep_mbox_recover,
};

/*
 * devlink_health_report() takes the devlink lock: a failing caller may
 * hold the xfrm state lock or RTNL, so the report is made from a work.
 */
static void octep_mbox_report_work(struct work_struct *work)
{
	struct octep_mbox *mb = container_of(work, struct octep_mbox,
					     report_work);
	char msg[64];
	u32 cmd;

	spin_lock_irq(&mb->lock);
	cmd = mb->fail_cmd;
	spin_unlock_irq(&mb->lock);
	snprintf(msg, sizeof(msg), "mailbox command %u failed", cmd);
	devlink_health_report(mb->reporter, msg, NULL);
}

/**
 * octep_mbox_reports() - start or stop reporting failures to devlink
 * @mb: mailbox from a successful octep_mbox_init()
 * @on: report from now on; or stop, waiting out a report under way
 *
 * devlink_health_report() wants a registered instance: reports run only
 * between devlink_register() and devlink_unregister().
 */
void octep_mbox_reports(struct octep_mbox *mb, bool on)
{
	spin_lock_irq(&mb->lock);
	mb->reports = on;
	spin_unlock_irq(&mb->lock);
	if (!on)
		cancel_work_sync(&mb->report_work);
}

/**
 * octep_mbox_init() - find the block's mailbox and take its interrupt
 * @mb: mailbox, zeroed
 * @oct: device
 * @irq: the mailbox interrupt (sdp->mbox_irq)
 *
 * Return: 0; -ENODEV when the block has no mailbox we know; or the error
 * from request_irq().
 */
int octep_mbox_init(struct octep_mbox *mb, struct octep_dev *oct, int irq)
{
	int err;

	mb->oct = oct;
	spin_lock_init(&mb->lock);
	INIT_LIST_HEAD(&mb->pending);
	if (octep_rd64(oct, OCTEP_SDP_MBOX_SIG) != OCTEP_SDP_MBOX_SIG_VAL ||
	    (octep_rd64(oct, OCTEP_SDP_MBOX_VERSION) >> 16) !=
	    (OCTEP_SDP_MBOX_VERSION_VAL >> 16) || irq <= 0)
		return -ENODEV;
	mb->h2c_size = (u32)octep_rd64(oct, OCTEP_SDP_MBOX_H2C_SIZE);
	mb->c2h_size = (u32)octep_rd64(oct, OCTEP_SDP_MBOX_C2H_SIZE);
	if (mb->h2c_size < 1 + OCTEP_SDP_MBOX_MAX_BODY ||
	    mb->c2h_size < 1 + OCTEP_SDP_MBOX_MAX_BODY)
		return -ENODEV;
	/* Start where the block is: a previous driver may have used it. */
	mb->h2c_prod = (u32)octep_rd64(oct, OCTEP_SDP_MBOX_H2C_PROD);
	mb->c2h_cons = (u32)octep_rd64(oct, OCTEP_SDP_MBOX_C2H_PROD);
	octep_wr64(oct, OCTEP_SDP_MBOX_C2H_CONS, mb->c2h_cons);
	mb->irq = irq;
	INIT_WORK(&mb->report_work, octep_mbox_report_work);
	/* No grace period: every failure is recovered (a resync). */
	mb->reporter = devlink_health_reporter_create(oct->devlink,
						      &octep_mbox_reporter_ops,
						      0, mb);
	if (IS_ERR(mb->reporter))
		return PTR_ERR(mb->reporter);
	err = request_irq(irq, octep_mbox_irq, 0, "octep_ipsec-mbox", mb);
	if (err) {
		devlink_health_reporter_destroy(mb->reporter);
		return err;
	}
	octep_wr64(oct, OCTEP_SDP_MBOX_INT, OCTEP_SDP_MBOX_INT_ENA);
	spin_lock_irq(&mb->lock);
	mb->ready = true;
	spin_unlock_irq(&mb->lock);
	return 0;
}

/**
 * octep_mbox_fini() - stop the mailbox; waiting requests time out
 * @mb: mailbox from a successful octep_mbox_init()
 */
void octep_mbox_fini(struct octep_mbox *mb)
{
	spin_lock_irq(&mb->lock);
	mb->ready = false;
	spin_unlock_irq(&mb->lock);
	octep_wr64(mb->oct, OCTEP_SDP_MBOX_INT, 0);
	free_irq(mb->irq, mb);
	/* No request can fail any more: nothing queues the report again. */
	cancel_work_sync(&mb->report_work);
	devlink_health_reporter_destroy(mb->reporter);
}
