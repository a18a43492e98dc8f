// SPDX-License-Identifier: BSD-3-Clause
/* xpile-loader load, unload, status, features. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "xpile/bpffs.h"
#include "xpile/features.h"
#include "xpile/steer_owner.h"
#include "xpile/users.h"
#include "xpile/wire.h"

#define NEEDS_ROOT                                                                        \
	"needs root (CAP_BPF and CAP_NET_ADMIN; CAP_SYS_ADMIN to reach the host's bpffs " \
	"from another namespace)"

static const char *mode_name(enum xp_steer_mode m)
{
	return m == XP_STEER_MODE_SKB ? "skb" : m == XP_STEER_MODE_NATIVE ? "native" : "auto";
}

static int run_load(struct loader_args *a)
{
	struct xp_steer_opts o = { .sz = sizeof(o),
				   .ifname = a->ifname,
				   .pin_path = a->pin_path,
				   .bpf_obj = a->obj,
				   .mode = (enum xp_steer_mode)a->mode,
				   .force = a->force };
	struct xp_steer_info info;
	struct xp_steer *s;
	int err;

	if (a->has_dflt)
		o.default_action = &a->dflt;
	xp_netns_sweep(); /* what killed loaders left in namespaces since deleted */
	err = xp_steer_open(&o, &s);
	if (err)
		return 1;
	xp_steer_info_get(s, &info);
	if (a->json)
		printf("{\"ifname\":\"%s\",\"prog_id\":%u,\"mode\":\"%s\",\"dispatcher\":%s,"
		       "\"pin_path\":\"%s\"}\n",
		       info.ifname, info.prog_id, mode_name(info.mode),
		       info.legacy ? "false" : "true", info.pin_path);
	else
		printf("%s: xp_steer loaded, program id %u, %s mode, %s; pins in %s\n", info.ifname,
		       info.prog_id, mode_name(info.mode),
		       info.legacy ? "single program (libxdp dispatcher unavailable, see "
				     "'xpile-loader features')" :
				     "in libxdp's dispatcher",
		       info.pin_path);
	xp_steer_close(s, false);
	return 0;
}

static int run_unload(struct loader_args *a)
{
	struct xp_steer_opts o = { .sz = sizeof(o),
				   .ifname = a->ifname,
				   .pin_path = a->pin_path,
				   .attach_existing = true };
	struct xp_user u[8];
	struct xp_steer *s;
	char who[160], why[256];
	int err, n, k = 0;

	if (!if_nametoindex(a->ifname))
		return ut_say(1, "interface %s not found in this network namespace", a->ifname);
	/* Quietly: stale pins are the one failure unload repairs itself. */
	o.errbuf = why;
	o.errbuf_sz = sizeof(why);
	err = xp_steer_open(&o, &s);
	if (err == -EPERM)
		return ut_say(1, "%s: unload " NEEDS_ROOT, a->ifname);
	if (err) {
		err = xp_steer_remove_stale(a->ifname, a->pin_path);
		if (err == -EBUSY)
			return ut_say(1,
				      "%s: pinned program still attached but cannot be opened; "
				      "xdp-loader unload %s --all",
				      a->ifname, a->ifname);
		if (err)
			return ut_say(1, "%s: xpile steer is not loaded here (%s)", a->ifname,
				      strerror(-err));
		xp_wire_plan_remove(a->ifname);
		if (a->json)
			printf("{\"ifname\":\"%s\",\"unloaded\":false,\"stale_pins_removed\":true}\n",
			       a->ifname);
		else
			printf("%s: not loaded; removed stale pins if any\n", a->ifname);
		return 0;
	}
	/* An engine serving through it would go on with no packets: refuse unless told. */
	n = xp_users_list(a->ifname, u, 8);
	for (int i = 0; i < n; i++)
		if (u[i].prog_id == xp_steer_prog_id(s))
			u[k++] = u[i];
	if (k && !a->force) {
		xp_users_format(u, k, who, sizeof(who));
		xp_steer_close(s, false);
		return ut_say(1,
			      "%s: the steer program is in use by %s; stop that engine first, or "
			      "unload --force (the engine then stops: exit status 4)",
			      a->ifname, who);
	}
	xp_steer_close(s, true);
	xp_wire_plan_remove(a->ifname);
	if (a->json)
		printf("{\"ifname\":\"%s\",\"unloaded\":true}\n", a->ifname);
	else
		printf("%s: xp_steer unloaded, pins removed\n", a->ifname);
	return 0;
}

/* Without the privileges to open pins nobody can tell xpile's program from another. */
static bool status_blind;

