// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bringing the interfaces to what the config says, touching only what differs: an
 * interface already served (by this run, or left attached by the previous one) keeps
 * its program and link; a rule set that differs is replaced in one atomic swap (rules
 * that stay keep their ids, hence their counters); an interface no longer listed is
 * detached and unpinned; a new one is adopted when its pins are there, else loaded
 * through a pinned bpf_link.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "xpile/log.h"
#include "xpile/owner.h"
#include "xpile/xsk.h"

/* The library's complaint, kept for the one line the caller prints. */
static char lib_msg[512];

static int capture(enum xp_log_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(lib_msg);

	if (level <= XP_LOG_WARN && n < sizeof(lib_msg) - 1)
		vsnprintf(lib_msg + n, sizeof(lib_msg) - n, fmt, ap);
	return 0;
}

static void capture_begin(xp_log_fn *prev)
{
	lib_msg[0] = 0;
	*prev = xp_set_log_fn(capture);
}

/* The captured message as one line (the library's end with a newline). */
static const char *capture_end(xp_log_fn prev)
{
	xp_set_log_fn(prev);
	for (char *p = lib_msg; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ' ' : 0;
	return lib_msg;
}

int ag_rules_count(struct xp_steer *s)
{
	struct xp_rule *r = calloc(XP_STEER_MAX_RULES, sizeof(*r));
	__u32 n = 0;
	int err = r ? xp_steer_rules_get(s, r, NULL, XP_STEER_MAX_RULES, &n) : -ENOMEM;

	free(r);
	return err ? err : (int)n;
}

struct ag_iface *ag_iface_find(struct agent *a, const char *name)
{
	for (int i = 0; i < AG_MAX_IFACES; i++)
		if (a->ifaces[i].used && !strcmp(a->ifaces[i].name, name))
			return &a->ifaces[i];
	return NULL;
}

static bool rule_same(const struct xp_rule *x, const struct xp_rule *y)
{
	struct xp_rule p = *x, q = *y;

	p.id = q.id = 0;
	p.pad = q.pad = 0;
	return !memcmp(&p, &q, sizeof(p));
}

bool ag_rules_equal(const struct xp_rule *x, __u32 nx, const struct xp_rule *y, __u32 ny)
{
	if (nx != ny)
		return false;
	for (__u32 i = 0; i < nx; i++)
		if (!rule_same(&x[i], &y[i]))
			return false;
	return true;
}

/* The rules in force as the library returns them (sorted by prio, ids set). */
static int rules_in_force(struct xp_steer *s, struct xp_rule **out, __u32 *n)
{
	struct xp_rule *r = calloc(XP_STEER_MAX_RULES, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	err = xp_steer_rules_get(s, r, NULL, XP_STEER_MAX_RULES, n);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* The config's rules in the order the library keeps them: stable by prio. */
static void sort_rules(struct xp_rule *r, __u32 n)
{
	for (__u32 i = 1; i < n; i++) {
		struct xp_rule t = r[i];
		__u32 j = i;

		for (; j > 0 && r[j - 1].prio > t.prio; j--)
			r[j] = r[j - 1];
		r[j] = t;
	}
}

static int set_rules(struct ag_iface *i, const struct ag_iface_cfg *c, char *err, size_t len)
{
	struct xp_rule *old = NULL, *want = NULL;
	struct xp_action dflt;
	__u32 nold = 0;
	xp_log_fn prev;
	int rc;

	capture_begin(&prev);
	rc = xp_steer_default_get(i->steer, &dflt, NULL);
	if (!rc && memcmp(&dflt, &c->dflt, sizeof(dflt))) {
		rc = xp_steer_default_set(i->steer, &c->dflt, NULL);
		if (!rc)
			ag_log("%s: default action changed", i->name);
	}
	rc = rc ?: rules_in_force(i->steer, &old, &nold);
	if (rc)
		goto out;
	want = calloc(c->nrules + 1, sizeof(*want));
	if (!want) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(want, c->rules, c->nrules * sizeof(*want));
	sort_rules(want, c->nrules);
	if (ag_rules_equal(old, nold, want, c->nrules))
		goto out;
	/* A rule that stays keeps its id and so its counters. */
	for (__u32 k = 0; k < c->nrules; k++) {
		want[k].id = 0;
		for (__u32 j = 0; j < nold; j++)
			if (old[j].id && rule_same(&want[k], &old[j])) {
				want[k].id = old[j].id;
				old[j].id = 0;
				break;
			}
	}
	rc = xp_steer_rules_replace(i->steer, want, c->nrules);
	if (!rc)
		ag_log("%s: rule set replaced (%u rules, was %u)", i->name, c->nrules, nold);
out:
	capture_end(prev);
	if (rc)
		snprintf(err, len, "%s: rules not applied: %s", i->name,
			 lib_msg[0] ? lib_msg : strerror(-rc));
	free(old);
	free(want);
	return rc ? -1 : 0;
}

static int copy_cfg(struct ag_iface_cfg *dst, const struct ag_iface_cfg *src)
{
	struct xp_rule *r = calloc(src->nrules + 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	memcpy(r, src->rules, src->nrules * sizeof(*r));
	free(dst->rules);
	*dst = *src;
	dst->rules = r;
	return 0;
}

static int iface_open(struct agent *a, struct ag_iface *i, const struct ag_iface_cfg *c, char *err,
		      size_t len)
{
	struct xp_steer_opts so = { .sz = sizeof(so) };
	xp_log_fn prev;
	int rc;

	so.ifname = c->name;
	so.mode = c->mode;
	so.link = true;
	so.default_action = &c->dflt;
	so.attach_existing = true;
	capture_begin(&prev);
	rc = xp_steer_open(&so, &i->steer);
	if (!rc) {
		i->adopted = true;
	} else if (rc == -ENOENT || rc == -ESTALE) {
		if (rc == -ESTALE)
			xp_steer_remove_stale(c->name, NULL);
		so.attach_existing = false;
		lib_msg[0] = 0;
		rc = xp_steer_open(&so, &i->steer);
	}
	capture_end(prev);
	if (rc) {
		/* The library's lines name the interface already. */
		if (lib_msg[0])
			snprintf(err, len, "%s", lib_msg);
		else
			snprintf(err, len, "%s: %s", c->name, strerror(-rc));
		return -1;
	}
	snprintf(i->name, sizeof(i->name), "%s", c->name);
	i->ifindex = (int)if_nametoindex(c->name);
	i->used = true;
	if (i->adopted)
		ag_log("%s: adopted the steer program (id %u)%s", i->name,
		       xp_steer_prog_id(i->steer),
		       xp_steer_link_fd(i->steer) < 0 ? " attached through netlink, not a link" :
							" and its link");
	else
		ag_log("%s: steer program attached through a pinned bpf_link (id %u)", i->name,
		       xp_steer_prog_id(i->steer));
	return 0;
}

static void iface_close(struct agent *a, struct ag_iface *i, bool detach)
{
	ag_dp_close(a, i);
	ag_xsk_iface_close(a, i);
	xp_steer_close(i->steer, detach);
	free(i->cfg.rules);
	memset(i, 0, sizeof(*i));
}

void ag_ifaces_close(struct agent *a, bool detach)
{
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].used)
			iface_close(a, &a->ifaces[k], detach);
}

int ag_apply_check(struct agent *a, const struct ag_config *new, char *err, size_t len)
{
	for (__u32 k = 0; k < new->nifaces; k++) {
		const struct ag_iface_cfg *c = &new->ifaces[k];
		struct ag_iface *i = ag_iface_find(a, c->name);

		if (i && c->mode != i->cfg.mode) {
			snprintf(
				err, len,
				"%s: interfaces[%u].mode: the attach mode of a served interface does not change on reload; remove the interface, reload, then add it back",
				new->file, k);
			return -1;
		}
	}
	if (a->generation &&
	    (strcmp(new->dp_dir, a->cfg.dp_dir) || strcmp(new->ctl_path, a->cfg.ctl_path))) {
		snprintf(
			err, len,
			"%s: device_plugin.dir and control.path take effect at start only; restart the agent to move them",
			new->file);
		return -1;
	}
	return 0;
}

int ag_iface_serve(struct agent *a, const struct ag_iface_cfg *c, char *err, size_t len)
{
	struct ag_iface *i = ag_iface_find(a, c->name);

	if (!i) {
		for (int j = 0; !i && j < AG_MAX_IFACES; j++)
			if (!a->ifaces[j].used)
				i = &a->ifaces[j];
		if (iface_open(a, i, c, err, len))
			return -1;
	}
	if (set_rules(i, c, err, len))
		return -1;
	if (copy_cfg(&i->cfg, c)) {
		snprintf(err, len, "%s: out of memory", c->name);
		return -1;
	}
	if (!i->dp && ag_dp_open(a, i)) {
		snprintf(err, len, "%s: device-plugin socket not served (see above)", c->name);
		return -1;
	}
	return 0;
}

void ag_iface_detach(struct agent *a, struct ag_iface *i)
{
	iface_close(a, i, true);
}

int ag_apply(struct agent *a, const struct ag_config *new, char *err, size_t len)
{
	/* Gone from the config first: its queues and sockets are free before new ones. */
	for (int k = 0; k < AG_MAX_IFACES; k++) {
		struct ag_iface *i = &a->ifaces[k];
		bool keep = false;

		for (__u32 j = 0; i->used && j < new->nifaces; j++)
			keep |= !strcmp(new->ifaces[j].name, i->name);
		if (i->used && !keep) {
			ag_log("%s: no longer in the config: detached", i->name);
			iface_close(a, i, true);
		}
	}
	for (__u32 k = 0; k < new->nifaces; k++)
		if (ag_iface_serve(a, &new->ifaces[k], err, len))
			return -1;
	return 0;
}
