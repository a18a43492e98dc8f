// SPDX-License-Identifier: BSD-3-Clause
/*
 * xp_steer: parse, classify against the active rule set, act, count.
 *
 * Classification is a handful of table lookups and an AND of their bitmaps over the
 * words the anchored classes name (see steer_abi.h), so its cost barely grows with the
 * number of rules. Lookups for fields no rule uses are skipped. A per-CPU flow cache
 * in front of it gives a flow's later packets the same rule without the tables; with
 * no rules the frame is only checked. Two entry points: xp_steer for frames in one
 * buffer, and xp_steer_frags (xdp.frags) for multi-buffer jumbo frames, which classifies
 * from the first buffer and counts the whole frame.
 *
 * Per packet, in the order they happen (docs/steer.md, "What a packet costs"): the
 * config entry (its set's rule count, defaults and generation are in it), the per-CPU
 * counters, the parse; with rules the rule counters and the flow cache slot, and only on
 * a cache miss the rule set itself. Every lookup is of an array the verifier inlines;
 * the one helper call is the verdict's (bpf_redirect_map() for xsk, as in the minimal
 * program), and each packet moves one verdict counter, plus its rule's.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>

#include "parse.h"
#include "route.h"
#include "steer_abi.h"
#include "xsks_map.h"

#define SETS XP_STEER_SETS
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

/* A global: its address is a constant in the code, no lookup (steer_abi.h). */
struct xp_cfg xp_cfg SEC(XP_CFG_SECTION);

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

/* An action's kind and flags as one 16-bit load sees them. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KIND_FLAGS(kind, flags) ((kind) | (flags) << 8)
#else
#define KIND_FLAGS(kind, flags) ((kind) << 8 | (flags))
#endif

/* The route action: forwarded in XDP, else the engine's (its socket on this queue),
 * counted in @path as act() counts. A call of its own, ending in the verdict: nothing
 * of act()'s callers lives across it, so the other actions' paths keep their registers
 * (inlined, the no-rule path spilled the frame length: 3 instructions, ~1 ns). */
static __noinline int route_act(struct xdp_md *ctx, __u32 in, struct xp_counter *path, __u64 bytes)
{
	long ret = xp_route(ctx, in);
	__u32 rxq = ctx->rx_queue_index;
	__u32 v = XP_CNT_REDIRECT;

	if (ret == XP_ROUTE_NOT_ROUTED) {
		ret = bpf_redirect_map(&xp_xsks, rxq, XDP_PASS);
		v = ret == XDP_REDIRECT ? XP_CNT_XSK : XP_CNT_XSK_NOSOCK;
	}
	path[v].packets++;
	path[v].bytes += bytes;
	return ret;
}

/* Applies @a and counts the packet under the verdict it got in @path (one of
 * xp_stats.path): one counter per packet. The socket of the packet's own queue
 * (@rxq: ctx->rx_queue_index) first, the common case, known by one compare of kind and
 * flags together. */
static __always_inline int act(struct xdp_md *ctx, __u32 rxq, struct xp_counter *path,
			       const struct xp_action *a, __u64 bytes)
{
	__u32 kind = a->kind, v;
	long ret;

	if (__builtin_expect(*(const __u16 *)a == KIND_FLAGS(XP_ACT_XSK, 0), 1)) {
		/* No socket on that queue: the kernel gets it, never a black hole. */
		ret = bpf_redirect_map(&xp_xsks, rxq, XDP_PASS);
		v = ret == XDP_REDIRECT ? XP_CNT_XSK : XP_CNT_XSK_NOSOCK;
	} else if (kind == XP_ACT_XSK) {
		ret = bpf_redirect_map(
			&xp_xsks, a->flags & XP_ACT_F_SLOT ? XP_STEER_MAX_QUEUES + a->slot : rxq,
			XDP_PASS);
		v = ret == XDP_REDIRECT ? XP_CNT_XSK : XP_CNT_XSK_NOSOCK;
	} else if (kind == XP_ACT_DROP) {
		ret = XDP_DROP;
		v = XP_CNT_DROP;
	} else if (kind == XP_ACT_TX) {
		ret = XDP_TX;
		v = XP_CNT_TX;
	} else if (kind == XP_ACT_REDIRECT) {
		ret = bpf_redirect(a->ifindex, 0);
		v = XP_CNT_REDIRECT;
	} else if (kind == XP_ACT_ROUTE) {
		return route_act(ctx, a->ifindex, path, bytes);
	} else {
		ret = XDP_PASS;
		v = XP_CNT_PASS;
	}
	path[v].packets++;
	path[v].bytes += bytes;
	return ret;
}

