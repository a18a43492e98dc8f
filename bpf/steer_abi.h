/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Map layouts shared by the steer program (bpf/steer.bpf.c) and userspace
 * (lib/steer.c, the loader, tests). Nothing else crosses the boundary.
 *
 * Classification without a linear scan: every rule set is compiled into per-field
 * tables. A field lookup (queue, VLAN, EtherType, source / destination prefix, L4
 * protocol, source / destination port) yields a class id; a class is a bitmap of the
 * rules that accept that field value (rules wildcarding the field are in every class of
 * that field). Rules sit in priority order, so the lowest bit set in the AND of the
 * field bitmaps is the winning rule. Identical bitmaps share one class.
 *
 * Words to AND: each rule is anchored on one field it constrains (the most selective),
 * and a class records in nzw the 64-rule words holding rules anchored on its field that
 * accept its value. A matching rule is in its anchor's class, so only the words in the
 * OR of the packet's nzw (and those of rules constraining nothing) can hold the winner.
 *
 * Atomic replace: everything a packet reads is keyed by a rule-set index (0 or 1).
 * The program reads the active index once per packet; userspace writes the inactive
 * set, flips the index, then waits an RCU grace period before touching the old set.
 */
#ifndef XPILE_STEER_ABI_H
#define XPILE_STEER_ABI_H

#include <linux/types.h>

/* Map layout version: what every pinned map's type, key, value and size mean. Bump it
 * with any change to a pinned map; `xpile-loader replace` refuses a program whose
 * version differs from the running one unless lib/steer_layout.c has a migration for
 * the pair. The object carries it in section ".rodata.xp_abi"; `load` stores the running
 * one in xp_cfg.abi_version (0 there: loaded before versions existed, i.e. 1). */
#ifndef XP_STEER_ABI_VERSION
#define XP_STEER_ABI_VERSION 2 /* 2: xp_cfg global, .set[]; stats by path in xp_rule_cnt */
#endif

#define XP_STEER_MAX_RULES 1024
#define XP_STEER_WORDS (XP_STEER_MAX_RULES / 64)
#define XP_STEER_SETS 2
#define XP_STEER_MAX_CLASSES 8192 /* per set; class 0 is all-ones */
#define XP_STEER_MAX_QUEUES 256 /* queue index >= this uses the "other" entry */
#define XP_STEER_XSK_SLOTS 64 /* named sockets live after the per-queue ones */
#define XP_STEER_XSKMAP_SIZE (XP_STEER_MAX_QUEUES + XP_STEER_XSK_SLOTS)
#define XP_STEER_L4_NONE 256 /* l4 index of packets without an L4 header */
#define XP_STEER_VLAN_NONE 0xffff /* vlan key of untagged packets */
#define XP_STEER_PORTS 65536
#define XP_STEER_VLANS 4097 /* 4096: untagged */
#define XP_STEER_ETHTYPES 65536

/* Prefix tables: a multibit trie of 8-bit strides over the address, in 256-entry
 * blocks inside each rule set (struct xp_set.pfx). The first address byte picks one
 * of 256 fixed root blocks per (direction, family); an entry is a class id, or
 * XP_PFX_PTR | block to read the next byte in. Lookups are plain loads, as deep as the
 * longest prefix on the address's path. */
#define XP_PFX_PTR 0x8000
#define XP_PFX_ROOTS (2 * 2 * 256)
#define XP_PFX_DYN 2048 /* blocks for prefixes longer than /16 */
#define XP_PFX_BLOCKS (XP_PFX_ROOTS + XP_PFX_DYN)

struct xp_pfx_block {
	__u16 e[256];
};

static inline __u32 xp_pfx_root(__u32 dir, __u32 fam6, __u32 byte0)
{
	return (dir * 2 + fam6) * 256 + byte0;
}

