// SPDX-License-Identifier: BSD-3-Clause
/*
 * xp_steer: parse, classify against the active rule set, act, count.
 *
 * Classification is a handful of table lookups and an AND of their bitmaps over the
 * words the anchored classes name (see steer_abi.h), so its cost barely grows with the
 * number of rules. Lookups for fields no rule uses are skipped. A per-CPU flow cache
 * in front of it gives a flow's later packets the same rule without the tables; with
 * no rules the frame is only checked. Two entry points: xp_steer for frames in one buffer, and
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
	__uint(max_entries, SETS *XP_STEER_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xp_rule);
} xp_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SETS);
	__type(key, __u32);
	__type(value, struct xp_rule_counters);
} xp_rule_cnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETS);
	__type(key, __u32);
	__type(value, struct xp_set);
} xp_sets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_stats);
} xp_stats SEC(".maps");

/* Only the program reads and writes it: not pinned, nothing in userspace to keep. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_FCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_fcache_entry);
} xp_fcache SEC(".maps");

/* libxdp: runs early, and later programs run after a PASS. */
struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xp_steer);

struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xp_steer_frags);

static __always_inline void count(struct xp_stats *st, __u32 what, __u64 bytes)
{
	st->verdict[what].packets++;
	st->verdict[what].bytes += bytes;
}

static __always_inline int act(struct xdp_md *ctx, struct xp_stats *st, const struct xp_action *a,
			       __u64 bytes)
{
	__u32 key;
	int ret;

	switch (a->kind) {
	case XP_ACT_DROP:
		count(st, XP_CNT_DROP, bytes);
		return XDP_DROP;
	case XP_ACT_TX:
		count(st, XP_CNT_TX, bytes);
		return XDP_TX;
	case XP_ACT_REDIRECT:
		count(st, XP_CNT_REDIRECT, bytes);
		return bpf_redirect(a->ifindex, 0);
	case XP_ACT_XSK:
		key = a->flags & XP_ACT_F_SLOT ? XP_STEER_MAX_QUEUES + a->slot :
						 ctx->rx_queue_index;
		/* No socket on that queue: the kernel gets it, never a black hole. */
		ret = bpf_redirect_map(&xp_xsks, key, XDP_PASS);
		if (ret == XDP_REDIRECT) {
			count(st, XP_CNT_XSK, bytes);
		} else {
			count(st, XP_CNT_XSK_NOSOCK, bytes);
			count(st, XP_CNT_PASS, bytes);
		}
		return ret;
	default:
		count(st, XP_CNT_PASS, bytes);
		return XDP_PASS;
	}
}

/* de Bruijn: the lowest set bit times the sequence puts a unique pattern in the top six
 * bits. One multiply and one load instead of six branches, which the verifier would
 * otherwise follow into everything after the classifier once per bit position. */
static const __u8 ctz_tab[64] = {
	0,  1,	48, 2,	57, 49, 28, 3,	61, 58, 50, 42, 38, 29, 17, 4,	62, 55, 59, 36, 53, 51,
	43, 22, 45, 39, 33, 30, 24, 18, 12, 5,	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21,
	44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,	13, 8,	7,  6,
};

/* @x non-zero. */
static __always_inline __u32 ctz64(__u64 x)
{
	return ctz_tab[((x & -x) * 0x03f79d71b4cb0a89ULL) >> 58];
}

/* Walks the prefix trie: one load per address byte past the second, and only as deep
 * as the longest prefix on this address's path. */
static __always_inline __u32 prefix_class(const struct xp_set *t, const struct xp_parsed *p,
					  __u32 dir, __u32 none)
{
	const __u8 *addr = (const __u8 *)&p->k.addr[dir ? 2 : 0];
	__u32 fam6 = p->family == 6, alen = fam6 ? 16 : 4;
	__u16 e;

	if (!p->family)
		return none;
	e = t->pfx[xp_pfx_root(dir, fam6, addr[0])].e[addr[1]];
	for (__u32 i = 2; i < 16; i++) {
		__u32 b = e & ~XP_PFX_PTR;

		if (!(e & XP_PFX_PTR) || i >= alen || b >= XP_PFX_BLOCKS)
			break;
		e = t->pfx[b].e[addr[i]];
	}
	return e & ~XP_PFX_PTR;
}

