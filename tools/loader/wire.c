// SPDX-License-Identifier: BSD-3-Clause
/* xpile-loader wire: queue count, IRQ affinity, RSS and flows (flow.c), and the queue -> core
 * plan. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "loader.h"

static int ethtool(const char *ifname, void *data)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

/* Sets the channel count to cover queues 0..maxq; reports what it did or skipped. */
static void set_channels(struct loader_args *a, struct out *o, unsigned need)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int err = ethtool(a->ifname, &ch);

	if (err) {
		out_step(o, "channels", "skipped, %s has no ETHTOOL_GCHANNELS (%s)", a->ifname,
			 strerror(-err));
		return;
	}
	if (ch.max_combined) {
		if (ch.combined_count >= need) {
			out_step(o, "channels", "%u combined already cover %u queues",
				 ch.combined_count, need);
			return;
		}
		if (need > ch.max_combined) {
			out_step(o, "channels", "skipped, %u queues needed, driver max combined %u",
				 need, ch.max_combined);
			return;
		}
		ch.combined_count = need;
	} else if (ch.max_rx) {
		if (ch.rx_count >= need) {
			out_step(o, "channels", "%u rx already cover %u queues", ch.rx_count, need);
			return;
		}
		if (need > ch.max_rx) {
			out_step(o, "channels", "skipped, %u queues needed, driver max rx %u", need,
				 ch.max_rx);
			return;
		}
		ch.rx_count = need;
		if (ch.max_tx && ch.tx_count < need && need <= ch.max_tx)
			ch.tx_count = need;
	} else {
		out_step(o, "channels", "skipped, %s reports no settable channels", a->ifname);
		return;
	}
	ch.cmd = ETHTOOL_SCHANNELS;
	err = ethtool(a->ifname, &ch);
	if (err)
		out_step(o, "channels", "skipped, driver refused ETHTOOL_SCHANNELS to %u (%s)",
			 need, strerror(-err));
	else
		out_step(o, "channels", "set to %u", need);
}

/* RX queues @ifname has now and at most (ethtool -L), from ETHTOOL_GCHANNELS, else
 * from /sys/class/net/IF/queues; -ENOENT when neither tells. */
static int rx_queues(const char *ifname, unsigned *cur, unsigned *max)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;

	if (!ethtool(ifname, &ch) && ch.combined_count + ch.rx_count) {
		/* rx-only channels come on top of combined ones */
		*cur = ch.combined_count + ch.rx_count;
		*max = ch.max_combined + ch.max_rx;
		if (*max < *cur)
			*max = *cur;
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	*cur = 0;
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, "rx-", 3))
			(*cur)++;
	closedir(dir);
	*max = *cur;
	return *cur ? 0 : -ENOENT;
}

/* A plan for a queue the interface lacks would send the engine to a queue it cannot
 * bind: refuse it before changing anything. */
static int check_queues(struct loader_args *a, struct out *o, unsigned maxq, bool after)
{
	unsigned cur, max;

	if (rx_queues(a->ifname, &cur, &max)) {
		if (after)
			out_step(o, "queues", "not checked, %s reports no queue count", a->ifname);
		return 0;
	}
	if (maxq <= (after ? cur : max))
		return 0;
	if (after)
		return ut_say(1,
			      "wire: queue %u does not exist: %s has %u RX queue%s and kept them "
			      "(see above); pick queues below %u",
			      maxq - 1, a->ifname, cur, cur == 1 ? "" : "s", cur) +
		       1;
	return ut_say(1,
		      "wire: queue %u does not exist: %s has %u RX queue%s (at most %u with "
		      "ethtool -L); pick queues below %u",
		      maxq - 1, a->ifname, cur, cur == 1 ? "" : "s", max, max) +
	       1;
}

/* IRQs of the device: its MSI vectors from sysfs, matched to queues by their names in
 * /proc/interrupts ("IFACE-TxRx-N", "IFACE-rx-N", ...) when possible. */
static int queue_irq(const char *ifname, unsigned queue)
{
	char line[1024], want[IF_NAMESIZE + 32];
	FILE *f = fopen("/proc/interrupts", "re");
	int irq = -1;

	if (!f)
		return -1;
	while (irq < 0 && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');
		char *dash;

		if (!name)
			continue;
		name++;
		name[strcspn(name, "\n")] = 0;
		snprintf(want, sizeof(want), "%s-", ifname);
		if (!strstr(name, want)) /* "eth0-TxRx-3", "ice-eth0-TxRx-3" */
			continue;
		dash = strrchr(name, '-');
		if (dash && (unsigned)atoi(dash + 1) == queue && dash[1] >= '0' && dash[1] <= '9')
			irq = atoi(line);
	}
	(void)fclose(f); /* read only: nothing to lose */
	return irq;
}