/* Rule fields (struct xp_rule.fields). */
enum {
	XP_RF_QUEUE = 1 << 0,
	XP_RF_VLAN = 1 << 1,
	XP_RF_ETHTYPE = 1 << 2,
	XP_RF_SRC = 1 << 3,
	XP_RF_DST = 1 << 4,
	XP_RF_L4PROTO = 1 << 5,
	XP_RF_SPORT = 1 << 6,
	XP_RF_DPORT = 1 << 7,
};

enum xp_action_kind {
	XP_ACT_PASS = 0, /* zero so an empty entry is harmless */
	XP_ACT_DROP,
	XP_ACT_TX,
	XP_ACT_REDIRECT, /* bpf_redirect(ifindex) */
	XP_ACT_XSK, /* socket of this RX queue, or slot when XP_ACT_F_SLOT */
	/* The kernel's FIB in XDP (bpf/route.h): forwarded there when it can be, else XSK
	 * of the RX queue. ifindex: the device whose routes and neighbours apply (the
	 * port's host TAP in --mode router; 0: the receiving device). */
	XP_ACT_ROUTE,
	XP_ACT_MAX,
};

#define XP_ACT_F_SLOT 1

struct xp_action {
	__u8 kind;
	__u8 flags;
	__u16 slot;
	__u32 ifindex;
};

/* One rule as written by the user; also the value of the rules map so `rule list`
 * reads back exactly what is in force. */
struct xp_rule {
	__u32 prio; /* lower runs first; ties keep insertion order */
	__u32 fields; /* XP_RF_* that this rule constrains */
	__u32 queue;
	__u16 vlan;
	__u16 ethertype; /* host order */
	__u8 family; /* 4 or 6 when XP_RF_SRC / XP_RF_DST */
	__u8 src_len;
	__u8 dst_len;
	__u8 l4proto;
	__u8 src[16]; /* network order; IPv4 in the first 4 bytes */
	__u8 dst[16];
	__u16 sport_lo, sport_hi; /* host order, inclusive */
	__u16 dport_lo, dport_hi;
	struct xp_action action;
	__u32 id; /* stable handle for `rule del` */
	__u32 pad;
};

struct xp_bits {
	__u64 w[XP_STEER_WORDS];
};

/* Per rule set configuration: in "xp_sets", mirrored in "xp_setcfg" (key = set) for
 * userspace to read back cheaply and in xp_cfg.set[] where packets read it. */
struct xp_set_cfg {
	__u32 nrules;
	__u32 nwords; /* words of the bitmaps that can hold a rule */
	__u32 used; /* XP_RF_* used by any rule: lookups for the others are skipped */
	__u32 src_none; /* class of the source field for non-IP packets */
	__u32 dst_none;
	__u32 sport_none; /* XP_CLS_ENTRY() of packets without ports (not TCP/UDP, later */
	__u32 dport_none; /* fragments) */
	struct xp_action dflt; /* when no rule matches */
	struct xp_action parse_err; /* truncated / malformed packets */
	__u32 always; /* bitmap words holding a rule that constrains no field */
	__u64 gen; /* > every earlier set's: flow cache entries of older sets never match */
};

/* An entry of a field's class table (struct xp_set: queue .. dport, and sport_none,
 * dport_none): the class and its nzw in one load. */
#define XP_CLS_ENTRY(cls, nzw) ((__u32)(cls) | (__u32)(nzw) << 16)
#define XP_CLS_OF(e) ((e) & (XP_STEER_MAX_CLASSES - 1))
#define XP_CLS_NZW(e) ((e) >> 16)

/* Everything one rule set needs per packet, in one array entry (key = set) so a
 * packet does one lookup and then plain loads: per-field class tables, the class
 * bitmaps, the prefix tries and the rule actions (about 3.3 MB). */
