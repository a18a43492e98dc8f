// SPDX-License-Identifier: BSD-3-Clause
/*
 * xp_steer: parse, classify against the active rule set, act, count.
 *
 * Classification is a handful of table lookups and an AND of their bitmaps (see
 * steer_abi.h), so its cost does not grow with the number of rules. Lookups for fields
 * no rule uses are skipped. Two entry points: xp_steer for frames in one buffer, and
 * xp_steer_frags (xdp.frags) for multi-buffer jumbo frames, which classifies from the
 * first buffer and counts the whole frame.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>

#include "parse.h"
#include "steer_abi.h"
#include "xsks_map.h"

#define SETS XP_STEER_SETS
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_cfg);
} xp_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS);
	__type(key, __u32);
	__type(value, struct xp_set_cfg);
} xp_setcfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *(XP_STEER_MAX_QUEUES + 1));
	__type(key, __u32);
	__type(value, __u32);
} xp_queue SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *XP_STEER_VLANS);
	__type(key, __u32);
	__type(value, __u32);
} xp_vlan SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *XP_STEER_ETHTYPES);
	__type(key, __u32);
	__type(value, __u16);
} xp_eth SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_PFX_BLOCKS);
	__type(key, __u32);
	__type(value, struct xp_pfx_block);
} xp_pfx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *(XP_STEER_L4_NONE + 1));
	__type(key, __u32);
	__type(value, __u32);
} xp_l4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *XP_STEER_PORTS);
	__type(key, __u32);
	__type(value, __u16);
} xp_sport SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *XP_STEER_PORTS);
	__type(key, __u32);
	__type(value, __u16);
} xp_dport SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *XP_STEER_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct xp_bits);
} xp_bits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS *XP_STEER_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xp_rule);
} xp_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SETS *XP_STEER_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xp_counter);
} xp_rule_cnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_CNT_MAX);
	__type(key, __u32);
	__type(value, struct xp_counter);
} xp_act_cnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_PERR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xp_err_cnt SEC(".maps");


/* libxdp: runs early, and later programs run after a PASS. */
struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xp_steer);

struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xp_steer_frags);