static void status_one(struct loader_args *a, const char *ifname, int ifindex, bool *first)
{
	struct bpf_xdp_query_opts q = { .sz = sizeof(q) };
	struct xp_steer_opts o = {
		.sz = sizeof(o), .ifname = ifname, .pin_path = a->pin_path, .attach_existing = true
	};
	struct bpf_prog_info pi = { 0 };
	struct xp_steer_info info = { 0 };
	char dflt[64] = "", name[32] = "-";
	__u32 len = sizeof(pi), id, nrules = 0;
	struct xp_rule *rules = NULL;
	struct xp_action da;
	struct xp_steer *s = NULL;
	bool blind = false;
	char why[256];
	int fd, err;

	if (bpf_xdp_query(ifindex, 0, &q))
		return;
	id = q.drv_prog_id ?: q.skb_prog_id ?: q.prog_id;
	fd = id ? bpf_prog_get_fd_by_id(id) : -1;
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &len))
		snprintf(name, sizeof(name), "%s", pi.name);
	if (fd >= 0)
		close(fd);
	if (id) {
		/* Quietly: another program, or one we may not open, is a status too. */
		o.errbuf = why;
		o.errbuf_sz = sizeof(why);
		err = xp_steer_open(&o, &s);
		blind = err == -EPERM;
		status_blind |= blind;
		if (!err) {
			static struct xp_rule buf[XP_STEER_MAX_RULES];

			rules = buf;
			xp_steer_info_get(s, &info);
			xp_steer_rules_get(s, rules, NULL, XP_STEER_MAX_RULES, &nrules);
			if (!xp_steer_default_get(s, &da, NULL))
				xp_action_format(&da, dflt, sizeof(dflt));
			xp_steer_close(s, false);
		}
	}
	if (a->json) {
		printf("%s{\"ifname\":\"%s\",\"ifindex\":%d,\"prog_id\":%u,\"prog_name\":\"%s\","
		       "\"mode\":\"%s\",\"xpile\":%s",
		       *first ? "" : ",", ifname, ifindex, id, id ? name : "",
		       q.attach_mode == XDP_ATTACHED_DRV  ? "native" :
		       q.attach_mode == XDP_ATTACHED_SKB  ? "skb" :
		       q.attach_mode == XDP_ATTACHED_NONE ? "none" :
							    "multi",
		       rules ? "true" :
		       blind ? "null" :
			       "false");
		if (rules)
			printf(",\"rules\":%u,\"default\":\"%s\",\"dispatcher\":%s,\"pin_path\":\"%s\"",
			       nrules, dflt, info.legacy ? "false" : "true", info.pin_path);
		printf("}");
	} else if (!id) {
		printf("%-16s %-10s -\n", ifname, "none");
	} else {
		printf("%-16s %-10s %-8u %-16s %s", ifname,
		       q.attach_mode == XDP_ATTACHED_DRV ? "native" :
		       q.attach_mode == XDP_ATTACHED_SKB ? "skb" :
							   "multi",
		       id, name,
		       rules ? "" :
		       blind ? "(cannot tell: needs root)\n" :
			       "(not xpile's)\n");
		if (rules)
			printf("xpile: %u rules, default %s, %s, pins %s\n", nrules, dflt,
			       info.legacy ? "single program" : "dispatcher", info.pin_path);
	}
	*first = false;
}

static int run_status(struct loader_args *a)
{
	struct if_nameindex *ifs, *i;
	bool first = true;
	int idx;

	/* A missing interface is said before anything is printed: an error alone. */
	idx = a->ifname ? (int)if_nametoindex(a->ifname) : 0;
	if (a->ifname && !idx)
		return ut_say(1, "interface %s not found in this network namespace", a->ifname);
	if (a->json)
		printf("[");
	else
		printf("%-16s %-10s %-8s %-16s %s\n", "INTERFACE", "MODE", "PROG-ID", "PROGRAM",
		       "XPILE");
	if (a->ifname) {
		status_one(a, a->ifname, idx, &first);
	} else {
		ifs = if_nameindex();
		for (i = ifs; i && i->if_index; i++)
			status_one(a, i->if_name, i->if_index, &first);
		if_freenameindex(ifs);
	}
	if (a->json)
		printf("]\n");
	if (status_blind)
		return ut_say(
			1,
			"status: cannot tell which XDP programs are xpile's: reading the pins " NEEDS_ROOT);
	return 0;
}