struct xp_set {
	struct xp_set_cfg cfg;
	struct xp_bits bits[XP_STEER_MAX_CLASSES];
	struct xp_action act[XP_STEER_MAX_RULES];
	struct xp_pfx_block pfx[XP_PFX_BLOCKS]; /* entries: a class, or XP_PFX_PTR | block */
	__u32 sport[XP_STEER_PORTS]; /* XP_CLS_ENTRY()s */
	__u32 dport[XP_STEER_PORTS];
	__u32 eth[XP_STEER_ETHTYPES];
	__u32 vlan[XP_STEER_VLANS];
	__u32 queue[XP_STEER_MAX_QUEUES + 1];
	__u32 l4[XP_STEER_L4_NONE + 1];
	__u16 nzw[XP_STEER_MAX_CLASSES]; /* per class: words holding a rule anchored there */
};

/* Global configuration: the program's global xp_cfg in section XP_CFG_SECTION, which
 * packets reach without a lookup; to userspace an array of one entry, pinned as
 * "xp_cfg" (its kernel name is the section's). */
#define XP_CFG_SECTION ".data.xp_cfg"
struct xp_cfg {
	__u32 active; /* rule set in force, 0 or 1 */
	__u32 ifindex; /* what userspace attached to (checked by attach_existing) */
	__u32 mode; /* enum xp_steer_mode actually used */
	__u32 flags; /* XP_CFG_F_* */
	__u64 netns_ino;
	__u32 next_id; /* next rule id handed out */
	__u32 abi_version; /* XP_STEER_ABI_VERSION of the maps' layout (0: 1) */
	/* Each set's configuration (its xp_setcfg entry), written before the flip that
	 * makes the set active: a packet finds the rule count, the defaults and the
	 * generation in the one entry it reads anyway, and a flow cache hit or a set
	 * without rules needs no lookup of xp_sets. */
	struct xp_set_cfg set[XP_STEER_SETS];
};

#define XP_CFG_F_LEGACY 1 /* attached without libxdp's dispatcher */
#define XP_CFG_F_ENGINE \
	2 /* loaded by `xpile run`, not `xpile-loader load`: the last
			   * engine to leave removes it */
/* Flow cache hits are ignored: every packet is classified and still fills the cache,
 * which is what a flow's first packet costs (xpile-bench xdp measures it so). */
#define XP_CFG_F_NOCACHE 4

/* Flow cache: the classification result of recent flows, per CPU, in the per-CPU array
 * "xp_fcache" indexed by xp_fcache_hash() of the key. The key is every input of the
 * classifier, so a hit gives exactly the rule the tables would; an entry counts only
 * while its gen equals the active set's, so a replace invalidates every entry at once.
 * Packets with a parse error are not cached. */
#define XP_FCACHE_BITS 12
#define XP_FCACHE_SLOTS (1 << XP_FCACHE_BITS) /* per CPU; 64 bytes each */
#define XP_FCACHE_DEFAULT 0xffffffff /* rule index of "no rule matched" */

/* Each word is written whole, once per packet: a load of a word written by narrower
 * stores cannot be forwarded from them and waits for them to retire (~10 ns here). */
struct xp_fcache_key {
	/* IPv6: source, destination, 16 bytes each; IPv4: source, destination, 4 bytes
	 * each, then 0 (addr[1..3]); network order */
	__u64 addr[4];
	__u64 l4; /* xp_fcache_l4(): ports (0 without), VLAN id, EtherType */
	__u32 misc; /* xp_fcache_misc(): RX queue, L4 protocol, has ports */
	__u32 rule; /* in a cache entry: rule index or XP_FCACHE_DEFAULT; not part of the key */
};

/* @vlan: the outer id, XP_STEER_VLAN_NONE when untagged; @ethertype after the tags (it
 * implies the IP family), all host order. */
static inline __u64 xp_fcache_l4(__u16 sport, __u16 dport, __u16 vlan, __u16 ethertype)
{
	return sport | (__u64)dport << 16 | (__u64)vlan << 32 | (__u64)ethertype << 48;
}

/* @queue: XP_STEER_MAX_QUEUES for any above; @l4proto 0 when not IP; @has_ports: a
 * TCP/UDP header is present (not a later fragment). */
static inline __u32 xp_fcache_misc(__u16 queue, __u8 l4proto, __u8 has_ports)
{
	return queue | (__u32)l4proto << 16 | (__u32)has_ports << 24;
}