static bool has_irqs(const char *ifname)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/class/net/%s/device/msi_irqs", ifname);
	return !access(path, F_OK);
}

/* The plan as JSON members, after the steps. */
static void plan_json(struct out *o, const struct xp_wire_plan *p, const char *path)
{
	fprintf(o->more, ",\"plan\":[");
	for (__u32 i = 0; i < p->n; i++)
		fprintf(o->more, "%s{\"queue\":%u,\"core\":%u}", i ? "," : "", p->map[i].queue,
			p->map[i].core);
	fprintf(o->more, "],\"plan_path\":");
	json_str(o->more, path);
}

static int wire_queues(struct loader_args *a, struct out *o)
{
	static struct xp_wire_plan plan;
	const __u32 *q = a->queues, *c = a->cores;
	int nq = (int)a->nqueues, nc = (int)a->ncores;
	char path[PATH_MAX];
	unsigned maxq = 0;
	bool irqs;

	/* The lists come parsed (each queue once, cores that exist); the steer program's
	 * queue tables bound what xpile can serve. */
	for (int i = 0; i < nq; i++) {
		if (q[i] >= XP_STEER_MAX_QUEUES)
			return ut_say(1, "wire: queue %u: xpile serves queues 0..%d", q[i],
				      XP_STEER_MAX_QUEUES - 1) +
			       1;
		if (q[i] + 1 > maxq)
			maxq = q[i] + 1;
	}
	if (check_queues(a, o, maxq, false))
		return 2;
	if (!o->json)
		printf("%s: wiring %d queue%s to %d core%s\n", a->ifname, nq, nq == 1 ? "" : "s",
		       nc, nc == 1 ? "" : "s");
	set_channels(a, o, maxq);
	if (check_queues(a, o, maxq, true))
		return 2;
	irqs = has_irqs(a->ifname);
	plan.n = nq;
	for (int i = 0; i < nq; i++) {
		/* More queues than cores: cores take queues round-robin. */
		plan.map[i].queue = q[i];
		plan.map[i].core = c[i % nc];
		if (irqs) {
			int irq = queue_irq(a->ifname, q[i]);
			char p[64], v[16];
			FILE *f;

			snprintf(p, sizeof(p), "/proc/irq/%d/smp_affinity_list", irq);
			snprintf(v, sizeof(v), "%u\n", plan.map[i].core);
			if (irq < 0 || !(f = fopen(p, "we"))) {
				out_step(o, "irq",
					 "queue %u: no IRQ found by name, affinity unchanged",
					 q[i]);
				continue;
			}
			if (fputs(v, f) < 0 || fclose(f))
				out_step(o, "irq", "queue %u: IRQ %d affinity refused (%s)", q[i],
					 irq, strerror(errno));
			else
				out_step(o, "irq", "queue %u: IRQ %d -> core %u", q[i], irq,
					 plan.map[i].core);
		}
	}
	if (!irqs)
		out_step(o, "irq", "skipped, %s has no device IRQs (virtual device)", a->ifname);
	wire_rss(a, o, q, nq);
	if (xp_wire_plan_write(a->ifname, &plan))
		return 1;
	xp_wire_plan_path(a->ifname, path, sizeof(path));
	out_step(o, "plan", "written to %s", path);
	if (o->json)
		plan_json(o, &plan, path);
	for (__u32 i = 0; a->verbose && !o->json && i < plan.n; i++)
		printf("    queue %u -> core %u\n", plan.map[i].queue, plan.map[i].core);
	return 0;
}

static int run_wire(struct loader_args *a)
{
	struct flow_req fr;
	struct out o;
	int err;

	if (!if_nametoindex(a->ifname))
		return ut_say(1, "interface %s not found in this network namespace", a->ifname);
	/* --flow udp dport 4789 queue 2: the words after IFACE continue the flow, so it
	 * may be written as words (as 'rule add') or as one quoted argument. */
	if (a->argc) {
		static char flow[1024];
		size_t used = (size_t)snprintf(flow, sizeof(flow), "%s", a->flow);

		for (int i = 0; i < a->argc && used < sizeof(flow); i++)
			used += (size_t)snprintf(flow + used, sizeof(flow) - used, " %s",
						 a->argv[i]);
		if (used >= sizeof(flow))
			return ut_say(1,
				      "wire: --flow: longer than %zu bytes; a flow is a few words",
				      sizeof(flow) - 1) +
			       1;
		a->flow = flow;
	}
	/* All input is read, and the NIC asked whether it can, before anything changes. */
	err = flow_req_parse(a, &fr);
	if (!err)
		err = flow_req_check(a, &fr);
	if (!err)
		err = out_open(&o, a->json);
	if (err)
		return err;
	if (a->nqueues)
		err = wire_queues(a, &o);
	if (!err)
		err = wire_flows(a, &o, &fr);
	if (!err)
		out_print(&o, a->ifname);
	out_close(&o);
	return err;
}

