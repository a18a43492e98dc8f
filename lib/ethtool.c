// SPDX-License-Identifier: BSD-3-Clause
/*
 * RSS indirection and ntuple rules through SIOCETHTOOL (xpile/ethtool.h). Each request
 * is built by a pure *_encode function and sent as it is, so what the unit test checks
 * is what the driver gets.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include "log_internal.h"
#include "xpile/ethtool.h"

static int ethtool_ioctl(const char *ifname, void *data)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname) >= IFNAMSIZ) {
		close(fd);
		return -ENAMETOOLONG;
	}
	ifr.ifr_data = data;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

static __u32 mask4(__u8 len)
{
	return len ? htonl(~0u << (32 - len)) : 0;
}

static void mask6(__be32 *m, __u8 len)
{
	for (int i = 0; i < 4; i++) {
		int bits = len - i * 32;

		m[i] = bits >= 32 ? 0xffffffff : bits <= 0 ? 0 : htonl(~0u << (32 - bits));
	}
}

int xp_flow_encode(const struct xp_flow *f, __u32 loc, struct ethtool_rxnfc *out)
{
	struct ethtool_rx_flow_spec *fs = &out->fs;
	bool ports = f->l4proto == IPPROTO_TCP || f->l4proto == IPPROTO_UDP;
	bool tcp = f->l4proto == IPPROTO_TCP;

	memset(out, 0, sizeof(*out));
	if ((f->family != 4 && f->family != 6) || (!ports && (f->sport_mask || f->dport_mask)) ||
	    f->src_len > (f->family == 4 ? 32 : 128) || f->dst_len > (f->family == 4 ? 32 : 128))
		return -EINVAL;
	out->cmd = ETHTOOL_SRXCLSRLINS;
	fs->location = loc;
	fs->ring_cookie = f->drop ? RX_CLS_FLOW_DISC : f->queue;
	if (f->family == 4) {
		struct ethtool_usrip4_spec *h = &fs->h_u.usr_ip4_spec, *m = &fs->m_u.usr_ip4_spec;

		/* ip4src and ip4dst sit at the same offsets in every IPv4 spec */
		memcpy(&h->ip4src, f->src, 4);
		memcpy(&h->ip4dst, f->dst, 4);
		m->ip4src = mask4(f->src_len);
		m->ip4dst = mask4(f->dst_len);
		if (ports) {
			struct ethtool_tcpip4_spec *hp = &fs->h_u.tcp_ip4_spec,
						   *mp = &fs->m_u.tcp_ip4_spec;

			fs->flow_type = tcp ? TCP_V4_FLOW : UDP_V4_FLOW;
			hp->psrc = htons(f->sport & f->sport_mask);
			hp->pdst = htons(f->dport & f->dport_mask);
			mp->psrc = htons(f->sport_mask);
			mp->pdst = htons(f->dport_mask);
		} else {
			fs->flow_type = IPV4_USER_FLOW;
			h->ip_ver = ETH_RX_NFC_IP4; /* its mask stays 0, as the uapi asks */
			h->proto = f->l4proto;
			m->proto = f->l4proto ? 0xff : 0;
		}
		return 0;
	}
	{
		struct ethtool_usrip6_spec *h = &fs->h_u.usr_ip6_spec, *m = &fs->m_u.usr_ip6_spec;

		/* ip6src and ip6dst too */
		memcpy(h->ip6src, f->src, 16);
		memcpy(h->ip6dst, f->dst, 16);
		mask6(m->ip6src, f->src_len);
		mask6(m->ip6dst, f->dst_len);
		if (ports) {
			struct ethtool_tcpip6_spec *hp = &fs->h_u.tcp_ip6_spec,
						   *mp = &fs->m_u.tcp_ip6_spec;

			fs->flow_type = tcp ? TCP_V6_FLOW : UDP_V6_FLOW;
			hp->psrc = htons(f->sport & f->sport_mask);
			hp->pdst = htons(f->dport & f->dport_mask);
			mp->psrc = htons(f->sport_mask);
			mp->pdst = htons(f->dport_mask);
		} else {
			fs->flow_type = IPV6_USER_FLOW;
			h->l4_proto = f->l4proto;
			m->l4_proto = f->l4proto ? 0xff : 0;
		}
	}
	return 0;
}