static __always_inline void count(__u32 what, __u64 bytes)
{
	struct xp_counter *c = bpf_map_lookup_elem(&xp_act_cnt, &what);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

static __always_inline int act(struct xdp_md *ctx, const struct xp_action *a, __u64 bytes)
{
	__u32 key;
	int ret;

	switch (a->kind) {
	case XP_ACT_DROP:
		count(XP_CNT_DROP, bytes);
		return XDP_DROP;
	case XP_ACT_TX:
		count(XP_CNT_TX, bytes);
		return XDP_TX;
	case XP_ACT_REDIRECT:
		count(XP_CNT_REDIRECT, bytes);
		return bpf_redirect(a->ifindex, 0);
	case XP_ACT_XSK:
		key = a->flags & XP_ACT_F_SLOT ? XP_STEER_MAX_QUEUES + a->slot : ctx->rx_queue_index;
		/* No socket on that queue: the kernel gets it, never a black hole. */
		ret = bpf_redirect_map(&xp_xsks, key, XDP_PASS);
		if (ret == XDP_REDIRECT) {
			count(XP_CNT_XSK, bytes);
		} else {
			count(XP_CNT_XSK_NOSOCK, bytes);
			count(XP_CNT_PASS, bytes);
		}
		return ret;
	default:
		count(XP_CNT_PASS, bytes);
		return XDP_PASS;
	}
}

static __always_inline __u32 ctz64(__u64 x)
{
	__u32 n = 0;

	if (!(x & 0xffffffffULL)) {
		n += 32;
		x >>= 32;
	}
	if (!(x & 0xffff)) {
		n += 16;
		x >>= 16;
	}
	if (!(x & 0xff)) {
		n += 8;
		x >>= 8;
	}
	if (!(x & 0xf)) {
		n += 4;
		x >>= 4;
	}
	if (!(x & 0x3)) {
		n += 2;
		x >>= 2;
	}
	if (!(x & 0x1))
		n += 1;
	return n;
}

static __always_inline __u32 u32_at(void *map, __u32 key, __u32 dflt)
{
	__u32 *v = bpf_map_lookup_elem(map, &key);

	return v ? *v : dflt;
}

static __always_inline __u32 port_at(void *map, __u32 key, __u32 dflt)
{
	__u16 *v = bpf_map_lookup_elem(map, &key);

	return v ? *v : dflt;
}

/* Walks the prefix trie: one array read per address byte past the second, and only as
 * deep as the longest prefix on this address's path. */
static __always_inline __u32 prefix_class(const struct xp_parsed *p, __u32 set, __u32 dir,
					  __u32 none)
{
	const __u8 *addr = dir ? p->daddr : p->saddr;
	__u32 fam6 = p->family == 6, alen = fam6 ? 16 : 4, key;
	struct xp_pfx_block *b;
	__u16 e;

	if (!p->family)
		return none;
	key = xp_pfx_root(set, dir, fam6, addr[0]);
	b = bpf_map_lookup_elem(&xp_pfx, &key);
	if (!b)
		return none;
	e = b->e[addr[1]];
	for (__u32 i = 2; i < 16; i++) {
		if (!(e & XP_PFX_PTR) || i >= alen)
			break;
		key = e & ~XP_PFX_PTR;
		b = bpf_map_lookup_elem(&xp_pfx, &key);
		if (!b)
			return none;
		e = b->e[addr[i]];
	}
	return e & ~XP_PFX_PTR;
}

static __always_inline struct xp_bits *bits_at(__u32 set, __u32 cls)
{
	__u32 key = set * XP_STEER_MAX_CLASSES + (cls & (XP_STEER_MAX_CLASSES - 1));

	return bpf_map_lookup_elem(&xp_bits, &key);
}

static __always_inline int steer(struct xdp_md *ctx, const int frags)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xp_bits *bq, *bv, *be, *bs, *bd, *bl, *bsp, *bdp;
	__u32 cq = 0, cv = 0, ce = 0, cs = 0, cd = 0, cl = 0, csp = 0, cdp = 0;
	__u32 zero = 0, set, used, nwords, idx = 0, key;
	struct xp_set_cfg *sc;
	struct xp_counter *rc;
	struct xp_parsed p;
	struct xp_rule *r;
	struct xp_cfg *cfg;
	__u64 bytes;
	int err;
	int hit = 0;

	cfg = bpf_map_lookup_elem(&xp_cfg, &zero);
	if (!cfg)
		return XDP_PASS;
	/* Read once: everything below uses this one set. */
	set = READ_ONCE(cfg->active) & 1;
	sc = bpf_map_lookup_elem(&xp_setcfg, &set);
	if (!sc)
		return XDP_PASS;
	/* Without frags the first buffer is the frame; the helper call costs ~9 ns. */
	bytes = frags ? bpf_xdp_get_buff_len(ctx) : (__u64)(end - data);

	err = xp_parse(data, end, &p);
	if (err != XP_PARSE_OK) {
		__u32 reason = err;
		__u64 *ec = bpf_map_lookup_elem(&xp_err_cnt, &reason);

		if (ec)
			(*ec)++;
		count(XP_CNT_PARSE_ERR, bytes);
		return act(ctx, &sc->parse_err, bytes);
	}

	used = sc->used;
	if (used & XP_RF_QUEUE) {
		__u32 q = ctx->rx_queue_index;

		if (q > XP_STEER_MAX_QUEUES)
			q = XP_STEER_MAX_QUEUES;
		cq = u32_at(&xp_queue, set * (XP_STEER_MAX_QUEUES + 1) + q, 0);
	}
	if (used & XP_RF_VLAN)
		cv = u32_at(&xp_vlan,
			    set * XP_STEER_VLANS +
				    (p.vlan == XP_STEER_VLAN_NONE ? XP_STEER_VLANS - 1 : p.vlan),
			    0);
	if (used & XP_RF_ETHTYPE)
		ce = port_at(&xp_eth, set * XP_STEER_ETHTYPES + p.ethertype, 0);
	if (used & XP_RF_SRC)
		cs = prefix_class(&p, set, 0, sc->src_none);
	if (used & XP_RF_DST)
		cd = prefix_class(&p, set, 1, sc->dst_none);
	if (used & XP_RF_L4PROTO)
		cl = u32_at(&xp_l4, set * (XP_STEER_L4_NONE + 1) +
					    (p.has_l4 ? p.l4proto : XP_STEER_L4_NONE), 0);
	if (used & XP_RF_SPORT)
		csp = p.has_ports ? port_at(&xp_sport, set * XP_STEER_PORTS + p.sport, 0)
				  : sc->sport_none;
	if (used & XP_RF_DPORT)
		cdp = p.has_ports ? port_at(&xp_dport, set * XP_STEER_PORTS + p.dport, 0)
				  : sc->dport_none;

	bq = bits_at(set, cq);
	bv = bits_at(set, cv);
	be = bits_at(set, ce);
	bs = bits_at(set, cs);
	bd = bits_at(set, cd);
	bl = bits_at(set, cl);
	bsp = bits_at(set, csp);
	bdp = bits_at(set, cdp);
	if (!bq || !bv || !be || !bs || !bd || !bl || !bsp || !bdp)
		return XDP_PASS;

	nwords = sc->nwords;
	for (__u32 i = 0; i < XP_STEER_WORDS; i++) {
		__u64 m;

		if (i >= nwords)
			break;
		m = bq->w[i] & bv->w[i] & be->w[i] & bs->w[i] & bd->w[i] & bl->w[i] &
		    bsp->w[i] & bdp->w[i];
		if (m) {
			idx = i * 64 + ctz64(m);
			hit = 1;
			break;
		}
	}
	if (!hit) {
		count(XP_CNT_DEFAULT, bytes);
		return act(ctx, &sc->dflt, bytes);
	}
	key = set * XP_STEER_MAX_RULES + (idx & (XP_STEER_MAX_RULES - 1));
	r = bpf_map_lookup_elem(&xp_rules, &key);
	if (!r)
		return XDP_PASS;
	rc = bpf_map_lookup_elem(&xp_rule_cnt, &key);
	if (rc) {
		rc->packets++;
		rc->bytes += bytes;
	}
	return act(ctx, &r->action, bytes);
}

/* The default: frames fit one buffer (the kernel refuses it on devices whose MTU needs
 * more), so the first buffer's length is the frame's. */
SEC("xdp")
int xp_steer(struct xdp_md *ctx)
{
	return steer(ctx, 0);
}

/* For multi-buffer (jumbo) frames: same classification, headers from the first buffer. */
SEC("xdp.frags")
int xp_steer_frags(struct xdp_md *ctx)
{
	return steer(ctx, 1);
}

char _license[] SEC("license") = "Dual BSD/GPL";