/* One step of a search for the lowest set bit: when the low @b bits of @x are 0, skips
 * them. The empty asm keeps it a branch, which the CPU predicts: as a select (what clang
 * makes of it otherwise) its result would wait for @x. */
#define LOWBIT_STEP(x, n, b)                                 \
	do {                                                 \
		if (!((x) & ((1ULL << (b)) - 1))) {          \
			(n) += (b);                          \
			(x) >>= (b);                         \
			asm volatile("" : "+r"(n), "+r"(x)); \
		}                                            \
	} while (0)

/* The lowest set bit of the 16-bit @x (non-zero) by branches: the eight bitmap loads that
 * use the word index then need not wait for arithmetic on @x, the end of a first packet's
 * chain of dependent loads (a de Bruijn multiply and table load here cost ~4 ns). @opaque
 * is 0 at run time but unknown to the verifier: adding it merges the 16 paths the
 * branches make, which the verifier would otherwise follow, each with its own constant,
 * through everything after. */
static __always_inline __u32 lowbit16(__u32 x, __u32 opaque)
{
	__u32 n = 0;

	LOWBIT_STEP(x, n, 8);
	LOWBIT_STEP(x, n, 4);
	LOWBIT_STEP(x, n, 2);
	LOWBIT_STEP(x, n, 1);
	return (n + opaque) & 15;
}

/* The lowest set bit of the 64-bit @x (non-zero), the rule's index in its word. de Bruijn:
 * the lowest set bit times the sequence puts a unique pattern in the top six bits. No
 * branches: six of them (as in lowbit16()) measured no faster a first packet and cost 24
 * instructions, and a flow's first packets, unlike the bench's, do not all take one path. */
static const __u8 ctz_tab[64] = {
	0,  1,	48, 2,	57, 49, 28, 3,	61, 58, 50, 42, 38, 29, 17, 4,	62, 55, 59, 36, 53, 51,
	43, 22, 45, 39, 33, 30, 24, 18, 12, 5,	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21,
	44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,	13, 8,	7,  6,
};

static __always_inline __u32 ctz64(__u64 x)
{
	return ctz_tab[((x & -x) * 0x03f79d71b4cb0a89ULL) >> 58];
}

/* Walks the prefix trie from root block @root (xp_pfx_root() of the direction and
 * family, byte 0): one load per address byte past the second, and only as deep as the
 * longest prefix on this address's path. @alen: 4 or 16. */