/* min(@v, @max) in a way the verifier sees: 64-bit, so clang compares and indexes with
 * the same register (a 32-bit value gets zero-extended into a copy after the test). */
static __always_inline __u64 upto(__u64 v, __u64 max)
{
	if (v > max)
		v = max;
	asm volatile("" : "+r"(v));
	return v;
}

/* The first matching rule's index by the tables, or XP_FCACHE_DEFAULT. */
static __always_inline __u32 classify(const struct xp_set *t, const struct xp_parsed *p, __u32 q)
{
	__u32 cq = 0, cv = 0, ce = 0, cs = 0, cd = 0, cl = 0, csp = 0, cdp = 0;
	__u32 used = t->cfg.used, cand;
	const struct xp_bits *bq, *bv, *be, *bs, *bd, *bl, *bsp, *bdp;

	/* Unused fields keep class 0 (every rule, no anchored word); the others are table
	 * loads. */
	if (used & XP_RF_QUEUE)
		cq = t->queue[upto(q, XP_STEER_MAX_QUEUES)];
	if (used & XP_RF_VLAN)
		cv = t->vlan[upto(p->vlan, XP_STEER_VLANS - 1)];
	if (used & XP_RF_ETHTYPE)
		ce = t->eth[p->ethertype];
	if (used & XP_RF_L4PROTO)
		cl = t->l4[p->has_l4 ? p->l4proto : XP_STEER_L4_NONE];
	if (used & XP_RF_SPORT)
		csp = p->has_ports ? t->sport[p->ports & 0xffff] : t->cfg.sport_none;
	if (used & XP_RF_DPORT)
		cdp = p->has_ports ? t->dport[p->ports >> 16] : t->cfg.dport_none;
	if (used & XP_RF_SRC)
		cs = prefix_class(t, p, 0, t->cfg.src_none);
	if (used & XP_RF_DST)
		cd = prefix_class(t, p, 1, t->cfg.dst_none);
#define CLS(c) ((c) & (XP_STEER_MAX_CLASSES - 1))
	/* The only words that can hold a match (steer_abi.h). */
	cand = t->cfg.always | t->nzw[CLS(cq)] | t->nzw[CLS(cv)] | t->nzw[CLS(ce)] |
	       t->nzw[CLS(cs)] | t->nzw[CLS(cd)] | t->nzw[CLS(cl)] | t->nzw[CLS(csp)] |
	       t->nzw[CLS(cdp)];
	bq = &t->bits[CLS(cq)];
	bv = &t->bits[CLS(cv)];
	be = &t->bits[CLS(ce)];
	bs = &t->bits[CLS(cs)];
	bd = &t->bits[CLS(cd)];
	bl = &t->bits[CLS(cl)];
	bsp = &t->bits[CLS(csp)];
	bdp = &t->bits[CLS(cdp)];
#undef CLS

	for (__u32 n = 0; n < XP_STEER_WORDS; n++) {
		__u32 i;
		__u64 m;

		if (!cand)
			break;
		i = ctz64(cand) & (XP_STEER_WORDS - 1);
		cand &= cand - 1;
		m = bq->w[i] & bv->w[i] & be->w[i] & bs->w[i] & bd->w[i] & bl->w[i] & bsp->w[i] &
		    bdp->w[i];
		if (m)
			return (i * 64 + ctz64(m)) & (XP_STEER_MAX_RULES - 1);
	}
	return XP_FCACHE_DEFAULT;
}

/* Whether cache entry @f holds the key @k classified by the set of generation @gen. */
static __always_inline int flow_hit(const struct xp_fcache_entry *f, const struct xp_fcache_key *k,
				    __u64 gen)
{
	/* One branch: the differences ORed together. */
	return !((f->k.addr[0] ^ k->addr[0]) | (f->k.addr[1] ^ k->addr[1]) |
		 (f->k.addr[2] ^ k->addr[2]) | (f->k.addr[3] ^ k->addr[3]) | (f->k.l4 ^ k->l4) |
		 (f->k.misc ^ k->misc) | (f->gen ^ gen));
}

