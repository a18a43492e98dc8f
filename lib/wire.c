// SPDX-License-Identifier: BSD-3-Clause
/*
 * The queue -> core wiring plan. It lives under /run/xpile (not in bpffs, which holds
 * only BPF objects; /run survives `ip netns exec`, which only replaces /sys), keyed by
 * network namespace like the pins: /run/xpile/ns<inode>/IFACE/wire.plan.
 * Format: "# comment" lines, then one "QUEUE CORE" pair per line (decimal), each queue
 * once; a malformed plan is an error naming its line, never a partial plan.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/bpffs.h"
#include "xpile/wire.h"
#include "xpile/steer.h"
#include "xpile/text.h"

const char *xp_run_dir(void)
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
	if (snprintf(buf, len, "%s/%s%s/wire.plan", xp_run_dir(), key, ifname) >= (int)len)
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

/* A plan line is two short numbers; anything much longer is not a plan. */
#define PLAN_LINE_MAX 256

static int plan_line(const char *path, unsigned int ln, char *line, struct xp_wire_plan *out)
{
	char *w[3], *save;
	int n = 0;
	__u32 q, c;

	line[strcspn(line, "#")] = 0;
	for (char *t = strtok_r(line, " \t", &save); t && n < 3; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (!n)
		return 0;
	if (n != 2 || xp_parse_u32(w[0], 0, UINT32_MAX, &q) ||
	    xp_parse_u32(w[1], 0, UINT32_MAX, &c)) {
		xp_err("%s line %u: expected 'QUEUE CORE' (two numbers)\n", path, ln);
		return -EINVAL;
	}
	if (out->n >= XP_WIRE_MAX) {
		xp_err("%s line %u: more than %d queues\n", path, ln, XP_WIRE_MAX);
		return -EINVAL;
	}
	for (__u32 i = 0; i < out->n; i++)
		if (out->map[i].queue == q) {
			xp_err("%s line %u: queue %u is wired twice\n", path, ln, q);
			return -EINVAL;
		}
	out->map[out->n].queue = q;
	out->map[out->n].core = c;
	out->n++;
	return 0;
}

static int plan_read(const char *ifname, struct xp_wire_plan *out);

int xp_wire_plan_read(const char *ifname, struct xp_wire_plan *out)
{
	return plan_read(ifname, out);
}

int xp_wire_plan_load(const char *ifname, struct xp_wire_plan *out, char *errbuf, size_t errbuf_sz)
{
	struct xp_errsink es;
	int err;

	xp_errsink_begin(&es, errbuf, errbuf_sz);
	err = plan_read(ifname, out);
	xp_errsink_end(&es);
	return err;
}

static int plan_read(const char *ifname, struct xp_wire_plan *out)
{
	char path[PATH_MAX], *line;
	struct xp_lines lr;
	FILE *f;
	int err = xp_wire_plan_path(ifname, path, sizeof(path));

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f)
		return -errno; /* -ENOENT: no plan, the caller decides */
	err = xp_lines_init(&lr, f, PLAN_LINE_MAX);
	if (err) {
		(void)fclose(f); /* read only: nothing to lose */
		return err;
	}
	while ((err = xp_lines_next(&lr, &line)) > 0) {
		err = plan_line(path, lr.lineno, line, out);
		if (err)
			break;
	}
	if (err == -EFBIG || err == -EILSEQ) {
		if (err == -EFBIG)
			xp_err("%s line %u: longer than %d bytes\n", path, lr.lineno,
			       PLAN_LINE_MAX);
		else
			xp_err("%s line %u: holds a NUL byte\n", path, lr.lineno);
		err = -EINVAL;
	} else if (err < 0 && err != -EINVAL) {
		xp_err("cannot read %s: %s\n", path, strerror(-err));
	}
	xp_lines_free(&lr);
	(void)fclose(f); /* read only: nothing to lose */
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
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
	snprintf(path, sizeof(path), "%s", xp_run_dir());
	slash = strrchr(path, '/');
	if (slash && slash != path)
		*slash = 0;
	xp_rmdir_up(dir, path);
	return 0;
}