struct xp_fcache_entry {
	struct xp_fcache_key k;
	__u64 gen;
	struct xp_action act;
};

#define XP_FCACHE_M0 0x9e3779b97f4a7c15ULL
#define XP_FCACHE_M1 0xc2b2ae3d27d4eb4fULL
#define XP_FCACHE_M2 0x165667b19e3779f9ULL
#define XP_FCACHE_M3 0xd6e8feb86659fd93ULL
#define XP_FCACHE_M4 0xff51afd7ed558ccdULL
#define XP_FCACHE_M5 0xc4ceb9fe1a85ec53ULL

/* The address words' part of xp_fcache_hash(), which the parse adds up while it has the
 * words in registers (bpf/parse.h): @v6 0 when addr[1..3] are 0 (not IPv6). */
static inline __u64 xp_fcache_hash_addr(const __u64 *addr, int v6)
{
	if (!v6)
		return addr[0] * XP_FCACHE_M0;
	/* Multiply-shift over independent words: no dependency chain between them. */
	return addr[0] * XP_FCACHE_M0 + addr[1] * XP_FCACHE_M1 + addr[2] * XP_FCACHE_M2 +
	       addr[3] * XP_FCACHE_M3;
}

/* The slot of a key whose xp_fcache_hash_addr() is @ha. */
static inline __u32 xp_fcache_slot(__u64 ha, __u64 l4, __u32 misc)
{
	return (__u32)((ha + l4 * XP_FCACHE_M4 + misc * XP_FCACHE_M5) >> (64 - XP_FCACHE_BITS));
}

static inline __u32 xp_fcache_hash(const struct xp_fcache_key *k)
{
	return xp_fcache_slot(xp_fcache_hash_addr(k->addr, 1), k->l4, k->misc);
}

/* Verdict counters as userspace reads them (struct xp_steer_stats.verdict); the map
 * counts by path (struct xp_stats). */
enum xp_cnt {
	XP_CNT_PASS,
	XP_CNT_DROP,
	XP_CNT_TX,
	XP_CNT_REDIRECT,
	XP_CNT_XSK,
	XP_CNT_XSK_NOSOCK, /* steered to a queue without a socket: passed */
	XP_CNT_DEFAULT, /* no rule matched (also counted under its verdict) */
	XP_CNT_PARSE_ERR, /* also counted under its verdict and its reason */
	XP_CNT_MAX,
};

struct xp_counter {
	__u64 packets;
	__u64 bytes;
};

/* Parse error reasons (struct xp_stats.perr). */
enum xp_perr {
	XP_PERR_ETH_TRUNC,
	XP_PERR_VLAN_TRUNC,
	XP_PERR_VLAN_DEPTH, /* more than two tags */
	XP_PERR_IP4_TRUNC,
	XP_PERR_IP4_HDR, /* IHL < 5 or version != 4 */
	XP_PERR_IP4_OPT_TRUNC,
	XP_PERR_IP6_TRUNC,
	XP_PERR_IP6_EXT_TRUNC,
	XP_PERR_IP6_EXT_DEPTH, /* more extension headers than we walk */
	XP_PERR_TCP_TRUNC,
	XP_PERR_TCP_HDR, /* data offset < 5 or beyond the packet */
	XP_PERR_UDP_TRUNC,
	XP_PERR_ICMP_TRUNC,
	XP_PERR_ICMP6_TRUNC,
	XP_PERR_MAX,
};

/* What decided a packet's verdict (struct xp_stats.path). */
enum xp_path {
	XP_PATH_RULE,
	XP_PATH_DEFAULT,
	XP_PATH_PARSE_ERR,
	XP_PATH_MAX,
};

#define XP_VERDICTS (XP_CNT_XSK_NOSOCK + 1) /* the verdicts of enum xp_cnt */