/* The prefix length of mask @m (@bytes long, network order); -1 if not a prefix. */
static int prefix_len(const void *m, int bytes)
{
	const __u8 *b = m;
	int len = 0, i = 0;

	for (; i < bytes && b[i] == 0xff; i++)
		len += 8;
	if (i < bytes) {
		__u8 x = b[i];

		while (x & 0x80) {
			len++;
			x <<= 1;
		}
		if (x)
			return -1;
		for (i++; i < bytes; i++)
			if (b[i])
				return -1;
	}
	return len;
}

/* A port mask xp_flow_format can say: the high bits of an aligned block. */
static bool port_mask_ok(__u16 m)
{
	__u16 low = (__u16)~m;

	return !(low & (low + 1));
}

static bool zero(const void *p, size_t n)
{
	const __u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

int xp_flow_decode(const struct ethtool_rx_flow_spec *fs, struct xp_flow *f)
{
	__u32 type = fs->flow_type;
	int sl, dl;

	memset(f, 0, sizeof(*f));
	f->id = fs->location;
	f->has_id = true;
	f->drop = fs->ring_cookie == RX_CLS_FLOW_DISC;
	if (!f->drop && fs->ring_cookie > ETHTOOL_RX_FLOW_SPEC_RING)
		return -EOPNOTSUPP; /* a VF's ring or wake-on-LAN */
	f->queue = (__u32)fs->ring_cookie;
	if (!zero(&fs->m_ext, sizeof(fs->m_ext)) || (type & (FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)))
		return -EOPNOTSUPP;
	switch (type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
	case IPV4_USER_FLOW: {
		const struct ethtool_tcpip4_spec *hp = &fs->h_u.tcp_ip4_spec,
						 *mp = &fs->m_u.tcp_ip4_spec;
		const struct ethtool_usrip4_spec *m = &fs->m_u.usr_ip4_spec;

		f->family = 4;
		sl = prefix_len(&mp->ip4src, 4);
		dl = prefix_len(&mp->ip4dst, 4);
		memcpy(f->src, &hp->ip4src, 4);
		memcpy(f->dst, &hp->ip4dst, 4);
		if (type == IPV4_USER_FLOW) {
			if (m->tos || m->l4_4_bytes || (m->proto && m->proto != 0xff))
				return -EOPNOTSUPP;
			f->l4proto = m->proto ? fs->h_u.usr_ip4_spec.proto : 0;
			break;
		}
		if (mp->tos)
			return -EOPNOTSUPP;
		f->l4proto = type == TCP_V4_FLOW ? IPPROTO_TCP : IPPROTO_UDP;
		f->sport = ntohs(hp->psrc);
		f->dport = ntohs(hp->pdst);
		f->sport_mask = ntohs(mp->psrc);
		f->dport_mask = ntohs(mp->pdst);
		break;
	}
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
	case IPV6_USER_FLOW: {
		const struct ethtool_tcpip6_spec *hp = &fs->h_u.tcp_ip6_spec,
						 *mp = &fs->m_u.tcp_ip6_spec;
		const struct ethtool_usrip6_spec *m = &fs->m_u.usr_ip6_spec;

		f->family = 6;
		sl = prefix_len(mp->ip6src, 16);
		dl = prefix_len(mp->ip6dst, 16);
		memcpy(f->src, hp->ip6src, 16);
		memcpy(f->dst, hp->ip6dst, 16);
		if (type == IPV6_USER_FLOW) {
			if (m->tclass || m->l4_4_bytes || (m->l4_proto && m->l4_proto != 0xff))
				return -EOPNOTSUPP;
			f->l4proto = m->l4_proto ? fs->h_u.usr_ip6_spec.l4_proto : 0;
			break;
		}
		if (mp->tclass)
			return -EOPNOTSUPP;
		f->l4proto = type == TCP_V6_FLOW ? IPPROTO_TCP : IPPROTO_UDP;
		f->sport = ntohs(hp->psrc);
		f->dport = ntohs(hp->pdst);
		f->sport_mask = ntohs(mp->psrc);
		f->dport_mask = ntohs(mp->pdst);
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	if (sl < 0 || dl < 0 || (f->sport_mask && !port_mask_ok(f->sport_mask)) ||
	    (f->dport_mask && !port_mask_ok(f->dport_mask)))
		return -EOPNOTSUPP;
	f->src_len = sl;
	f->dst_len = dl;
	f->sport &= f->sport_mask;
	f->dport &= f->dport_mask;
	return 0;
}

void xp_flow_del_encode(__u32 id, struct ethtool_rxnfc *out)
{
	memset(out, 0, sizeof(*out));
	out->cmd = ETHTOOL_SRXCLSRLDEL;
	out->fs.location = id;
}

int xp_flow_pick_loc(const __u32 *used, __u32 n, __u32 table_size, __u32 *loc)
{
	/* The last free place, as ethtool picks: lower places match first, so a new
	 * rule does not take precedence over the ones already there. */
	for (__u32 l = table_size; l-- > 0;) {
		__u32 i = 0;

		while (i < n && used[i] != l)
			i++;
		if (i == n) {
			*loc = l;
			return 0;
		}
	}
	return -ENOSPC;
}

size_t xp_rss_indir_len(__u32 size)
{
	return sizeof(struct ethtool_rxfh_indir) + (size_t)size * sizeof(__u32);
}

int xp_rss_indir_encode(struct ethtool_rxfh_indir *out, __u32 size, const __u32 *queues, __u32 n)
{
	if (!size || !n)
		return -EINVAL;
	out->cmd = ETHTOOL_SRXFHINDIR;
	out->size = size;
	for (__u32 i = 0; i < size; i++)
		out->ring_index[i] = queues[i % n];
	return 0;
}

/* Index of feature @name in the ETH_SS_FEATURES strings, with their count. */
static int feature_index(const char *ifname, const char *name, __u32 *count)
{
	struct {
		struct ethtool_sset_info hdr;
		__u32 buf[1];
	} si = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_FEATURES } };
	struct ethtool_gstrings *gs;
	int err = ethtool_ioctl(ifname, &si), idx = -ENOENT;

	if (err)
		return err;
	if (!si.hdr.sset_mask || !si.hdr.data[0] || si.hdr.data[0] > 4096)
		return -ENOENT;
	*count = si.hdr.data[0];
	gs = calloc(1, sizeof(*gs) + (size_t)*count * ETH_GSTRING_LEN);
	if (!gs)
		return -ENOMEM;
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_FEATURES;
	gs->len = *count;
	err = ethtool_ioctl(ifname, gs);
	for (__u32 i = 0; !err && i < gs->len && i < *count; i++)
		if (!strncmp((char *)gs->data + (size_t)i * ETH_GSTRING_LEN, name, ETH_GSTRING_LEN))
			idx = (int)i;
	free(gs);
	return err ? err : idx;
}

static void probe_ntuple_feature(const char *ifname, struct xp_ethtool_caps *c)
{
	struct ethtool_gfeatures *gf;
	__u32 count = 0, blocks;
	int idx = feature_index(ifname, "rx-ntuple-filter", &count);

	if (idx < 0)
		return;
	blocks = (count + 31) / 32;
	gf = calloc(1, sizeof(*gf) + blocks * sizeof(gf->features[0]));
	if (!gf)
		return;
	gf->cmd = ETHTOOL_GFEATURES;
	gf->size = blocks;
	if (!ethtool_ioctl(ifname, gf)) {
		const struct ethtool_get_features_block *b = &gf->features[idx / 32];
		__u32 bit = 1u << (idx % 32);

		c->ntuple_feature_known = true;
		c->ntuple_on = b->active & bit;
		c->ntuple_fixed = !(b->available & bit);
	}
	free(gf);
}

int xp_ethtool_caps_probe(const char *ifname, struct xp_ethtool_caps *c)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_rxfh_indir ind = { .cmd = ETHTOOL_GRXFHINDIR };
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXRINGS };
	int err;

	memset(c, 0, sizeof(*c));
	if (!if_nametoindex(ifname)) {
		xp_err("interface %s not found in this network namespace\n", ifname);
		return -ENODEV;
	}
	if (!ethtool_ioctl(ifname, &di))
		snprintf(c->driver, sizeof(c->driver), "%.31s", di.driver);
	if (!ethtool_ioctl(ifname, &nfc))
		c->rx_rings = (__u32)nfc.data;
	/* size 0 asks only for the table's size */
	err = ethtool_ioctl(ifname, &ind);
	c->rss = !err && ind.size;
	c->rss_size = c->rss ? ind.size : 0;
	c->rss_err = err ? err : ind.size ? 0 : -EOPNOTSUPP;
	memset(&nfc, 0, sizeof(nfc));
	nfc.cmd = ETHTOOL_GRXCLSRLCNT;
	err = ethtool_ioctl(ifname, &nfc);
	c->ntuple = !err;
	c->ntuple_err = err;
	if (!err) {
		c->ntuple_rules = nfc.rule_cnt;
		c->ntuple_size = (__u32)nfc.data & ~RX_CLS_LOC_SPECIAL;
		c->ntuple_loc_any = nfc.data & RX_CLS_LOC_SPECIAL;
	}
	probe_ntuple_feature(ifname, c);
	return 0;
}