/* The lists go together, or flows are asked for; IFACE is an interface name. */
static int wire_check(const struct cli_cmd *c, void *cfg, const struct cli_args *res, char *why,
		      size_t len)
{
	const struct loader_args *a = cfg;

	if (res->argc > 1 && !a->flow) {
		snprintf(why, len, "unexpected argument '%s' (the words of a flow follow --flow)",
			 res->argv[1]);
		return -1;
	}
	if (!a->nqueues != !a->ncores ||
	    (!a->nqueues && !a->flow && !a->flow_del && !a->flow_list)) {
		snprintf(why, len,
			 "--queues LIST and --cores LIST go together (or give --flow, --flow-del "
			 "or --flow-list)");
		return -1;
	}
	return loader_check_iface(c, cfg, res, why, len);
}

static const struct cli_opt wire_opts[] = {
	OPT("queues", LIST, queues, "LIST", "RX queues to serve, e.g. 0-3 or 0,2 (each once)",
	    .short_name = 'q', .count_off = offsetof(struct loader_args, nqueues),
	    .cap = XP_WIRE_MAX, .max = 4095, .flags = CLI_F_UNIQUE),
	OPT("cores", LIST, cores, "LIST",
	    "Cores serving them, paired in order (round-robin if fewer)", .short_name = 'c',
	    .count_off = offsetof(struct loader_args, ncores), .cap = XP_WIRE_MAX,
	    .flags = CLI_F_CPUS),
	OPT("no-rss", FLAG, no_rss, NULL, "Leave the RSS indirection table as it is"),
	OPT("flow", STR, flow, "FLOW",
	    "Add an ntuple rule: FLOW to a queue, e.g. 'udp dport 4789 queue 2', one quoted "
	    "argument or words (the words after IFACE continue it: wire eth0 --flow udp dport "
	    "4789 queue 2)",
	    .short_name = 'f'),
	OPT("flow-del", STR, flow_del, "ID", "Delete the ntuple rule with this id"),
	OPT("flow-list", FLAG, flow_list, NULL, "List the ntuple rules", .short_name = 'l'),
	OPT_JSON,
	{ 0 },
};

const struct loader_cmd cmd_wire = {
	CLI_COMMAND(
		"wire",
		"[--queues LIST --cores LIST] [--flow FLOW] [--flow-del ID] [--flow-list] IFACE",
		"Wire IFACE's queues to cores, spread flows over them, steer flows to queues",
		wire_opts, .min_args = 1, .max_args = -1, .words_after = 1, .check = wire_check,
		.description =
			"Sets the channel count through ETHTOOL_SCHANNELS when the driver allows it, pins "
			"each queue's IRQ to its core through /proc/irq/N/smp_affinity_list when the "
			"device has IRQs, spreads the RSS indirection table over the wired queues with "
			"equal weight (ETHTOOL_SRXFHINDIR; --no-rss keeps it; 'ethtool -X IFACE default' "
			"undoes it), and writes the queue -> core plan the engine reads from "
			"/run/xpile/ns<inode>/IFACE/wire.plan. On devices without these knobs (veth) "
			"it says what it skipped and still writes the plan. 'unload' removes the plan.\n\n"
			"--flow adds an ntuple rule (ETHTOOL_SRXCLSRLINS): the NIC itself delivers the "
			"flow to one queue, or drops it. FLOW takes the match words of 'rule':\n"
			" [ip|ipv6] [tcp|udp|icmp|icmpv6|proto N] [src PREFIX] [dst PREFIX]\n"
			" [sport N[-M]] [dport N[-M]] (queue N | drop) [id N]\n"
			"IPv4 unless ipv6 or an IPv6 address is given; ports need tcp or udp and a range "
			"must be an aligned block (4096-8191). id N places the rule in the NIC's table "
			"(lower ids match first; default: the last free place). A NIC without ntuple "
			"filters (veth) is said so in one line and nothing changes. 'unload' leaves "
			"the RSS table and the flows in the NIC.",
		.examples =
			"xpile-loader wire eth0 --queues 0-3 --cores 2-5\n"
			"xpile-loader wire eth0 --flow 'udp dport 4789 queue 2'\n"
			"xpile-loader wire eth0 --flow 'ipv6 tcp dst 2001:db8::/64 dport 443 queue 3'\n"
			"xpile-loader wire eth0 --flow-list\n"
			"xpile-loader wire eth0 --flow-del 1023"),
	run_wire,
};