/* Verdict and parse-error counters (struct xp_rule_counters.stats). A packet moves one
 * counter: its path's, under the verdict it got (XP_CNT_PASS .. XP_CNT_XSK_NOSOCK).
 * Userspace adds them up into enum xp_cnt (xp_steer_stats_read(): pass includes
 * xsk_nosock, default and parse_error are their paths' sums). */
struct xp_stats {
	struct xp_counter path[XP_PATH_MAX][XP_VERDICTS];
	__u64 perr[XP_PERR_MAX];
};

/* The per-CPU counters of one rule set: the per-CPU array "xp_rule_cnt" has one entry
 * per set, so a packet finds them with one lookup as soon as it knows the set: every
 * rule's, and the verdicts of the packets the set saw (userspace sums both sets'). */
struct xp_rule_counters {
	struct xp_counter r[XP_STEER_MAX_RULES];
	struct xp_stats stats;
};

/* The route action's ports (bpf/route.h), in the unpinned hash "xp_route_via" keyed by
 * ifindex: for a device the FIB may name as ingress or egress (a port's TAP, or the
 * port itself), the port frames really leave and arrive on, and its MAC. Owned by
 * whoever set the route action (the router fills it at start): a program loaded anew
 * starts with none, and routes nothing until it is filled again. */
#define XP_ROUTE_VIA_MAX 256
struct xp_route_via {
	__u32 ifindex; /* the port */
	__u8 mac[6]; /* the port's: the frames' source, and the destination they must have */
	__u16 pad;
	__u32 table; /* the routing table looked up; 0: the kernel's rules (main) */
	__u32 flags; /* XP_ROUTE_VIA_F_* */
};

/* Routes out of this device are forwarded in XDP: its port takes redirected frames
 * (NETDEV_XDP_ACT_NDO_XMIT; a veth only while its peer has NAPI, i.e. GRO or an XDP
 * program). Without it the engine sends them. */
#define XP_ROUTE_VIA_F_EGRESS 1

/* Why a packet with the route action was not forwarded in XDP but went on to the
 * engine (struct xp_route_stats.miss): 1..15 are the lookup's BPF_FIB_LKUP_RET_*. */
enum xp_route_miss {
	XP_RM_FIB_LAST = 15,
	XP_RM_TTL, /* 1 or 0: the kernel answers with ICMP time exceeded */
	XP_RM_OPTIONS, /* IPv4 options, IPv6 hop-by-hop */
	XP_RM_FRAGMENT,
	XP_RM_NOT_IP, /* not IPv4 or IPv6 (ARP, VLAN tagged, ...) */
	XP_RM_NOT_OURS, /* not unicast to the port's MAC (multicast, another host's) */
	XP_RM_NO_PORT, /* ingress or egress not in xp_route_via, or an egress without F_EGRESS */
	XP_RM_MAX,
};

/* The route action's per-CPU counters: "xp_route_cnt", one entry, unpinned. */
struct xp_route_stats {
	__u64 fwd[2]; /* IPv4, IPv6 forwarded in XDP */
	__u64 miss[2][XP_RM_MAX]; /* by family (IPv4 for non-IP), by reason */
	__u64 cached[2]; /* of fwd, by a flow's entry in xp_route_cache, with no lookup */
};

/*
 * The route action's flow cache (bpf/route.h): a lookup's answer kept per CPU for the
 * flow, valid while "xp_route_gen" (an array of one __u32, unpinned) holds the value it
 * was found under, and for XP_ROUTE_FLOW_JIFFIES at most. 0 there (a program's start)
 * turns the cache off; a writer that sees every change the answer depends on (routes,
 * rules, nexthops, neighbours, addresses, links, netconf, xp_route_via: the router's
 * control thread) writes a new non-zero value after each. The age bound covers what no
 * notification says (the multipath hash's sysctls) and a writer that died.
 */
#define XP_ROUTE_CACHE_SLOTS 2048
#define XP_ROUTE_FLOW_JIFFIES 256

#define XP_STEER_PROG_NAME "xp_steer"

#endif /* XPILE_STEER_ABI_H */