static __always_inline __u32 prefix_class(const struct xp_set *t, const __u8 *addr, __u32 root,
					  __u32 alen)
{
	/* Root block root + addr[0], entry addr[1]: the root blocks are one array of 16-bit
	 * entries indexed by the address's first two bytes, one 16-bit load. */
	const __u16 *roots = (const __u16 *)t->pfx;
	__u32 a01 = bpf_ntohs(*(const __u16 *)addr);
	__u16 e = roots[(root * 256 + a01) & (XP_PFX_ROOTS * 256 - 1)];

	for (__u32 i = 2; i < 16; i++) {
		__u32 b = e & ~XP_PFX_PTR;

		if (!(e & XP_PFX_PTR) || i >= alen || b >= XP_PFX_BLOCKS)
			break;
		e = t->pfx[b].e[addr[i]];
	}
	return XP_CLS_OF(e);
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

#define NFIELDS 8

/* The first matching rule's index by the tables, or XP_FCACHE_DEFAULT.
 *
 * Two passes. The first turns each field's table entry (XP_CLS_ENTRY) into the byte
 * offset of its class's bitmap, kept in memory (@off: eight live pointers would not fit
 * BPF's registers, and clang's spills of them cost more than these stores), and ORs the
 * words of rules anchored on it into @cand. The second ANDs the offsets' bitmaps over
 * those words only. */
static __always_inline __u32 classify(const struct xp_set *t, const struct xp_parsed *p, __u64 q)
{
	__u64 off[NFIELDS];
	__u32 used = t->cfg.used, cand = t->cfg.always, fam = p->family, fam6 = fam == 6, e;
	__u32 alen = fam6 ? 16 : 4;
	__u32 opaque;
	__u64 l4 = p->k.l4;
	__u32 misc = p->k.misc;

	/* Unused fields keep class 0 (every rule, no anchored word); the others are one
	 * load each, the class and its words together. */
#define TAKE(k, entry)                                                 \
	do {                                                           \
		e = (entry);                                           \
		off[k] = (__u64)XP_CLS_OF(e) * sizeof(struct xp_bits); \
		cand |= XP_CLS_NZW(e);                                 \
	} while (0)
	TAKE(0, used & XP_RF_QUEUE ? t->queue[upto(q, XP_STEER_MAX_QUEUES)] : 0);
	TAKE(1, used & XP_RF_VLAN ? t->vlan[upto(l4 >> 32 & 0xffff, XP_STEER_VLANS - 1)] : 0);
	TAKE(2, used & XP_RF_ETHTYPE ? t->eth[l4 >> 48] : 0);
	TAKE(3, used & XP_RF_L4PROTO ? t->l4[fam ? misc >> 16 & 0xff : XP_STEER_L4_NONE] : 0);
	TAKE(4, !(used & XP_RF_SPORT) ? 0 :
		misc & (1u << 24)     ? t->sport[l4 & 0xffff] :
					t->cfg.sport_none);
	TAKE(5, !(used & XP_RF_DPORT) ? 0 :
		misc & (1u << 24)     ? t->dport[l4 >> 16 & 0xffff] :
					t->cfg.dport_none);
	/* Trie entries are bare classes (16 bits): their words come from nzw. */
	e = 0;
	if (used & XP_RF_SRC)
		e = !fam ? t->cfg.src_none :
			   prefix_class(t, xp_parsed_src(p), xp_pfx_root(0, fam6, 0), alen);
	e = XP_CLS_OF(e);
	TAKE(6, XP_CLS_ENTRY(e, t->nzw[e]));
	e = 0;
	/* The destination follows the source by the address length: xp_parsed_dst() without
	 * its family test. */
	if (used & XP_RF_DST)
		e = !fam ? t->cfg.dst_none :
			   prefix_class(t, xp_parsed_src(p) + alen, xp_pfx_root(1, fam6, 0), alen);
	e = XP_CLS_OF(e);
	TAKE(7, XP_CLS_ENTRY(e, t->nzw[e]));
#undef TAKE

	/* 0, as nwords is at most 16; the verifier cannot know (lowbit16()). */
	opaque = t->cfg.nwords >> 8;
	/* The only words that can hold a match (steer_abi.h). */
	for (__u32 n = 0; n < XP_STEER_WORDS; n++) {
		const __u8 *w;
		__u32 i;
		__u64 m;

		if (!cand)
			break;
		/* Keep off[] in memory, loaded where it is used: hoisted out of the loop,
		 * clang spills the eight offsets to other slots and fills them again. Their
		 * 64-bit stack slots keep the bounds the verifier knew at the store. */
		asm volatile("" : : "r"(off) : "memory");
		i = lowbit16(cand, opaque);
		cand &= cand - 1;
		w = (const __u8 *)&t->bits[0].w[i];
#define W(k) (*(const __u64 *)(w + off[k]))
		/* A tree, not a chain: the AND is on a first packet's critical path. */
		m = ((W(0) & W(1)) & (W(2) & W(3))) & ((W(4) & W(5)) & (W(6) & W(7)));
#undef W
		if (m)
			return (i * 64 + ctz64(m)) & (XP_STEER_MAX_RULES - 1);
	}
	return XP_FCACHE_DEFAULT;
}

/* steer_rules() fills an entry's act with one 8-byte store. */
_Static_assert(__builtin_offsetof(struct xp_fcache_entry, act) % 8 == 0, "act not 8-aligned");

/* Whether cache entry @f holds the key @k classified by the set of generation @gen. */
static __always_inline int flow_hit(const struct xp_fcache_entry *f, const struct xp_fcache_key *k,
				    __u64 gen)
{
	/* One branch: the differences ORed together. */
	return !((f->k.addr[0] ^ k->addr[0]) | (f->k.addr[1] ^ k->addr[1]) |
		 (f->k.addr[2] ^ k->addr[2]) | (f->k.addr[3] ^ k->addr[3]) | (f->k.l4 ^ k->l4) |
		 (f->k.misc ^ k->misc) | (f->gen ^ gen));
}

/* flow_hit() for a key that is not IPv6. An entry with the same l4 word has the same
 * EtherType, so the same family, and its addr[1..3] are 0 as well. */
static __always_inline int flow_hit4(const struct xp_fcache_entry *f, const struct xp_fcache_key *k,
				     __u64 gen)
{
	return !((f->k.addr[0] ^ k->addr[0]) | (f->k.l4 ^ k->l4) | (f->k.misc ^ k->misc) |
		 (f->gen ^ gen));
}

static __noinline int parse_error(struct xdp_md *ctx, struct xp_stats *st,
				  const struct xp_set_cfg *sc, int err, __u64 bytes)
{
	__u32 reason = err < XP_PERR_MAX ? err : 0;

	st->perr[reason]++;
	return act(ctx, ctx->rx_queue_index, st->path[XP_PATH_PARSE_ERR], &sc->parse_err, bytes);
}

/* The frame's length: without frags the first buffer is the frame; the helper call costs
 * ~9 ns. */
static __always_inline __u64 frame_len(struct xdp_md *ctx, const int frags)
{
	if (frags)
		return bpf_xdp_get_buff_len(ctx);
	/* As pointers: a 64-bit difference, no zero-extension of a 32-bit one. */
	return (void *)(long)ctx->data_end - (void *)(long)ctx->data;
}

/* No rules and a default other than the queue's socket: the route action (the router,
 * user/modes/router_xdp.c) takes the route path first, by its own checks, and the parse
 * only for what it leaves to the engine, which gets it as the default would (its socket,
 * or the parse-error action); what it forwards is not parsed past IP, as a router does
 * not read L4. Any other default: parse, then act. A call of its own, so that the common
 * default's path below carries none of this. */
/* The default route action: XDP_REDIRECT counted, or XP_ROUTE_NOT_ROUTED for the
 * engine's socket. A call of its own beside steer_default_other(), not in it, so the
 * verifier's sum of stack frames along a call chain holds the lookup's or the parse's,
 * never both. */
static __noinline int steer_default_route(struct xdp_md *ctx, struct xp_counter *path, __u32 in,
					  __u64 bytes)
{
	long ret = xp_route(ctx, in);

	if (ret != XP_ROUTE_NOT_ROUTED) {
		path[XP_CNT_REDIRECT].packets++;
		path[XP_CNT_REDIRECT].bytes += bytes;
	}
	return (int)ret;
}

static __noinline int steer_default_other(struct xdp_md *ctx, struct xp_stats *st,
					  const struct xp_set_cfg *sc, __u64 bytes)
{
	const struct xp_action xsk = { .kind = XP_ACT_XSK };
	struct xp_counter *path = st->path[XP_PATH_DEFAULT];
	const struct xp_action *a = &sc->dflt;
	struct xp_parsed p;
	int err;

	if (a->kind == XP_ACT_ROUTE) /* not routed: steer_default() asked the route first */
		a = &xsk;
	err = xp_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &p, 0);
	if (err != XP_PARSE_OK)
		return parse_error(ctx, st, sc, err, bytes);
	return act(ctx, ctx->rx_queue_index, path, a, bytes);
}