int xp_rss_spread(const char *ifname, const __u32 *queues, __u32 n, __u32 *size)
{
	struct ethtool_rxfh_indir probe = { .cmd = ETHTOOL_GRXFHINDIR }, *ind;
	int err = ethtool_ioctl(ifname, &probe);

	*size = 0;
	if (err)
		return err;
	if (!probe.size)
		return -EOPNOTSUPP;
	ind = malloc(xp_rss_indir_len(probe.size));
	if (!ind)
		return -ENOMEM;
	err = xp_rss_indir_encode(ind, probe.size, queues, n);
	if (!err)
		err = ethtool_ioctl(ifname, ind);
	if (!err)
		*size = probe.size;
	free(ind);
	return err;
}

/* Locations in use; *@used is malloc'd (count in *@n), *@size the table's size. */
static int rule_locs(const char *ifname, __u32 **used, __u32 *n, __u32 *size, bool *any)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT }, *all;
	int err = ethtool_ioctl(ifname, &cnt);

	*used = NULL;
	*n = 0;
	if (err)
		return err;
	*size = (__u32)cnt.data & ~RX_CLS_LOC_SPECIAL;
	*any = cnt.data & RX_CLS_LOC_SPECIAL;
	all = calloc(1, sizeof(*all) + ((size_t)cnt.rule_cnt + 1) * sizeof(__u32));
	if (!all)
		return -ENOMEM;
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	err = cnt.rule_cnt ? ethtool_ioctl(ifname, all) : 0;
	if (!err) {
		*n = cnt.rule_cnt ? all->rule_cnt : 0;
		*used = malloc(((size_t)*n + 1) * sizeof(__u32));
		if (*used)
			memcpy(*used, all->rule_locs, (size_t)*n * sizeof(__u32));
		else
			err = -ENOMEM;
	}
	free(all);
	return err;
}

