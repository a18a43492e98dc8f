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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "agent.h"
#include "dp.h"
#include "iface.h"
#include "pinmap.h"
#include "xskpidfd.h"
#include "xpile/steer_owner.h"
#include "xpile/xsk.h"

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
	struct xp_steer_set_opts so = { .sz = sizeof(so) };
	struct xp_rule *old = NULL, *want = NULL;
	char why[512] = "";
	bool new_dflt, same_rules;
	struct xp_action dflt;
	__u32 nold = 0;
	int rc;

	rc = xp_steer_default_get(i->steer, &dflt, NULL);
	new_dflt = !rc && memcmp(&dflt, &c->dflt, sizeof(dflt));
	rc = rc ?: rules_in_force(i->steer, &old, &nold);
	if (rc)
		goto out;
	want = calloc(c->nrules + 1, sizeof(*want));
	if (!want) {
		rc = -ENOMEM;
		goto out;
	}
	if (c->nrules) /* a config without rules has none allocated */
		memcpy(want, c->rules, c->nrules * sizeof(*want));
	sort_rules(want, c->nrules);
	same_rules = ag_rules_equal(old, nold, want, c->nrules);
	if (same_rules && !new_dflt)
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
	/* Both in one replace: no packet sees the new rules with the old default. */
	so.rules = want;
	so.nrules = c->nrules;
	so.keep_rules = same_rules;
	so.dflt = new_dflt ? &c->dflt : NULL;
	so.errbuf = why;
	so.errbuf_sz = sizeof(why);
	rc = xp_steer_set(i->steer, &so);
	if (!rc && new_dflt)
		ut_say(0, "%s: default action changed", i->name);
	if (!rc && !same_rules)
		ut_say(0, "%s: rule set replaced (%u rules, was %u)", i->name, c->nrules, nold);
out:
	if (rc)
		snprintf(err, len, "%s: rules not applied: %s", i->name,
			 why[0] ? why : strerror(-rc));
	free(old);
	free(want);
	return rc ? -1 : 0;
}