/* RSS and ntuple support: what `wire` can do in the NIC. */
static void steering_features(struct loader_args *a)
{
	struct xp_ethtool_caps c;

	xp_ethtool_caps_probe(a->ifname, &c);
	if (a->json) {
		printf(",\"rss\":%s,\"rss_table_size\":%u,\"ntuple\":%s,\"ntuple_rules\":%u,"
		       "\"ntuple_table_size\":%u,\"ntuple_feature\":\"%s\"}\n",
		       c.rss ? "true" : "false", c.rss_size, c.ntuple ? "true" : "false",
		       c.ntuple_rules, c.ntuple_size,
		       !c.ntuple_feature_known ? "unknown" :
		       c.ntuple_on	       ? "on" :
		       c.ntuple_fixed	       ? "off-fixed" :
						 "off");
		return;
	}
	if (c.rss)
		printf("  RSS indirection     yes, %u entries (wire spreads it over the wired "
		       "queues)\n",
		       c.rss_size);
	else
		printf("  RSS indirection     no (ETHTOOL_GRXFHINDIR: %s)\n", strerror(-c.rss_err));
	if (!c.ntuple)
		printf("  ntuple filters      no (ETHTOOL_GRXCLSRLCNT: %s); steer in XDP instead\n",
		       strerror(-c.ntuple_err));
	else if (c.ntuple_feature_known && !c.ntuple_on)
		printf("  ntuple filters      table of %u, but switched off%s%s%s\n", c.ntuple_size,
		       c.ntuple_fixed ? " (fixed)" : ": ethtool -K ",
		       c.ntuple_fixed ? "" : a->ifname, c.ntuple_fixed ? "" : " ntuple on");
	else
		printf("  ntuple filters      yes, %u of %u in use (wire --flow)\n", c.ntuple_rules,
		       c.ntuple_size);
}

static int run_features(struct loader_args *a)
{
	struct xp_if_features f;

	if (xp_if_features_probe(a->ifname, &f))
		return 1;
	if (a->json) {
		printf("{\"ifname\":\"%s\",\"native_xdp\":%s,\"xsk_zerocopy\":%s,\"multibuf\":%s,"
		       "\"redirect_target\":%s,\"features_from_netlink\":%s,\"rx_queues\":%u,"
		       "\"tx_queues\":%u,\"combined\":%u,\"max_combined\":%u,\"dispatcher\":%s,"
		       "\"dispatcher_reason\":\"%s\"",
		       a->ifname, f.native_xdp ? "true" : "false",
		       f.xsk_zerocopy ? "true" : "false", f.multibuf ? "true" : "false",
		       f.redirect_target ? "true" : "false", f.features_known ? "true" : "false",
		       f.rx_queues, f.tx_queues, f.combined, f.max_combined,
		       f.dispatcher ? "true" : "false", f.dispatcher_why);
		steering_features(a);
		return 0;
	}
	printf("%s (%s)\n", a->ifname,
	       f.features_known ? "XDP features reported by the kernel" :
				  "XDP features probed by attaching");
	printf("  native XDP          %s\n", f.native_xdp ? "yes" : "no (use --mode skb)");
	printf("  AF_XDP zero-copy    %s\n", f.xsk_zerocopy ? "yes" : "no (copy mode)");
	printf("  multi-buffer        %s\n", f.multibuf ? "yes" : "no");
	printf("  redirect target     %s\n", f.redirect_target ? "yes" : "no");
	if (f.channels_known)
		printf("  channels            rx %u tx %u combined %u (max rx %u tx %u combined "
		       "%u)\n",
		       f.rx_queues, f.tx_queues, f.combined, f.max_rx, f.max_tx, f.max_combined);
	else
		printf("  queues              rx %u tx %u (from sysfs)\n", f.rx_queues,
		       f.tx_queues);
	if (f.dispatcher)
		printf("  libxdp dispatcher   yes (multiple XDP programs can share %s)\n",
		       a->ifname);
	else
		printf("  libxdp dispatcher   no: %s; xpile runs as the only XDP program\n",
		       f.dispatcher_why);
	steering_features(a);
	return 0;
}

/* libxdp's words (drv, generic) are accepted too; help and errors use ours. */
static const struct cli_name mode_names[] = {
	CLI_NAME("native", XP_STEER_MODE_NATIVE), CLI_ALIAS("drv", XP_STEER_MODE_NATIVE),
	CLI_NAME("skb", XP_STEER_MODE_SKB),	  CLI_ALIAS("generic", XP_STEER_MODE_SKB),
	CLI_NAME("auto", XP_STEER_MODE_AUTO),	  { 0 },
};

