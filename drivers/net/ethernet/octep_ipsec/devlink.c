// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: devlink - the instance that holds the device state, and its
 * runtime parameters. Other parts add their parameters to octep_params[].
 */
#include <net/devlink.h>

#include "octep_ipsec.h"
#include "ipsec.h"

enum octep_devlink_param_id {
	OCTEP_DEVLINK_PARAM_ID_BASE = DEVLINK_PARAM_GENERIC_ID_MAX,
	OCTEP_DEVLINK_PARAM_ID_RXWD_PERIOD_US,
	OCTEP_DEVLINK_PARAM_ID_IPSEC_FLOWS,
	OCTEP_DEVLINK_PARAM_ID_RXWD_SKIP_VISITED,
};

/*
 * The device state sits in the devlink priv, which devlink aligns to
 * NETDEV_ALIGN (32) only: on Debian's 6.12 it starts 416 bytes in, half a
 * line. The state's ring pairs are ____cacheline_aligned_in_smp, which
 * holds in memory only if the state itself starts on a line: it is
 * allocated with room to be moved up to one.
 */
#define OCTEP_DL_PRIV_SIZE \
	(sizeof(struct octep_dev) + __alignof__(struct octep_dev) - 1)

static struct octep_dev *octep_dl_priv(struct devlink *devlink)
{
	return PTR_ALIGN(devlink_priv(devlink), __alignof__(struct octep_dev));
}

static void octep_param_read(struct octep_dev *oct, u32 id,
			     struct devlink_param_gset_ctx *ctx)
{
	switch (id) {
	case OCTEP_DEVLINK_PARAM_ID_RXWD_PERIOD_US:
		/* Pairs with WRITE_ONCE() in octep_wd_set_period(). */
		ctx->val.vu32 = READ_ONCE(oct->rxwd_period_us);
		break;
	case OCTEP_DEVLINK_PARAM_ID_IPSEC_FLOWS:
		ctx->val.vu8 = octep_ipsec_flows(oct);
		break;
	case OCTEP_DEVLINK_PARAM_ID_RXWD_SKIP_VISITED:
		/* Pairs with WRITE_ONCE() in octep_param_set(). */
		ctx->val.vbool = READ_ONCE(oct->rxwd_skip_visited);
		break;
	}
}

static int octep_param_check(u32 id, const union devlink_param_value *val,
			     struct netlink_ext_ack *extack)
{
	switch (id) {
	case OCTEP_DEVLINK_PARAM_ID_RXWD_PERIOD_US:
		/*
		 * Below the minimum the timer would fire tens of thousands
		 * of times a second, each tick reading every ring's count.
		 */
		if (val->vu32 > OCTEP_RXWD_PERIOD_MAX_US ||
		    (val->vu32 && val->vu32 < OCTEP_RXWD_PERIOD_MIN_US)) {
			NL_SET_ERR_MSG_FMT_MOD(extack,
					       "rxwd_period_us is %u to %u (0 turns the period off)",
					       OCTEP_RXWD_PERIOD_MIN_US,
					       OCTEP_RXWD_PERIOD_MAX_US);
			return -EINVAL;
		}
		return 0;
	case OCTEP_DEVLINK_PARAM_ID_IPSEC_FLOWS:
		return octep_ipsec_check_flows(val->vu8, extack);
	case OCTEP_DEVLINK_PARAM_ID_RXWD_SKIP_VISITED:
		return 0;
	}
	return -EINVAL;
}

/*
 * Newer kernels pass get() an extack and validate() a pointer; out of tree
 * the top-level Kbuild probes the tree's <net/devlink.h> for them.
 */
#ifdef OCTEP_HAVE_DL_GET_EXTACK
static int octep_param_get(struct devlink *devlink, u32 id,
			   struct devlink_param_gset_ctx *ctx,
			   struct netlink_ext_ack *extack)
#else
static int octep_param_get(struct devlink *devlink, u32 id,
			   struct devlink_param_gset_ctx *ctx)
#endif
{
	octep_param_read(octep_dl_priv(devlink), id, ctx);
	return 0;
}

