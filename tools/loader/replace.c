// SPDX-License-Identifier: BSD-3-Clause
/* xpile-loader replace: a new build of the steer program in place of the running one. */
#include <errno.h>
#include <stdio.h>

#include "loader.h"
#include "xpile/steer_owner.h"

static int run_replace(struct loader_args *a)
{
	struct xp_steer_replace_opts o = { .sz = sizeof(o), .bpf_obj = a->obj };
	struct xp_steer *s;
	__u32 old;
	int err;

	if (loader_open_existing(a, &s))
		return 1;
	old = xp_steer_prog_id(s);
	err = xp_steer_replace_prog(s, &o);
	if (!err) {
		if (a->json)
			printf("{\"ifname\":\"%s\",\"old_prog_id\":%u,\"prog_id\":%u}\n", a->ifname,
			       old, xp_steer_prog_id(s));
		else
			printf("%s: xp_steer replaced in place, program id %u -> %u; maps, sockets "
			       "and counters kept\n",
			       a->ifname, old, xp_steer_prog_id(s));
	}
	if (err == -EEXIST) /* the library said another program replaced ours */
		ut_say(1, "%s: what runs there now: xpile-loader status %s", a->ifname, a->ifname);
	xp_steer_close(s, false);
	/* A wrong object or a layout that does not fit is the caller's input. */
	return !err ? 0 : err == -EPROTO || err == -ENOEXEC || err == -ENOENT ? 2 : 1;
}

static const struct cli_opt replace_opts[] = {
	OPT_PIN,
	OPT_OBJ("The new BPF object"),
	OPT_JSON,
	{ 0 },
};

LOADER_IFACE_COMMAND(
	cmd_replace, run_replace, "replace",
	"Replace the steer program on IFACE with a new build, keeping its maps", replace_opts,
	.description =
		"The new program takes over the pinned maps (XSKMAP, rule sets, counters, "
		"config) before it loads, and the kernel swaps it in atomically only if the "
		"running one is still there (XDP_FLAGS_REPLACE): no packet sees no program, "
		"AF_XDP sockets stay attached, counters continue, and the pins then hold the "
		"new program. A new program whose map layout differs (XP_STEER_ABI_VERSION, "
		"or any pinned map's type, key, value, size or flags) is refused with one line "
		"naming the difference unless a migration exists; the old program stays. "
		"Inside libxdp's dispatcher it is refused (unload and load instead).",
	.examples = "xpile-loader replace eth0\n"
		    "xpile-loader replace --obj /usr/local/lib/xpile/steer.o eth0");