/* No rules: the default, once the frame parses; the addresses are not needed. The
 * common default, the socket of the packet's queue, is known before the parse by one
 * compare of kind and flags together (act()'s first). */
static __always_inline int steer_default(struct xdp_md *ctx, struct xp_stats *st,
					 const struct xp_set_cfg *sc, const int frags)
{
	/* The length first: one value kept across the parse, not data and data_end. */
	__u64 bytes = frame_len(ctx, frags);
	struct xp_parsed p;
	int err;

	if (__builtin_expect(*(const __u16 *)&sc->dflt != KIND_FLAGS(XP_ACT_XSK, 0), 0)) {
		if (sc->dflt.kind == XP_ACT_ROUTE) {
			err = steer_default_route(ctx, st->path[XP_PATH_DEFAULT], sc->dflt.ifindex,
						  bytes);
			if (err != XP_ROUTE_NOT_ROUTED)
				return err;
		}
		return steer_default_other(ctx, st, sc, bytes);
	}
	err = xp_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &p, 0);
	if (err != XP_PARSE_OK)
		return parse_error(ctx, st, sc, err, bytes);
	/* act()'s first compare is the one above: the compiler folds it. */
	return act(ctx, ctx->rx_queue_index, st->path[XP_PATH_DEFAULT], &sc->dflt, bytes);
}

