// SPDX-License-Identifier: BSD-3-Clause
/*
 * A netdev lent to a pod: xpile-cni (netdev mode) moves it into the pod's network
 * namespace, under its own name, and tells the agent first ({"cmd":"lend"} on the
 * control socket); its DEL moves it back and tells the agent ({"cmd":"reclaim"}).
 *
 * While lent, the interface is not the agent's namespace's, and nothing about that
 * is wrong: its program went with it (an XDP bpf_link moves with its netdev), the
 * pod's engine asks the device-plugin socket by the name it sees, which is the same,
 * and the XSKMAP is the same map. So the agent keeps serving it: the watch does not
 * report it gone nor try to attach, /readyz stays 200, and the kubelet's health of
 * its queues is whether our link still holds the program (bpf_link info: its
 * ifindex is 0 once detached). The record DIR/NETDEV/lent (container and namespace)
 * lets a reload, or a config check, accept an interface this namespace cannot see.
 * Reclaimed, it is looked up again (its ifindex may have changed) and checked as any.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "kubelet.h"
#include "iface.h"
#include "watch.h"
#include "lend.h"
#include "lent.h"

static int record_path(const struct agent *a, const char *name, char *p, size_t len)
{
	return ag_lent_path(a->cfg.dp_dir, name, p, len);
}

static json_t *reply(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static json_t *reply(bool ok, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (ok)
		return json_pack("{s:b}", "ok", 1);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:b, s:s}", "ok", 0, "error", msg);
}

static json_t *lend(struct agent *a, struct ag_iface *i, json_t *req)
{
	const char *netns = json_string_value(json_object_get(req, "netns"));
	const char *ctr = json_string_value(json_object_get(req, "container"));
	char p[PATH_MAX];
	FILE *f;

	if (!netns || !ctr || !*netns || !*ctr)
		return reply(false, "lend: \"netns\" and \"container\" are required");
	if (i->lent && strcmp(i->lent_container, ctr))
		return reply(false, "lend: %s is lent to container %.64s already", i->name,
			     i->lent_container);
	snprintf(i->lent_container, sizeof(i->lent_container), "%s", ctr);
	snprintf(i->lent_netns, sizeof(i->lent_netns), "%s", netns);
	if (!record_path(a, i->name, p, sizeof(p)) && (f = fopen(p, "we"))) {
		fprintf(f, "{\"container\": \"%s\", \"netns\": \"%s\"}\n", i->lent_container,
			i->lent_netns);
		if (fclose(f))
			ut_warn("%s: lend: cannot write %s: %s", i->name, p, strerror(errno));
	}
	if (!i->lent)
		ut_say(0, "%s: lent to container %.12s (%s): served there until it comes back",
		       i->name, ctr, netns);
	i->lent = true;
	return reply(true, NULL);
}

static json_t *reclaim(struct agent *a, struct ag_iface *i)
{
	char p[PATH_MAX];

	if (!record_path(a, i->name, p, sizeof(p)))
		unlink(p);
	if (!i->lent)
		return reply(true, NULL); /* DEL again, or never lent: nothing to do */
	i->lent = false;
	i->ifindex = (int)if_nametoindex(i->name);
	if (!i->ifindex) {
		i->lent = true; /* not back yet: still the pod's */
		return reply(false, "reclaim: %s is not in the agent's namespace", i->name);
	}
	ut_say(0, "%s: back from container %.12s", i->name, i->lent_container);
	i->lent_container[0] = i->lent_netns[0] = 0;
	i->watch_state = 0;
	ag_watch_iface(a, i); /* attached still, or again */
	ag_kubelet_health(a);
	return reply(true, NULL);
}

json_t *ag_lend_cmd(struct agent *a, const char *cmd, json_t *req)
{
	const char *name = json_string_value(json_object_get(req, "iface"));
	struct ag_iface *i = name ? ag_iface_find(a, name) : NULL;

	if (!name)
		return reply(false, "%s: \"iface\" missing", cmd);
	if (!i)
		return reply(false, "%s: no interface %.32s served (see the status command)", cmd,
			     name);
	return strcmp(cmd, "lend") ? reclaim(a, i) : lend(a, i, req);
}
