/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow steering in the NIC, through the ethtool ioctl (SIOCETHTOOL): the RSS
 * indirection table (which RX queue each hash bucket lands on) and ntuple rules (one
 * flow to one queue, or dropped), probed before use. Used by `xpile-loader wire`.
 *
 *   struct xp_flow f;
 *   char why[128];
 *   err = xp_flow_parse(argc, argv, &f, why, sizeof(why)); // "udp dport 4789 queue 2"
 *   err = xp_flow_add("eth0", &f, &id);
 *   err = xp_rss_spread("eth0", queues, nqueues, &table_size);
 *
 * The requests are built by pure functions (xp_flow_encode, xp_rss_indir_encode, ...)
 * which the ioctl path uses as they are, so their bytes can be checked without a NIC.
 * All functions return 0 or a negative errno (-EOPNOTSUPP: the driver lacks it).
 */
#ifndef XPILE_ETHTOOL_H
#define XPILE_ETHTOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/ethtool.h>
#include <linux/types.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A flow rule of the NIC, in the words of the rule text (docs/steer.md):
 *
 *   [ip|ipv6] [tcp|udp|icmp|icmpv6|proto N] [src PREFIX] [dst PREFIX]
 *   [sport N[-M]] [dport N[-M]] (queue N | drop) [id N]
 *
 * IPv4 unless ipv6 or an IPv6 address is given. Ports need tcp or udp, and a range must
 * be an aligned block (4096-8191): the NIC matches under a mask. id N picks the rule's
 * place in the NIC's table (lower ids match first); without it the driver or
 * xp_flow_add picks the last free one.
 */
struct xp_flow {
	__u32 id;
	bool has_id;
	__u8 family; /* 4 or 6 */
	__u8 l4proto; /* 0: any */
	__u8 src_len, dst_len; /* prefix lengths; 0: any */
	__u8 src[16], dst[16]; /* network order, IPv4 in the first 4 bytes */
	__u16 sport, sport_mask, dport, dport_mask; /* host order; mask 0: any */
	bool drop;
	__u32 queue;
};

/* @err gets one line naming the word at fault and what is accepted. */
XP_API int xp_flow_parse(int argc, char **argv, struct xp_flow *out, char *err, size_t errlen);
/* The flow as text xp_flow_parse reads back ("ip udp dport 4789 queue 2"), without id. */
XP_API int xp_flow_format(const struct xp_flow *f, char *buf, size_t len);

/* ETHTOOL_SRXCLSRLINS of @f at location @loc (an id, or RX_CLS_LOC_ANY). */
XP_API int xp_flow_encode(const struct xp_flow *f, __u32 loc, struct ethtool_rxnfc *out);
/* The flow a driver reports (ETHTOOL_GRXCLSRULE); -EOPNOTSUPP when the rule uses what
 * struct xp_flow cannot say (another flow type, a non-prefix mask, MAC or VLAN fields). */
XP_API int xp_flow_decode(const struct ethtool_rx_flow_spec *fs, struct xp_flow *out);
/* ETHTOOL_SRXCLSRLDEL of the rule at @id. */
XP_API void xp_flow_del_encode(__u32 id, struct ethtool_rxnfc *out);
/* The last location below @table_size not in @used; -ENOSPC when the table is full. */
XP_API int xp_flow_pick_loc(const __u32 *used, __u32 n, __u32 table_size, __u32 *loc);

/* Bytes of an indirection request for a table of @size entries. */
XP_API size_t xp_rss_indir_len(__u32 size);
/* ETHTOOL_SRXFHINDIR of a @size-entry table spreading over @queues with equal weight:
 * entry i -> queues[i % n]. @out holds xp_rss_indir_len(@size) bytes. */
XP_API int xp_rss_indir_encode(struct ethtool_rxfh_indir *out, __u32 size, const __u32 *queues,
			       __u32 n);

/* What the NIC's driver offers for steering. A *_err is the -errno of the probe that
 * failed (-EOPNOTSUPP: the driver has no such operation, as veth). */
struct xp_ethtool_caps {
	char driver[32]; /* ETHTOOL_GDRVINFO, "" when unknown */
	__u32 rx_rings; /* ETHTOOL_GRXRINGS, 0 when unknown */
	bool rss; /* ETHTOOL_GRXFHINDIR answered with a table */
	__u32 rss_size;
	int rss_err;
	bool ntuple; /* ETHTOOL_GRXCLSRLCNT answered: the driver has a rule table */
	__u32 ntuple_rules, ntuple_size; /* rules in use, table size (0: not told) */
	bool ntuple_loc_any; /* the driver picks locations itself (RX_CLS_LOC_SPECIAL) */
	int ntuple_err;
	bool ntuple_feature_known; /* ETHTOOL_GFEATURES told "rx-ntuple-filter" */
	bool ntuple_on, ntuple_fixed; /* active; cannot be changed (ethtool -k "[fixed]") */
};

/* Asks @ifname's driver what 'wire' could steer: the RX ring count, the RSS table
 * (ETHTOOL_GRXFHINDIR), the ntuple rule table (ETHTOOL_GRXCLSRLCNT) and the
 * rx-ntuple-filter feature (ETHTOOL_GFEATURES), into @out; each refusal's errno is
 * kept in its *_err field rather than failing the call. Returns 0, or -ENODEV when
 * there is no such interface. */
XP_API int xp_ethtool_caps_probe(const char *ifname, struct xp_ethtool_caps *out);

/* Writes the equal-weight indirection table over @queues; *@size gets its length. */
XP_API int xp_rss_spread(const char *ifname, const __u32 *queues, __u32 n, __u32 *size);
/* Adds @f (at f->id when f->has_id); *@id gets the location the NIC used. */
XP_API int xp_flow_add(const char *ifname, const struct xp_flow *f, __u32 *id);
XP_API int xp_flow_del(const char *ifname, __u32 id);
/* The rules in the table, by location (flows[i].id); @ok[i] false where xp_flow_decode
 * could not say the rule (ethtool -n shows it). -ENOSPC when more than @max. */
XP_API int xp_flow_list(const char *ifname, struct xp_flow *flows, bool *ok, __u32 max, __u32 *n);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_ETHTOOL_H */