#ifdef OCTEP_HAVE_DL_VALIDATE_PTR
static int octep_param_validate(struct devlink *devlink, u32 id,
				union devlink_param_value *val,
				struct netlink_ext_ack *extack)
{
	return octep_param_check(id, val, extack);
}
#else
static int octep_param_validate(struct devlink *devlink, u32 id,
				union devlink_param_value val,
				struct netlink_ext_ack *extack)
{
	return octep_param_check(id, &val, extack);
}
#endif

static int octep_param_set(struct devlink *devlink, u32 id,
			   struct devlink_param_gset_ctx *ctx,
			   struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_dl_priv(devlink);

	switch (id) {
	case OCTEP_DEVLINK_PARAM_ID_RXWD_PERIOD_US:
		octep_wd_set_period(oct, ctx->val.vu32);
		return 0;
	case OCTEP_DEVLINK_PARAM_ID_IPSEC_FLOWS:
		return octep_ipsec_set_flows(oct, ctx->val.vu8, extack);
	case OCTEP_DEVLINK_PARAM_ID_RXWD_SKIP_VISITED:
		/* Read by the watchdog's tick, octep_wd_skip(). */
		WRITE_ONCE(oct->rxwd_skip_visited, ctx->val.vbool);
		return 0;
	}
	return -EOPNOTSUPP;
}

static const struct devlink_param octep_params[] = {
	DEVLINK_PARAM_DRIVER(OCTEP_DEVLINK_PARAM_ID_RXWD_PERIOD_US,
			     "rxwd_period_us", DEVLINK_PARAM_TYPE_U32,
			     BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     octep_param_get, octep_param_set,
			     octep_param_validate),
	/* xfrm.c: which directions the IPsec offload may take. */
	DEVLINK_PARAM_DRIVER(OCTEP_DEVLINK_PARAM_ID_IPSEC_FLOWS,
			     "ipsec_flows", DEVLINK_PARAM_TYPE_U8,
			     BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     octep_param_get, octep_param_set,
			     octep_param_validate),
	/* watchdog.c: pass over a ring visited since the last tick. */
	DEVLINK_PARAM_DRIVER(OCTEP_DEVLINK_PARAM_ID_RXWD_SKIP_VISITED,
			     "rxwd_skip_visited", DEVLINK_PARAM_TYPE_BOOL,
			     BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     octep_param_get, octep_param_set,
			     octep_param_validate),
};

/* devlink dev info: the driver's name is the core's; the rest is ours. */
static int octep_dl_info_get(struct devlink *dl, struct devlink_info_req *req,
			     struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_dl_priv(dl);

	return octep_ipsec_info_put(oct, req);
}

static const struct devlink_ops octep_devlink_ops = {
	.info_get	= octep_dl_info_get,
};

/**
 * octep_devlink_alloc() - allocate the devlink instance and device state
 * @dev: the device we bind to (names the instance, e.g.
 *	auxiliary/octep_sim.sdp.0)
 *
 * Return: the zeroed device state, or NULL.
 */
struct octep_dev *octep_devlink_alloc(struct device *dev)
{
	struct devlink *devlink;
	struct octep_dev *oct;

	devlink = devlink_alloc(&octep_devlink_ops, OCTEP_DL_PRIV_SIZE, dev);
	if (!devlink)
		return NULL;
	oct = octep_dl_priv(devlink);
	oct->devlink = devlink;
	return oct;
}

/**
 * octep_devlink_free() - free the instance and the device state
 * @oct: device
 */
void octep_devlink_free(struct octep_dev *oct)
{
	devlink_free(oct->devlink);
}

/**
 * octep_devlink_register() - register the parameters and the instance
 * @oct: device
 *
 * Return: 0 or a negative errno.
 */
int octep_devlink_register(struct octep_dev *oct)
{
	int err;

	err = devlink_params_register(oct->devlink, octep_params,
				      ARRAY_SIZE(octep_params));
	if (err)
		return err;
	devlink_register(oct->devlink);
	/* Reporting needs a registered instance: from now until unregister. */
	octep_health_reports(oct, true);
	octep_ipsec_reports(oct, true);
	return 0;
}

/**
 * octep_devlink_unregister() - undo octep_devlink_register()
 * @oct: device
 */
void octep_devlink_unregister(struct octep_dev *oct)
{
	octep_ipsec_reports(oct, false);
	octep_health_reports(oct, false);
	devlink_unregister(oct->devlink);
	devlink_params_unregister(oct->devlink, octep_params,
				  ARRAY_SIZE(octep_params));
}