/* --default "ACTION": the words of a rule's action ("drop", "redirect eth1", "xsk slot 2"). */
static int parse_default(const struct cli_opt *opt, const char *v, void *cfg, char *why, size_t len)
{
	struct loader_args *a = cfg;
	char buf[128], *argv[4], *sp, *w;
	int argc = 0, used = 0;

	if (strlen(v) >= sizeof(buf)) {
		snprintf(why, len, "expected an action such as drop or \"redirect IFACE\"");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	for (w = strtok_r(buf, " ", &sp); w; w = strtok_r(NULL, " ", &sp)) {
		if (argc == 3) {
			snprintf(why, len, "an action is at most 3 words (xsk slot N)");
			return -1;
		}
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	if (!argc) {
		snprintf(why, len, "expected an action such as drop");
		return -1;
	}
	if (xp_action_parse(argc, argv, &used, &a->dflt, why, len))
		return -1;
	if (used != argc) {
		snprintf(why, len, "'%s' follows the action", argv[used]);
		return -1;
	}
	a->has_dflt = true;
	return 0;
}

static const struct cli_opt load_opts[] = {
	OPT("mode", ENUM, mode, "MODE", "native, skb or auto (default auto: native, else skb)",
	    .short_name = 'm', .names = mode_names),
	OPT_PIN,
	OPT("force", FLAG, force, NULL, "Replace an XDP program that xpile did not load",
	    .short_name = 'F'),
	OPT("default", FUNC, dflt, "ACTION",
	    "Action when no rule matches (default \"xsk\": the queue's socket, else pass)",
	    .short_name = 'd', .parse = parse_default),
	OPT_OBJ("BPF object"),
	OPT_JSON,
	{ 0 },
};

LOADER_IFACE_COMMAND(
	cmd_load, run_load, "load", "Attach the xpile steer program to IFACE and pin its maps",
	load_opts,
	.description =
		"Attaches through libxdp: inside libxdp's multi-program dispatcher where the kernel "
		"allows freplace, else as the interface's single XDP program. The program and "
		"every map are pinned so that 'rule', 'stats', 'unload' and the engine find "
		"them, also when each runs under its own 'ip netns exec NS' or is started any "
		"other way (see FILES). A bpffs is mounted on the host's /sys/fs/bpf if none "
		"is (never a private one). Directories that network namespaces since deleted "
		"left in bpffs and /run/xpile are removed first. With no rules, every packet takes the "
		"default action: by default the AF_XDP socket of its RX queue, or the kernel "
		"while that queue has no socket.",
	.examples = "xpile-loader load eth0\nxpile-loader load --mode skb --default pass veth0");

static const struct cli_opt unload_opts[] = {
	OPT_PIN,
	OPT_JSON,
	OPT("force", FLAG, force, NULL,
	    "Unload even while an engine serves through the program (it then stops)",
	    .short_name = 'F'),
	{ 0 },
};

LOADER_IFACE_COMMAND(
	cmd_unload, run_unload, "unload", "Detach the steer program from IFACE and remove its pins",
	unload_opts,
	.description =
		"Detaches only xpile's own program, removes the pins and the wiring "
		"plan, and cleans stale pins of a program that is no longer attached. Refuses "
		"while an engine (xpile run) serves through the program, naming its pid, "
		"unless --force.",
	.examples = "xpile-loader unload eth0");

static const struct cli_opt status_opts[] = { OPT_PIN, OPT_JSON, { 0 } };

const struct loader_cmd cmd_status = {
	CLI_COMMAND(
		"status", "[OPTIONS] [IFACE]", "Show XDP programs on interfaces and xpile's state",
		status_opts, .min_args = 0, .max_args = 1, .check = loader_check_iface,
		.description =
			"Lists every interface of this network namespace (or IFACE) with its "
			"XDP program; for xpile's, the rule count, default action, mode and pin "
			"directory.",
		.examples = "xpile-loader status\nxpile-loader status --json eth0"),
	run_status,
};

static const struct cli_opt features_opts[] = { OPT_JSON, { 0 } };

LOADER_IFACE_COMMAND(
	cmd_features, run_features, "features", "Probe what IFACE and this kernel support",
	features_opts,
	.description =
		"Native XDP, AF_XDP zero-copy, multi-buffer and redirect support come from the "
		"kernel's netdev netlink family when it has one (>= 6.3), else from attaching a "
		"trivial program. Channels come from ETHTOOL_GCHANNELS (sysfs queues otherwise). "
		"The libxdp dispatcher line reports whether the kernel accepts the freplace "
		"programs it needs; when it does not, xpile runs as the only XDP program. "
		"RSS and ntuple lines say what 'wire' can steer in the NIC: the indirection "
		"table (ETHTOOL_GRXFHINDIR) and the ntuple rule table (ETHTOOL_GRXCLSRLCNT, with "
		"the rx-ntuple-filter feature from ETHTOOL_GFEATURES).",
	.examples = "xpile-loader features eth0");
