/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fake NIC driver behind SIOCETHTOOL, for what no NIC on the test machine has: 4 RX
 * rings, a 128-entry RSS indirection table and a 16-rule ntuple table. Including this
 * defines ioctl(), which then answers SIOCETHTOOL for one interface ($XPILE_FAKENIC_IF,
 * default "lo") and passes every other request to the kernel: in a test binary
 * (tests/unit/test_wire_ethtool_nic.c) or in a preload shim built from it
 * (tests/net/test_wire_flow.sh). Unknown commands get EOPNOTSUPP, as from a driver
 * without the operation. $XPILE_FAKENIC_NTUPLE=off reports the ntuple feature off.
 */
#ifndef XPILE_TEST_FAKENIC_H
#define XPILE_TEST_FAKENIC_H

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#define RINGS 4
#define INDIR 128
#define RULES 16

static struct {
	bool veth; /* answer like veth: EOPNOTSUPP */
	bool loc_special; /* the driver picks locations (RX_CLS_LOC_SPECIAL) */
	__u32 indir[INDIR];
	int indir_sets;
	bool used[RULES];
	struct ethtool_rx_flow_spec rule[RULES];
	int inserts;
} nic;

static int driver(void *data)
{
	__u32 cmd;

	memcpy(&cmd, data, 4);
	if (nic.veth && cmd != ETHTOOL_GDRVINFO)
		return -EOPNOTSUPP;
	switch (cmd) {
	case ETHTOOL_GDRVINFO:
		snprintf(((struct ethtool_drvinfo *)data)->driver, 32, "%s",
			 nic.veth ? "veth" : "fakenic");
		return 0;
	case ETHTOOL_GRXRINGS:
		((struct ethtool_rxnfc *)data)->data = RINGS;
		return 0;
	case ETHTOOL_GRXFHINDIR: {
		struct ethtool_rxfh_indir *r = data;

		if (r->size && r->size != INDIR)
			return -EINVAL;
		if (r->size)
			memcpy(r->ring_index, nic.indir, sizeof(nic.indir));
		r->size = INDIR;
		return 0;
	}
	case ETHTOOL_SRXFHINDIR: {
		struct ethtool_rxfh_indir *r = data;

		if (r->size != INDIR)
			return -EINVAL;
		for (int i = 0; i < INDIR; i++)
			if (r->ring_index[i] >= RINGS)
				return -EINVAL;
		memcpy(nic.indir, r->ring_index, sizeof(nic.indir));
		nic.indir_sets++;
		return 0;
	}
	case ETHTOOL_GRXCLSRLCNT:
	case ETHTOOL_GRXCLSRLALL: {
		struct ethtool_rxnfc *n = data;
		__u32 cnt = 0, room = n->rule_cnt;

		for (__u32 l = 0; l < RULES; l++)
			if (nic.used[l]) {
				if (cmd == ETHTOOL_GRXCLSRLALL) {
					if (cnt >= room)
						return -EMSGSIZE;
					n->rule_locs[cnt] = l;
				}
				cnt++;
			}
		n->rule_cnt = cnt;
		n->data = RULES | (nic.loc_special ? RX_CLS_LOC_SPECIAL : 0);
		return 0;
	}
	case ETHTOOL_GRXCLSRULE: {
		struct ethtool_rxnfc *n = data;

		if (n->fs.location >= RULES || !nic.used[n->fs.location])
			return -ENOENT;
		n->fs = nic.rule[n->fs.location];
		return 0;
	}
	case ETHTOOL_SRXCLSRLINS: {
		struct ethtool_rxnfc *n = data;
		__u32 loc = n->fs.location;

		if (loc == RX_CLS_LOC_ANY && nic.loc_special)
			for (loc = 0; loc < RULES && nic.used[loc]; loc++)
				;
		if (loc >= RULES)
			return -EINVAL;
		if (n->fs.ring_cookie != RX_CLS_FLOW_DISC && n->fs.ring_cookie >= RINGS)
			return -EINVAL;
		n->fs.location = loc;
		nic.rule[loc] = n->fs;
		nic.used[loc] = true;
		nic.inserts++;
		return 0;
	}
	case ETHTOOL_SRXCLSRLDEL: {
		struct ethtool_rxnfc *n = data;

		if (n->fs.location >= RULES || !nic.used[n->fs.location])
			return -ENOENT;
		nic.used[n->fs.location] = false;
		return 0;
	}
	case ETHTOOL_GSSET_INFO: {
		struct ethtool_sset_info *s = data;

		s->sset_mask = 1ULL << ETH_SS_FEATURES;
		s->data[0] = 40;
		return 0;
	}
	case ETHTOOL_GSTRINGS: {
		struct ethtool_gstrings *g = data;

		memset(g->data, 0, 40 * ETH_GSTRING_LEN);
		snprintf((char *)g->data + 35 * ETH_GSTRING_LEN, ETH_GSTRING_LEN,
			 "rx-ntuple-filter");
		g->len = 40;
		return 0;
	}
	case ETHTOOL_GFEATURES: {
		struct ethtool_gfeatures *g = data;

		if (g->size < 2)
			return -E2BIG;
		memset(g->features, 0, 2 * sizeof(g->features[0]));
		g->features[1].available = 1u << 3; /* feature 35 */
		g->features[1].active = getenv("XPILE_FAKENIC_NTUPLE") ? 0 : 1u << 3;
		return 0;
	}
	}
	return -EOPNOTSUPP;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int err;
	const char *ifn = getenv("XPILE_FAKENIC_IF");

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req != SIOCETHTOOL || strcmp(((struct ifreq *)arg)->ifr_name, ifn ? ifn : "lo"))
		return (int)syscall(SYS_ioctl, fd, req, arg);
	err = driver(((struct ifreq *)arg)->ifr_data);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

#endif /* XPILE_TEST_FAKENIC_H */