static __always_inline int steer_rules(struct xdp_md *ctx, const struct xp_cfg *cfg,
				       struct xp_rule_counters *rcs, const struct xp_set_cfg *sc,
				       const __u32 *set, const int frags)
{
	const struct xp_action *a;
	struct xp_fcache_entry *f;
	struct xp_counter *rc;
	__u32 idx, slot, rxq;
	__u64 q;
	struct xp_parsed p;
	struct xp_set *t;
	__u64 bytes;
	int err, hit;

	bytes = frame_len(ctx, frags); /* first, as in steer_default() */
	err = xp_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &p, 1);
	if (err != XP_PARSE_OK)
		return parse_error(ctx, &rcs->stats, sc, err, bytes);
	rxq = ctx->rx_queue_index;
	q = upto(rxq, XP_STEER_MAX_QUEUES);
	p.k.misc |= q;
	slot = xp_fcache_slot(p.ha, p.k.l4, p.k.misc);
	f = bpf_map_lookup_elem(&xp_fcache, &slot);
	if (!f)
		return XDP_PASS;
	hit = p.family == 6 ? flow_hit(f, &p.k, sc->gen) : flow_hit4(f, &p.k, sc->gen);
	if (hit && !(cfg->flags & XP_CFG_F_NOCACHE)) {
		idx = f->k.rule;
		a = &f->act;
	} else {
		/* A miss: only now the tables. */
		t = bpf_map_lookup_elem(&xp_sets, set);
		if (!t)
			return XDP_PASS;
		idx = classify(t, &p, q);
		a = idx == XP_FCACHE_DEFAULT ? &t->cfg.dflt :
					       &t->act[idx & (XP_STEER_MAX_RULES - 1)];
		/* Word by word: a struct copy reads misc and rule as one word. */
		for (int i = 0; i < 4; i++)
			f->k.addr[i] = p.k.addr[i];
		f->k.l4 = p.k.l4;
		f->k.misc = p.k.misc;
		f->k.rule = idx;
		f->gen = sc->gen;
		/* One 8-byte copy, not clang's two loads, shift and OR for a struct aligned
		 * to 4: the entry's act is 8-aligned, the source is read as parse.h reads
		 * packet words (the set's default is not 8-aligned). */
		*(__u64 *)&f->act = xp_load64(a);
	}
	if (idx == XP_FCACHE_DEFAULT)
		return act(ctx, rxq, rcs->stats.path[XP_PATH_DEFAULT], a, bytes);
	rc = &rcs->r[idx & (XP_STEER_MAX_RULES - 1)];
	rc->packets++;
	rc->bytes += bytes;
	return act(ctx, rxq, rcs->stats.path[XP_PATH_RULE], a, bytes);
}

/* The lookup comes first, the frame after: data and data_end then live in scratch
 * registers, not on the stack across it. */
static __always_inline int steer(struct xdp_md *ctx, const int frags)
{
	const struct xp_cfg *cfg = &xp_cfg;
	struct xp_rule_counters *rcs;
	const struct xp_set_cfg *sc;
	__u32 set;

	/* Read once: everything below uses this one set. */
	set = READ_ONCE(cfg->active) & 1;
	sc = &cfg->set[set];
	rcs = bpf_map_lookup_elem(&xp_rule_cnt, &set);
	if (!rcs)
		return XDP_PASS;
	if (!sc->nrules)
		return steer_default(ctx, &rcs->stats, sc, frags);
	/* The key by reference: one stack slot for both lookups. */
	return steer_rules(ctx, cfg, rcs, sc, &set, frags);
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

/* Read by the loader before load (lib/steer.c): never referenced by the program. */
const volatile __u32 xp_abi_version SEC(".rodata.xp_abi") = XP_STEER_ABI_VERSION;

char _license[] SEC("license") = "Dual BSD/GPL";
