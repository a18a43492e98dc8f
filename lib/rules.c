// SPDX-License-Identifier: BSD-3-Clause
/*
 * Rule set compilation: rules (in priority order) become per-field class tables and a
 * deduplicated table of class bitmaps, written into one of the two rule sets of the
 * steer program's maps (layout in bpf/steer_abi.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/steer.h"

#define HT_SIZE (2 * XP_STEER_MAX_CLASSES)
#define XP_RF_BITS 8 /* XP_RF_* are bits 0..7 */
#define RF_BIT(f) __builtin_ctz(f)

struct classes {
	struct xp_bits *bits; /* [XP_STEER_MAX_CLASSES] */
	__u16 *nzw; /* [XP_STEER_MAX_CLASSES] */
	__u32 n;
	__u32 *ht; /* class + 1, 0 empty */
	const struct xp_bits *anchored; /* rules anchored on the field being written */
};

static __u64 bits_hash(const struct xp_bits *b)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < XP_STEER_WORDS; i++)
		h = (h ^ b->w[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* Class id of bitmap @b for the field whose anchored rules are c->anchored, adding it
 * when new; -ENOSPC when the table is full. The same bitmap in a field with other
 * anchored words is another class. */
static int class_of(struct classes *c, const struct xp_bits *b)
{
	__u32 i = bits_hash(b) & (HT_SIZE - 1);
	__u16 nzw = 0;

	for (int w = 0; c->anchored && w < XP_STEER_WORDS; w++)
		if (b->w[w] & c->anchored->w[w])
			nzw |= 1u << w;
	for (;; i = (i + 1) & (HT_SIZE - 1)) {
		__u32 e = c->ht[i];

		if (!e)
			break;
		if (c->nzw[e - 1] == nzw && !memcmp(&c->bits[e - 1], b, sizeof(*b)))
			return e - 1;
	}
	if (c->n >= XP_STEER_MAX_CLASSES)
		return -ENOSPC;
	c->bits[c->n] = *b;
	c->nzw[c->n] = nzw;
	c->ht[i] = c->n + 1;
	return c->n++;
}

static void bit_set(struct xp_bits *b, __u32 i)
{
	b->w[i / 64] |= 1ULL << (i % 64);
}

/* Rules that do not constrain @field. */
static void wild(const struct xp_rule *r, __u32 n, __u32 field, struct xp_bits *b)
{
	memset(b, 0, sizeof(*b));
	for (__u32 i = 0; i < n; i++)
		if (!(r[i].fields & field))
			bit_set(b, i);
}

static bool prefix_contains(const __u8 *outer, __u32 olen, const __u8 *inner, __u32 ilen)
{
	if (olen > ilen)
		return false;
	for (__u32 i = 0; i < olen; i++)
		if (((outer[i / 8] ^ inner[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

static void prefix_mask(__u8 *a, __u32 len, __u32 bytes)
{
	for (__u32 i = 0; i < bytes * 8; i++)
		if (i >= len)
			a[i / 8] &= ~(1 << (7 - i % 8));
}

/* Prefix trie of one (set, direction, family) being built in memory; see steer_abi.h. */
struct trie {
	struct xp_pfx_block *blk; /* the set's XP_PFX_BLOCKS */
	__u32 next; /* next free dynamic block */
};

static void fill(struct xp_pfx_block *b, __u32 lo, __u32 n, __u16 v)
{
	for (__u32 i = lo; i < lo + n; i++)
		b->e[i] = v;
}

/* Paints class @cls over the addresses of prefix @a/@len below block @id, which is
 * indexed by address byte @lvl. Prefixes come shortest first, so a longer one only
 * ever splits an entry that still holds a class. */
static int paint(struct trie *t, __u32 id, __u32 lvl, const __u8 *a, __u32 len, __u16 cls)
{
	for (;; lvl++) {
		struct xp_pfx_block *b = &t->blk[id];
		__u32 rem = len - 8 * lvl;
		__u16 e;

		if (rem <= 8) {
			__u32 span = 1u << (8 - rem);

			fill(b, a[lvl] & ~(span - 1) & 0xff, span, cls);
			return 0;
		}
		e = b->e[a[lvl]];
		if (!(e & XP_PFX_PTR)) {
			__u32 nb;

			if (t->next >= XP_PFX_BLOCKS)
				return -ENOSPC;
			nb = t->next++;
			fill(&t->blk[nb], 0, 256, e);
			b->e[a[lvl]] = XP_PFX_PTR | nb;
			e = b->e[a[lvl]];
		}
		id = e & ~XP_PFX_PTR;
	}
}

static int write_prefixes(struct trie *t, __u32 dir, __u32 family, const struct xp_rule *r, __u32 n,
			  struct classes *c, __u32 *none)
{
	__u32 field = dir ? XP_RF_DST : XP_RF_SRC, alen = family == 4 ? 4 : 16, np = 0;
	struct {
		__u8 addr[16];
		__u32 len;
	} *pfx = calloc(n + 1, sizeof(*pfx));
	struct xp_bits b;
	int err = 0;

	if (!pfx)
		return -ENOMEM;
	/* The /0 entry: any address of this family gets at least the wildcard rules. */
	pfx[np++].len = 0;
	for (__u32 i = 0; i < n; i++) {
		const __u8 *a = dir ? r[i].dst : r[i].src;
		__u32 len = dir ? r[i].dst_len : r[i].src_len, j;

		if (!(r[i].fields & field) || r[i].family != family)
			continue;
		memcpy(pfx[np].addr, a, alen);
		prefix_mask(pfx[np].addr, len, alen);
		pfx[np].len = len;
		for (j = 0; j < np; j++)
			if (pfx[j].len == len && !memcmp(pfx[j].addr, pfx[np].addr, alen))
				break;
		if (j == np)
			np++;
	}
	/* shortest first (insertion sort, once per replace) */
	for (__u32 i = 1; i < np; i++)
		for (__u32 j = i; j > 0 && pfx[j - 1].len > pfx[j].len; j--) {
			__typeof__(*pfx) tmp = pfx[j];

			pfx[j] = pfx[j - 1];
			pfx[j - 1] = tmp;
		}
	wild(r, n, field, &b);
	err = class_of(c, &b);
	if (err < 0)
		goto out;
	*none = err;
	for (__u32 p = 0; p < np; p++) {
		__u32 root0 = xp_pfx_root(dir, family == 6, 0);
		__u16 cls;

		/* Every rule whose prefix contains this one: the longest stored prefix
		 * matching an address then knows all the rules its address matches. */
		wild(r, n, field, &b);
		for (__u32 i = 0; i < n; i++) {
			const __u8 *a = dir ? r[i].dst : r[i].src;
			__u32 len = dir ? r[i].dst_len : r[i].src_len;

			if ((r[i].fields & field) && r[i].family == family &&
			    prefix_contains(a, len, pfx[p].addr, pfx[p].len))
				bit_set(&b, i);
		}
		err = class_of(c, &b);
		if (err < 0)
			goto out;
		cls = err;
		err = 0;
		if (pfx[p].len <= 8) {
			__u32 span = 1u << (8 - pfx[p].len);

			__u32 first = pfx[p].addr[0] & ~(span - 1) & 0xff;

			for (__u32 b0 = first; b0 < first + span; b0++)
				fill(&t->blk[root0 + b0], 0, 256, cls);
		} else {
			err = paint(t, root0 + pfx[p].addr[0], 1, pfx[p].addr, pfx[p].len, cls);
			if (err) {
				/* Said here, once: not the class table's -ENOSPC. */
				xp_err("rule set needs more than %d trie blocks for prefixes "
				       "longer than /16 (an IPv6 /128 takes up to 14); use fewer "
				       "or shorter prefixes\n",
				       XP_PFX_DYN);
				err = -E2BIG;
				goto out;
			}
		}
	}
out:
	free(pfx);
	return err;
}

static int update_array(int fd, __u32 first, const void *vals, size_t vsz, __u32 count)
{
	__u32 *keys, done = count;
	int err;

	if (!count)
		return 0;
	keys = calloc(count, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < count; i++)
		keys[i] = first + i;
	err = bpf_map_update_batch(fd, keys, vals, &done, NULL);
	if (err == -EINVAL || err == -EOPNOTSUPP) {
		err = 0;
		for (__u32 i = 0; i < count && !err; i++)
			err = bpf_map_update_elem(fd, &keys[i], (const char *)vals + i * vsz,
						  BPF_ANY);
	}
	free(keys);
	return err;
}

static int write_ports(__u32 *tab, bool dst, const struct xp_rule *r, __u32 n, struct classes *c,
		       __u32 *none)
{
	__u32 field = dst ? XP_RF_DPORT : XP_RF_SPORT, nb = 0;
	__u32 *bounds = malloc((2 * n + 2) * sizeof(*bounds));
	struct xp_bits b;
	int err;

	if (!bounds) {
		err = -ENOMEM;
		goto out;
	}
	wild(r, n, field, &b);
	err = class_of(c, &b);
	if (err < 0)
		goto out;
	*none = err;
	/* Elementary intervals: the ports between two consecutive range ends share a
	 * bitmap, so at most 2n + 1 distinct bitmaps. */
	bounds[nb++] = 0;
	bounds[nb++] = XP_STEER_PORTS;
	for (__u32 i = 0; i < n; i++) {
		if (!(r[i].fields & field))
			continue;
		bounds[nb++] = dst ? r[i].dport_lo : r[i].sport_lo;
		bounds[nb++] = (dst ? r[i].dport_hi : r[i].sport_hi) + 1u;
	}
	for (__u32 i = 1; i < nb; i++) /* insertion sort: n is small, run once per replace */
		for (__u32 j = i; j > 0 && bounds[j - 1] > bounds[j]; j--) {
			__u32 t = bounds[j];

			bounds[j] = bounds[j - 1];
			bounds[j - 1] = t;
		}
	for (__u32 i = 0; i + 1 < nb; i++) {
		__u32 lo = bounds[i], hi = bounds[i + 1];

		if (lo == hi)
			continue;
		wild(r, n, field, &b);
		for (__u32 j = 0; j < n; j++) {
			__u32 rlo = dst ? r[j].dport_lo : r[j].sport_lo;
			__u32 rhi = dst ? r[j].dport_hi : r[j].sport_hi;

			if ((r[j].fields & field) && rlo <= lo && hi - 1 <= rhi)
				bit_set(&b, j);
		}
		err = class_of(c, &b);
		if (err < 0)
			goto out;
		for (__u32 p = lo; p < hi; p++)
			tab[p] = err;
	}
	err = 0;
out:
	free(bounds);
	return err;
}

static __u32 field_value(const struct xp_rule *r, __u32 field)
{
	switch (field) {
	case XP_RF_QUEUE:
		return r->queue;
	case XP_RF_VLAN:
		return r->vlan;
	case XP_RF_ETHTYPE:
		return r->ethertype;
	default:
		return r->l4proto;
	}
}

/* A field looked up by value in a table of @size entries: values no rule names (and
 * the extra "none" entries at the end) get the wildcard class. */
static int write_array_field(__u32 *tab, __u32 field, __u32 size, const struct xp_rule *r, __u32 n,
			     struct classes *c)
{
	struct xp_bits b;
	int err;

	wild(r, n, field, &b);
	err = class_of(c, &b);
	for (__u32 v = 0; v < size && err >= 0; v++)
		tab[v] = err;
	for (__u32 i = 0; i < n && err >= 0; i++) {
		__u32 v = field_value(&r[i], field);

		if (!(r[i].fields & field) || v >= size)
			continue;
		wild(r, n, field, &b);
		for (__u32 j = 0; j < n; j++)
			if ((r[j].fields & field) && field_value(&r[j], field) == v)
				bit_set(&b, j);
		err = class_of(c, &b);
		if (err >= 0)
			tab[v] = err;
	}
	return err < 0 ? err : 0;
}

static int write_tries(struct xp_set *st, const struct xp_rule *r, __u32 n, struct classes *c,
		       const struct xp_bits *anchored)
{
	struct trie t = { .blk = st->pfx, .next = XP_PFX_ROOTS };
	int err = 0;

	for (__u32 dir = 0; dir < 2 && !err; dir++) {
		__u32 *none = dir ? &st->cfg.dst_none : &st->cfg.src_none;

		if (!(st->cfg.used & (dir ? XP_RF_DST : XP_RF_SRC)))
			continue;
		c->anchored = &anchored[RF_BIT(dir ? XP_RF_DST : XP_RF_SRC)];
		err = write_prefixes(&t, dir, 4, r, n, c, none);
		err = err ?: write_prefixes(&t, dir, 6, r, n, c, none);
	}
	return err;
}

/* How much of a field's value space one rule accepts, as -log2, roughly: the anchor is
 * the field with the highest, where fewest packets find the rule. EtherType and L4
 * protocol count as accepting half the traffic (IPv4, TCP), queues a quarter. */
static __u32 selectivity(const struct xp_rule *r, __u32 bit)
{
	__u32 span;

	switch (1u << bit) {
	case XP_RF_SRC:
		return r->src_len;
	case XP_RF_DST:
		return r->dst_len;
	case XP_RF_SPORT:
	case XP_RF_DPORT:
		span = (1u << bit) == XP_RF_SPORT ? r->sport_hi - r->sport_lo :
						    r->dport_hi - r->dport_lo;
		return 16 - (32 - __builtin_clz(span + 1)) + 1;
	case XP_RF_VLAN:
		return 4;
	case XP_RF_QUEUE:
		return 2;
	default:
		return 1;
	}
}

/* anchored[field bit]: the rules anchored on that field; *always: the words holding a
 * rule that constrains nothing (it matches every packet). */
static void anchor_rules(const struct xp_rule *r, __u32 n, struct xp_bits *anchored, __u32 *always)
{
	memset(anchored, 0, XP_RF_BITS * sizeof(*anchored));
	*always = 0;
	for (__u32 i = 0; i < n; i++) {
		__u32 best = XP_RF_BITS, sel = 0;

		for (__u32 b = 0; b < XP_RF_BITS; b++)
			if ((r[i].fields & (1u << b)) &&
			    (best == XP_RF_BITS || selectivity(&r[i], b) > sel)) {
				best = b;
				sel = selectivity(&r[i], b);
			}
		if (best == XP_RF_BITS)
			*always |= 1u << (i / 64);
		else
			bit_set(&anchored[best], i);
	}
}

/* Each class-table entry gets its class's nzw beside it: one load per field in the
 * program (XP_CLS_ENTRY). */
static void add_nzw(struct xp_set *t)
{
	const struct {
		__u32 *e, n;
	} tabs[] = {
		{ t->queue, XP_STEER_MAX_QUEUES + 1 },
		{ t->l4, XP_STEER_L4_NONE + 1 },
		{ t->vlan, XP_STEER_VLANS },
		{ t->eth, XP_STEER_ETHTYPES },
		{ t->sport, XP_STEER_PORTS },
		{ t->dport, XP_STEER_PORTS },
		{ &t->cfg.sport_none, 1 },
		{ &t->cfg.dport_none, 1 },
	};

	for (__u32 f = 0; f < sizeof(tabs) / sizeof(tabs[0]); f++)
		for (__u32 v = 0; v < tabs[f].n; v++)
			tabs[f].e[v] = XP_CLS_ENTRY(tabs[f].e[v], t->nzw[tabs[f].e[v]]);
}

int xp_rules_compile(const int *fds, __u32 set, const struct xp_rule *rules, __u32 n,
		     const struct xp_action *dflt, const struct xp_action *perr)
{
	struct xp_set *t = calloc(1, sizeof(*t));
	struct classes c = { 0 };
	struct xp_set_cfg *sc;
	struct xp_bits all = { 0 }, anch[XP_RF_BITS];
	int err = 0;

	if (n > XP_STEER_MAX_RULES) {
		free(t);
		return -E2BIG;
	}
	c.ht = calloc((size_t)HT_SIZE, sizeof(*c.ht));
	if (!t || !c.ht) {
		err = -ENOMEM;
		goto out;
	}
	c.bits = t->bits;
	c.nzw = t->nzw;
	sc = &t->cfg;
	sc->nrules = n;
	sc->nwords = (n + 63) / 64;
	for (__u32 i = 0; i < n; i++) {
		bit_set(&all, i);
		sc->used |= rules[i].fields;
		t->act[i] = rules[i].action;
	}
	class_of(&c, &all); /* class 0: fields no rule uses */
	anchor_rules(rules, n, anch, &sc->always);
	sc->dflt = *dflt;
	sc->parse_err = *perr;
	/* Past both sets' generations: cached verdicts of any earlier set never match. */
	for (__u32 k = 0; k < XP_STEER_SETS; k++) {
		struct xp_set_cfg o;

		if (!bpf_map_lookup_elem(fds[XP_M_SETCFG], &k, &o) && o.gen >= sc->gen)
			sc->gen = o.gen + 1;
	}
	if (!sc->gen)
		sc->gen = 1;

	c.anchored = &anch[RF_BIT(XP_RF_QUEUE)];
	if (sc->used & XP_RF_QUEUE)
		err = write_array_field(t->queue, XP_RF_QUEUE, XP_STEER_MAX_QUEUES + 1, rules, n,
					&c);
	c.anchored = &anch[RF_BIT(XP_RF_L4PROTO)];
	if (!err && (sc->used & XP_RF_L4PROTO))
		err = write_array_field(t->l4, XP_RF_L4PROTO, XP_STEER_L4_NONE + 1, rules, n, &c);
	c.anchored = &anch[RF_BIT(XP_RF_VLAN)];
	if (!err && (sc->used & XP_RF_VLAN))
		err = write_array_field(t->vlan, XP_RF_VLAN, XP_STEER_VLANS, rules, n, &c);
	c.anchored = &anch[RF_BIT(XP_RF_ETHTYPE)];
	if (!err && (sc->used & XP_RF_ETHTYPE))
		err = write_array_field(t->eth, XP_RF_ETHTYPE, XP_STEER_ETHTYPES, rules, n, &c);
	c.anchored = &anch[RF_BIT(XP_RF_SPORT)];
	if (!err && (sc->used & XP_RF_SPORT))
		err = write_ports(t->sport, false, rules, n, &c, &sc->sport_none);
	c.anchored = &anch[RF_BIT(XP_RF_DPORT)];
	if (!err && (sc->used & XP_RF_DPORT))
		err = write_ports(t->dport, true, rules, n, &c, &sc->dport_none);
	if (!err && (sc->used & (XP_RF_SRC | XP_RF_DST)))
		err = write_tries(t, rules, n, &c, anch);
	if (!err)
		add_nzw(t);
	if (err) {
		if (err == -ENOSPC)
			xp_err("rule set needs more than %d distinct field classes; split it\n",
			       XP_STEER_MAX_CLASSES);
		goto out;
	}
	if (n)
		err = update_array(fds[XP_M_RULES], set * XP_STEER_MAX_RULES, rules, sizeof(*rules),
				   n);
	/* The whole set in one write; the program reads it only after the flip. */
	if (!err && bpf_map_update_elem(fds[XP_M_SETS], &set, t, BPF_ANY))
		err = -errno;
	if (!err && bpf_map_update_elem(fds[XP_M_SETCFG], &set, sc, BPF_ANY))
		err = -errno;
	if (err)
		xp_err("writing rule set %u failed: %s\n", set, strerror(-err));
out:
	free(t);
	free(c.ht);
	return err;
}