static int copy_cfg(struct ag_iface_cfg *dst, const struct ag_iface_cfg *src)
{
	struct xp_rule *r = calloc(src->nrules + 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (src->nrules)
		memcpy(r, src->rules, src->nrules * sizeof(*r));
	free(dst->rules);
	*dst = *src;
	dst->rules = r;
	return 0;
}

/*
 * One agent per interface and network namespace: a listening socket of the abstract
 * Unix namespace, which is the network namespace's own, is the lock. The kernel drops
 * it with its process however that ends (kill -9 too), and a second agent learns the
 * holder's pid from the socket itself (SO_PEERCRED of a connection, never accepted).
 * Returns the socket, or -1 with one line in @err.
 */
static int iface_lock(const char *name, char *err, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int n = snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "xpile-agent/iface/%s", name);
	socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct ucred cr = { 0 };
	socklen_t crl = sizeof(cr);
	char pid[48] = "";
	int probe;

	if (fd < 0) {
		snprintf(err, len, "%s: socket: %s", name, strerror(errno));
		return -1;
	}
	if (!bind(fd, (struct sockaddr *)&sun, sl) && !listen(fd, 16))
		return fd;
	if (errno != EADDRINUSE) {
		snprintf(err, len, "%s: cannot take the agent's lock on the interface: %s", name,
			 strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (probe >= 0 && !connect(probe, (struct sockaddr *)&sun, sl) &&
	    !getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cr, &crl) && cr.pid > 0)
		snprintf(pid, sizeof(pid), " (pid %d)", (int)cr.pid);
	if (probe >= 0)
		close(probe);
	if (pid[0] && cr.uid != geteuid() && cr.uid != 0)
		snprintf(
			err, len,
			"%s: the agent's lock on this interface is held by pid %d of uid %u, not an agent's uid: stop that process",
			name, (int)cr.pid, cr.uid);
	else
		snprintf(
			err, len,
			"%s: another agent%s serves this interface: stop it first (one agent per interface and network namespace)",
			name, pid);
	return -1;
}

void ag_ifaces_tick(struct agent *a)
{
	/* A refused agent's probe waits in the lock's queue: without this, 16 of them
	 * would fill it, and the next one would not learn the pid. */
	for (int k = 0; k < AG_MAX_IFACES; k++) {
		int fd;

		while (a->ifaces[k].used &&
		       (fd = accept4(a->ifaces[k].lock_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
			close(fd);
	}
}

static int iface_open(struct agent *a, struct ag_iface *i, const struct ag_iface_cfg *c, char *err,
		      size_t len)
{
	struct xp_steer_opts so = { .sz = sizeof(so) };
	char why[512] = "";
	int rc;

	so.ifname = c->name;
	so.mode = c->mode;
	so.link = true;
	so.default_action = &c->dflt;
	so.attach_existing = true;
	so.errbuf = why;
	so.errbuf_sz = sizeof(why);
	rc = xp_steer_open(&so, &i->steer);
	if (!rc) {
		i->adopted = true;
	} else if (rc == -ENOENT || rc == -ESTALE) {
		if (rc == -ESTALE)
			xp_steer_remove_stale(c->name, NULL);
		so.attach_existing = false;
		rc = xp_steer_open(&so, &i->steer);
	}
	if (rc) {
		/* The library's lines name the interface already. */
		if (why[0])
			snprintf(err, len, "%s", why);
		else
			snprintf(err, len, "%s: %s", c->name, strerror(-rc));
		return -1;
	}
	i->ifindex = (int)if_nametoindex(c->name);
	i->used = true;
	if (i->adopted)
		ut_say(0, "%s: adopted the steer program (id %u)%s", i->name,
		       xp_steer_prog_id(i->steer),
		       xp_steer_link_fd(i->steer) < 0 ? " attached through netlink, not a link" :
							" and its link");
	else
		ut_say(0, "%s: steer program attached through a pinned bpf_link (id %u)", i->name,
		       xp_steer_prog_id(i->steer));
	return 0;
}

static void iface_close(struct agent *a, struct ag_iface *i, bool detach)
{
	ag_pinmap_close(a, i, detach); /* first: its bpffs is inside the socket's directory */
	ag_dp_close(a, i);
	ag_xsk_iface_close(a, i);
	xp_steer_close(i->steer, detach);
	close(i->lock_fd); /* after the detach: the next agent finds it done */
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
	    (strcmp(new->dp_dir, a->cfg.dp_dir) || strcmp(new->ctl_path, a->cfg.ctl_path) ||
	     new->dp_gid != a->cfg.dp_gid)) {
		snprintf(
			err, len,
			"%s: device_plugin.dir, device_plugin.group and control.path take effect at start only; restart the agent to change them",
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
		/* Nothing is touched before the lock, nothing attached before the socket's
		 * directory is found safe. */
		i->lock_fd = iface_lock(c->name, err, len);
		if (i->lock_fd < 0)
			return -1;
		snprintf(i->name, sizeof(i->name), "%s", c->name);
		if (ag_dp_open(a, i, err, len) || iface_open(a, i, c, err, len)) {
			ag_dp_close(a, i);
			close(i->lock_fd);
			memset(i, 0, sizeof(*i));
			return -1;
		}
	}
	if (set_rules(i, c, err, len))
		return -1;
	if (copy_cfg(&i->cfg, c)) {
		snprintf(err, len, "%s: out of memory", c->name);
		return -1;
	}
	if (c->pinned_map != i->pinned && (c->pinned_map ? ag_pinmap_open(a, i) : 0)) {
		snprintf(err, len, "%s: pinned map not served (see above)", c->name);
		return -1;
	}
	if (!c->pinned_map && i->pinned)
		ag_pinmap_close(a, i, true);
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
			ut_say(0, "%s: no longer in the config: detached", i->name);
			iface_close(a, i, true);
		}
	}
	for (__u32 k = 0; k < new->nifaces; k++)
		if (ag_iface_serve(a, &new->ifaces[k], err, len))
			return -1;
	return 0;
}
