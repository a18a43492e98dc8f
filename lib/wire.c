// SPDX-License-Identifier: BSD-3-Clause
/*
 * The queue -> core wiring plan. It lives under /run/xpile (not in bpffs, which holds
 * only BPF objects; /run survives `ip netns exec`, which only replaces /sys), keyed by
 * network namespace like the pins: /run/xpile/[ns<inode>/]IFACE/wire.plan.
 * Format: "# comment" lines, then one "QUEUE CORE" pair per line.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/steer.h"

static const char *run_dir(void)
{
	const char *e = getenv("XPILE_RUNDIR");

	return e && *e ? e : "/run/xpile";
}

int xp_wire_plan_path(const char *ifname, char *buf, size_t len)
{
	char key[64];
	int err = xp_netns_key(key, sizeof(key));

	if (err)
		return err;
	if (snprintf(buf, len, "%s/%s%s/wire.plan", run_dir(), key, ifname) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int xp_wire_plan_write(const char *ifname, const struct xp_wire_plan *p)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], *slash;
	FILE *f;
	int err = xp_wire_plan_path(ifname, path, sizeof(path));

	if (err)
		return err;
	if (p->n > XP_WIRE_MAX)
		return -E2BIG;
	snprintf(tmp, sizeof(tmp), "%s", path);
	slash = strrchr(tmp, '/');
	*slash = 0;
	err = xp_mkdir_p(tmp);
	if (err) {
		xp_err("cannot create %s: %s\n", tmp, strerror(-err));
		return err;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		err = -errno;
		xp_err("cannot write %s: %s\n", tmp, strerror(-err));
		return err;
	}
	fprintf(f, "# xpile wiring plan for %s: QUEUE CORE\n", ifname);
	for (__u32 i = 0; i < p->n; i++)
		fprintf(f, "%u %u\n", p->map[i].queue, p->map[i].core);
	/* Write to a temporary name and rename: a reader never sees half a plan. */
	if (fclose(f) || rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		xp_err("cannot write %s: %s\n", path, strerror(-err));
		return err;
	}
	return 0;
}

int xp_wire_plan_read(const char *ifname, struct xp_wire_plan *out)
{
	char path[PATH_MAX], line[128];
	FILE *f;
	int err = xp_wire_plan_path(ifname, path, sizeof(path)), ln = 0;

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f)
		return -errno; /* -ENOENT: no plan, the caller decides */
	while (fgets(line, sizeof(line), f)) {
		unsigned q, c;
		char extra;

		ln++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%u %u %c", &q, &c, &extra) != 2 || out->n >= XP_WIRE_MAX) {
			xp_err("%s line %d: expected 'QUEUE CORE'; rewrite it with xpile-loader "
			       "wire\n",
			       path, ln);
			(void)fclose(f); /* read only: nothing to lose */
			return -EINVAL;
		}
		out->map[out->n].queue = q;
		out->map[out->n].core = c;
		out->n++;
	}
	(void)fclose(f); /* read only: nothing to lose */
	return 0;
}

int xp_wire_plan_remove(const char *ifname)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;
	int err = xp_wire_plan_path(ifname, path, sizeof(path));

	if (err)
		return err;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = 0;
	snprintf(path, sizeof(path), "%s", run_dir());
	slash = strrchr(path, '/');
	if (slash && slash != path)
		*slash = 0;
	xp_rmdir_up(dir, path);
	return 0;
}