int xp_flow_add(const char *ifname, const struct xp_flow *f, __u32 *id)
{
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXRINGS };
	__u32 *used, n, size, loc = f->id;
	bool any;
	int err;

	/* A queue the NIC lacks would be refused by some drivers and taken by others. */
	if (!f->drop && !ethtool_ioctl(ifname, &nfc) && f->queue >= nfc.data)
		return -ERANGE;
	err = rule_locs(ifname, &used, &n, &size, &any);
	if (err)
		return err;
	if (!f->has_id)
		err = any ? (loc = RX_CLS_LOC_ANY, 0) : xp_flow_pick_loc(used, n, size, &loc);
	free(used);
	if (!err)
		err = xp_flow_encode(f, loc, &nfc);
	if (!err)
		err = ethtool_ioctl(ifname, &nfc);
	if (!err)
		*id = nfc.fs.location;
	return err;
}

int xp_flow_del(const char *ifname, __u32 id)
{
	struct ethtool_rxnfc nfc;

	xp_flow_del_encode(id, &nfc);
	return ethtool_ioctl(ifname, &nfc);
}

int xp_flow_list(const char *ifname, struct xp_flow *flows, bool *ok, __u32 max, __u32 *n)
{
	__u32 *used, size;
	bool any;
	int err = rule_locs(ifname, &used, n, &size, &any);

	if (err)
		return err;
	if (*n > max) {
		free(used);
		return -ENOSPC;
	}
	for (__u32 i = 0; !err && i < *n; i++) {
		struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXCLSRULE };

		nfc.fs.location = used[i];
		err = ethtool_ioctl(ifname, &nfc);
		ok[i] = !err && !xp_flow_decode(&nfc.fs, &flows[i]);
		flows[i].id = used[i];
		flows[i].has_id = true;
	}
	free(used);
	if (err)
		*n = 0;
	return err;
}