static __always_inline int parse_error(struct xdp_md *ctx, struct xp_stats *st,
				       const struct xp_set *t, int err, __u64 bytes)
{
	__u32 reason = err < XP_PERR_MAX ? err : 0;

	st->perr[reason]++;
	count(st, XP_CNT_PARSE_ERR, bytes);
	return act(ctx, st, &t->cfg.parse_err, bytes);
}

static __always_inline int steer(struct xdp_md *ctx, const int frags)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 zero = 0, set, idx, slot, q;
	struct xp_rule_counters *rcs;
	struct xp_counter *rc;
	struct xp_stats *st;
	struct xp_parsed p;
	const struct xp_action *a;
	struct xp_fcache_entry *f;
	struct xp_cfg *cfg;
	struct xp_set *t;
	__u64 bytes;
	int err;

	cfg = bpf_map_lookup_elem(&xp_cfg, &zero);
	st = bpf_map_lookup_elem(&xp_stats, &zero);
	if (!cfg || !st)
		return XDP_PASS;
	/* Read once: everything below uses this one set. */
	set = READ_ONCE(cfg->active) & 1;
	t = bpf_map_lookup_elem(&xp_sets, &set);
	if (!t)
		return XDP_PASS;
	/* Without frags the first buffer is the frame; the helper call costs ~9 ns. */
	bytes = frags ? bpf_xdp_get_buff_len(ctx) : (__u64)(end - data);

	/* No rules: the default, once the frame parses; the addresses are not needed. */
	if (!t->cfg.nrules) {
		err = xp_parse(data, end, &p, 0);
		if (err != XP_PARSE_OK)
			return parse_error(ctx, st, t, err, bytes);
		count(st, XP_CNT_DEFAULT, bytes);
		return act(ctx, st, &t->cfg.dflt, bytes);
	}
	/* Now, not once the rule is known: off the path from the flow entry to the verdict. */
	rcs = bpf_map_lookup_elem(&xp_rule_cnt, &set);
	if (!rcs)
		return XDP_PASS;
	err = xp_parse(data, end, &p, 1);
	if (err != XP_PARSE_OK)
		return parse_error(ctx, st, t, err, bytes);
	q = upto(ctx->rx_queue_index, XP_STEER_MAX_QUEUES);
	p.k.l4 = xp_fcache_l4(p.ports, p.ports >> 16, p.vlan, p.ethertype);
	p.k.misc = xp_fcache_misc(q, p.l4proto, p.has_ports);
	slot = xp_fcache_hash(&p.k);
	f = bpf_map_lookup_elem(&xp_fcache, &slot);
	if (!f)
		return XDP_PASS;
	if (flow_hit(f, &p.k, t->cfg.gen) && !(cfg->flags & XP_CFG_F_NOCACHE)) {
		idx = f->k.rule;
		a = &f->act;
	} else {
		idx = classify(t, &p, q);
		a = idx == XP_FCACHE_DEFAULT ? &t->cfg.dflt :
					       &t->act[idx & (XP_STEER_MAX_RULES - 1)];
		/* Word by word: a struct copy reads misc and rule as one word. */
		for (int i = 0; i < 4; i++)
			f->k.addr[i] = p.k.addr[i];
		f->k.l4 = p.k.l4;
		f->k.misc = p.k.misc;
		f->k.rule = idx;
		f->gen = t->cfg.gen;
		f->act = *a;
	}
	if (idx == XP_FCACHE_DEFAULT) {
		count(st, XP_CNT_DEFAULT, bytes);
		return act(ctx, st, a, bytes);
	}
	rc = &rcs->r[idx & (XP_STEER_MAX_RULES - 1)];
	rc->packets++;
	rc->bytes += bytes;
	return act(ctx, st, a, bytes);
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
