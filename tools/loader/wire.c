// SPDX-License-Identifier: BSD-3-Clause
/* xpile-loader wire: queue count, IRQ affinity, and the queue -> core plan. */
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
static void set_channels(struct args *a, unsigned need)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int err = ethtool(a->ifname, &ch);

	if (err) {
		printf("  channels: skipped, %s has no ETHTOOL_GCHANNELS (%s)\n", a->ifname,
		       strerror(-err));
		return;
	}
	if (ch.max_combined) {
		if (ch.combined_count >= need) {
			printf("  channels: %u combined already cover %u queues\n",
			       ch.combined_count, need);
			return;
		}
		if (need > ch.max_combined) {
			printf("  channels: skipped, %u queues needed, driver max combined %u\n",
			       need, ch.max_combined);
			return;
		}
		ch.combined_count = need;
	} else if (ch.max_rx) {
		if (ch.rx_count >= need) {
			printf("  channels: %u rx already cover %u queues\n", ch.rx_count, need);
			return;
		}
		if (need > ch.max_rx) {
			printf("  channels: skipped, %u queues needed, driver max rx %u\n", need,
			       ch.max_rx);
			return;
		}
		ch.rx_count = need;
		if (ch.max_tx && ch.tx_count < need && need <= ch.max_tx)
			ch.tx_count = need;
	} else {
		printf("  channels: skipped, %s reports no settable channels\n", a->ifname);
		return;
	}
	ch.cmd = ETHTOOL_SCHANNELS;
	err = ethtool(a->ifname, &ch);
	if (err)
		printf("  channels: skipped, driver refused ETHTOOL_SCHANNELS to %u (%s)\n", need,
		       strerror(-err));
	else
		printf("  channels: set to %u\n", need);
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
	fclose(f);
	return irq;
}

static bool has_irqs(const char *ifname)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/class/net/%s/device/msi_irqs", ifname);
	return !access(path, F_OK);
}

static int run_wire(struct args *a)
{
	static struct xp_wire_plan plan;
	const __u32 *q = a->queues, *c = a->cores;
	int nq = (int)a->nqueues, nc = (int)a->ncores;
	char path[PATH_MAX];
	unsigned maxq = 0;
	bool irqs;

	if (!if_nametoindex(a->ifname))
		return fail("interface %s not found in this network namespace", a->ifname);
	printf("%s: wiring %d queue%s to %d core%s\n", a->ifname, nq, nq == 1 ? "" : "s", nc,
	       nc == 1 ? "" : "s");
	for (int i = 0; i < nq; i++)
		if (q[i] + 1 > maxq)
			maxq = q[i] + 1;
	set_channels(a, maxq);
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
				printf("  irq: queue %u: no IRQ found by name, affinity unchanged\n",
				       q[i]);
				continue;
			}
			if (fputs(v, f) < 0 || fclose(f))
				printf("  irq: queue %u: IRQ %d affinity refused (%s)\n", q[i], irq,
				       strerror(errno));
			else
				printf("  irq: queue %u: IRQ %d -> core %u\n", q[i], irq,
				       plan.map[i].core);
		}
	}
	if (!irqs)
		printf("  irq: skipped, %s has no device IRQs (virtual device)\n", a->ifname);
	if (xp_wire_plan_write(a->ifname, &plan))
		return 1;
	xp_wire_plan_path(a->ifname, path, sizeof(path));
	printf("  plan: written to %s\n", path);
	for (__u32 i = 0; a->verbose && i < plan.n; i++)
		printf("    queue %u -> core %u\n", plan.map[i].queue, plan.map[i].core);
	return 0;
}

/* Both lists are required (each is checked as it is parsed); IFACE is an interface name. */
static int wire_check(const struct cli_cmd *c, void *cfg, const struct cli_args *res, char *why,
		      size_t len)
{
	const struct args *a = cfg;

	if (!a->nqueues || !a->ncores) {
		snprintf(why, len, "--queues LIST and --cores LIST are required");
		return -1;
	}
	return loader_check_iface(c, cfg, res, why, len);
}

static const struct cli_opt wire_opts[] = {
	OPT("queues", LIST, queues, "LIST", "RX queues to serve, e.g. 0-3 or 0,2 (each once)",
	    .short_name = 'q', .count_off = offsetof(struct args, nqueues), .cap = XP_WIRE_MAX,
	    .max = 4095, .flags = CLI_F_UNIQUE),
	OPT("cores", LIST, cores, "LIST",
	    "Cores serving them, paired in order (round-robin if fewer)", .short_name = 'c',
	    .count_off = offsetof(struct args, ncores), .cap = XP_WIRE_MAX, .flags = CLI_F_CPUS),
	{ 0 },
};

const struct cmd cmd_wire = {
	CLI_COMMAND(
		"wire", "--queues LIST --cores LIST IFACE", "Wire IFACE's queues to cores",
		wire_opts, .min_args = 1, .max_args = 1, .check = wire_check,
		.description =
			"Sets the channel count through ETHTOOL_SCHANNELS when the driver allows it, pins "
			"each queue's IRQ to its core through /proc/irq/N/smp_affinity_list when the "
			"device has IRQs, and writes the queue -> core plan the engine reads from "
			"/run/xpile/[ns<inode>/]IFACE/wire.plan. On devices without these knobs (veth) "
			"it says what it skipped and still writes the plan. 'unload' removes the plan.",
		.examples = "xpile-loader wire eth0 --queues 0-3 --cores 2-5"),
	run_wire,
};
