// SPDX-License-Identifier: BSD-3-Clause
/*
 * The LPM trie's writer (see lib/lpm_internal.h and xpile/lpm.h): controlled prefix
 * expansion with leaf pushing over a root of 2^root_bits entries and groups of 256,
 * a depth per entry so that a delete restores the covering rule, the two ways of
 * publishing (in place, or a standby image flipped and caught up from a log of runs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "lpm_internal.h"

/* Runs logged before the catch-up copies the whole image instead (8 MiB of log). */
#define LOG_MAX (1u << 20)

static size_t grp_base(const struct lpm_core *c, __u32 g)
{
	return c->root_n + ((size_t)g << 8);
}

/* Bits of the key consumed once level @l (0 = the root) has been indexed. */
static __u32 level_end(const struct lpm_core *c, __u32 l)
{
	return c->root_bits + 8 * l;
}

static __u32 level_begin(const struct lpm_core *c, __u32 l)
{
	return l ? c->root_bits + 8 * (l - 1) : 0;
}

static size_t index_at(const struct lpm_core *c, const __u8 *key, __u32 l)
{
	if (l)
		return key[c->root_bits / 8 + l - 1];
	if (c->root_bits == 24)
		return (size_t)key[0] << 16 | (size_t)key[1] << 8 | key[2];
	return (size_t)key[0] << 8 | key[1];
}

static __u32 entry(const struct lpm_core *c, size_t pos)
{
	return c->img[c->work][pos];
}

static void log_run(struct lpm_core *c, size_t pos)
{
	struct lpm_run *r;

	if (c->log_full)
		return;
	if (c->nlog) {
		r = &c->log[c->nlog - 1];
		if (r->start + (size_t)r->count == pos) {
			r->count++;
			return;
		}
	}
	if (c->nlog == c->log_cap) {
		size_t cap = c->log_cap ? c->log_cap * 2 : 1024;

		r = cap <= LOG_MAX ? realloc(c->log, cap * sizeof(*r)) : NULL;
		if (!r) {
			/* Not an error: the catch-up copies the whole image instead. */
			c->log_full = true;
			return;
		}
		c->log = r;
		c->log_cap = cap;
	}
	c->log[c->nlog++] = (struct lpm_run){ .start = (__u32)pos, .count = 1 };
}

static void put_entry(struct lpm_core *c, size_t pos, __u32 val, __u8 depth)
{
	c->depth[pos] = depth;
	if (c->img[c->work][pos] == val)
		return;
	/* Release: a group's entries are stored before the entry that links it. */
	__atomic_store_n(&c->img[c->work][pos], val, __ATOMIC_RELEASE);
	if (c->sync == XP_LPM_DOUBLE) {
		c->dirty = true;
		log_run(c, pos);
	}
}

static void wait_token(struct lpm_core *c, xp_qsbr_token t)
{
	if (!c->qsbr || xp_qsbr_check(c->qsbr, t))
		return;
	c->st.grace_waits++;
	xp_qsbr_wait(c->qsbr, t);
}

/* Double: the standby catches up with the live image (the last flip's runs). */
static void replay(struct lpm_core *c)
{
	const __u32 *src = c->img[!c->work];
	__u32 *dst = c->img[c->work];

	if (c->log_full) {
		size_t n = grp_base(c, c->group_hwm);

		memcpy(dst, src, n * sizeof(*dst));
		c->st.replayed_entries += n;
		c->st.full_copies++;
	} else {
		for (size_t i = 0; i < c->nlog; i++) {
			memcpy(dst + c->log[i].start, src + c->log[i].start,
			       c->log[i].count * sizeof(*dst));
			c->st.replayed_entries += c->log[i].count;
		}
	}
	c->st.replays++;
	c->nlog = 0;
	c->log_full = false;
	c->replay_pending = false;
}

/* Before the first write of a batch: the standby must hold what the readers see. */
static void begin_write(struct lpm_core *c)
{
	if (c->replay_pending) {
		wait_token(c, c->replay_token);
		replay(c);
	}
}

/* In place: deferred groups whose grace period ended go back to the free stack. */
static void reclaim(struct lpm_core *c, bool wait)
{
	while (c->defer_len) {
		struct lpm_defer *d = &c->defer[c->defer_head];

		if (wait)
			wait_token(c, d->token);
		else if (!xp_qsbr_check(c->qsbr, d->token))
			break;
		c->free_group[c->nfree++] = d->group;
		c->defer_head = (c->defer_head + 1) % c->groups;
		c->defer_len--;
	}
}

static int group_alloc(struct lpm_core *c, __u32 *g)
{
	if (!c->nfree && c->defer_len)
		reclaim(c, false);
	if (!c->nfree && c->defer_len)
		reclaim(c, true);
	if (!c->nfree)
		return -ENOSPC;
	*g = c->free_group[--c->nfree];
	if (*g >= c->group_hwm)
		c->group_hwm = *g + 1;
	c->st.groups_used++;
	return 0;
}

static void group_free(struct lpm_core *c, __u32 g)
{
	c->st.groups_used--;
	/* Double: the standby's copy of the group is read by no one; in place, a reader
	 * that loaded the old link may still be inside it. */
	if (c->sync == XP_LPM_INPLACE && c->qsbr) {
		__u32 tail = (c->defer_head + c->defer_len) % c->groups;

		c->defer[tail] = (struct lpm_defer){ .group = g, .token = xp_qsbr_start(c->qsbr) };
		c->defer_len++;
		return;
	}
	c->free_group[c->nfree++] = g;
}

/* Level at which a prefix of @depth ends. */
static __u32 end_level(const struct lpm_core *c, __u32 depth)
{
	return depth <= c->root_bits ? 0 : 1 + (depth - c->root_bits - 1) / 8;
}

/* Groups an add of @key/@depth would have to create. */
static __u32 groups_needed(const struct lpm_core *c, const __u8 *key, __u32 depth)
{
	__u32 last = end_level(c, depth);
	size_t base = 0;

	for (__u32 l = 0; l < last; l++) {
		__u32 e = entry(c, base + index_at(c, key, l));

		if (!(e & XP_LPM_EXT))
			return last - l;
		base = grp_base(c, e & ~XP_LPM_EXT);
	}
	return 0;
}

/* Entry @pos and all below it take @val where a rule of @depth or shorter set them. */
static void cover(struct lpm_core *c, size_t pos, __u32 val, __u32 depth)
{
	__u32 e = entry(c, pos);

	if (e & XP_LPM_EXT) {
		size_t gb = grp_base(c, e & ~XP_LPM_EXT);

		for (__u32 j = 0; j < 256; j++)
			cover(c, gb + j, val, depth);
	} else if (c->depth[pos] <= depth) {
		put_entry(c, pos, val, depth);
	}
}

/* Entry @pos and all below it that the rule of @depth set take the parent rule's. */
static void uncover(struct lpm_core *c, size_t pos, __u32 pval, __u32 pdepth, __u32 depth)
{
	__u32 e = entry(c, pos);

	if (e & XP_LPM_EXT) {
		size_t gb = grp_base(c, e & ~XP_LPM_EXT);

		for (__u32 j = 0; j < 256; j++)
			uncover(c, gb + j, pval, pdepth, depth);
	} else if (c->depth[pos] == depth) {
		put_entry(c, pos, pval, pdepth);
	}
}

/* The span of entries at level @l that a prefix ending there covers. */
static void span_at(const struct lpm_core *c, const __u8 *key, __u32 depth, __u32 l, size_t *first,
		    size_t *n)
{
	*n = (size_t)1 << (level_end(c, l) - depth);
	*first = index_at(c, key, l) & ~(*n - 1);
}

int xp_trie_add(struct lpm_core *c, const __u8 *key, __u32 depth, __u32 hop)
{
	__u32 val = hop + 1, last = end_level(c, depth);
	size_t base = 0, first, n;
	int err;

	begin_write(c);
	if (groups_needed(c, key, depth) > c->nfree + c->defer_len)
		return -ENOSPC;
	err = xp_trie_rules_put(&c->rules, key, depth, hop);
	if (err)
		return err;
	for (__u32 l = 0; l < last; l++) {
		size_t pos = base + index_at(c, key, l);
		__u32 e = entry(c, pos), g;

		if (!(e & XP_LPM_EXT)) {
			/* Checked above: cannot fail. */
			if (group_alloc(c, &g))
				return -ENOSPC;
			for (__u32 j = 0; j < 256; j++)
				put_entry(c, grp_base(c, g) + j, e, c->depth[pos]);
			e = XP_LPM_EXT | g;
			put_entry(c, pos, e, c->depth[pos]);
		}
		base = grp_base(c, e & ~XP_LPM_EXT);
	}
	span_at(c, key, depth, last, &first, &n);
	for (size_t i = first; i < first + n; i++)
		cover(c, base + i, val, depth);
	c->st.adds++;
	return 0;
}

void xp_trie_key_mask(__u8 *dst, const __u8 *src, __u32 keylen, __u32 depth)
{
	for (__u32 i = 0; i < keylen; i++) {
		__u32 bits = depth > 8 * i ? depth - 8 * i : 0;

		dst[i] = bits >= 8 ? src[i] : src[i] & (__u8)(0xff00u >> bits);
	}
}

/* A group all of whose entries come from rules that end above it (at most @begin
 * bits): all equal, so its parent entry can hold the leaf itself. */
static bool collapsible(const struct lpm_core *c, size_t gb, __u32 begin)
{
	for (__u32 j = 0; j < 256; j++)
		if ((entry(c, gb + j) & XP_LPM_EXT) || c->depth[gb + j] > begin)
			return false;
	return true;
}

int xp_trie_del(struct lpm_core *c, const __u8 *key, __u32 depth)
{
	__u32 pval = 0, pdepth = 0, hop, last = end_level(c, depth), l;
	size_t path[17], base = 0, first, n;
	__u8 k[16];

	if (!xp_trie_rules_get(&c->rules, key, depth, &hop))
		return -ENOENT;
	for (__u32 d = depth; d-- > 0;) {
		if (!c->rules.per_depth[d])
			continue;
		xp_trie_key_mask(k, key, c->rules.keylen, d);
		if (xp_trie_rules_get(&c->rules, k, d, &hop)) {
			pval = hop + 1;
			pdepth = d;
			break;
		}
	}
	xp_trie_rules_del(&c->rules, key, depth);
	begin_write(c);
	for (l = 0; l < last; l++) {
		__u32 e;

		path[l] = base + index_at(c, key, l);
		e = entry(c, path[l]);
		if (!(e & XP_LPM_EXT))
			break; /* cannot happen: a rule that deep made groups */
		base = grp_base(c, e & ~XP_LPM_EXT);
	}
	if (l == last) {
		span_at(c, key, depth, last, &first, &n);
		for (size_t i = first; i < first + n; i++)
			uncover(c, base + i, pval, pdepth, depth);
	}
	/* Fold back up the path: the group at level l hangs off path[l - 1]. */
	for (; l >= 1; l--) {
		__u32 g = entry(c, path[l - 1]) & ~XP_LPM_EXT;
		size_t gb = grp_base(c, g);

		if (!collapsible(c, gb, level_begin(c, l)))
			break;
		put_entry(c, path[l - 1], entry(c, gb), c->depth[gb]);
		group_free(c, g);
	}
	c->st.dels++;
	return 0;
}

int xp_trie_get(const struct lpm_core *c, const __u8 *key, __u32 depth, __u32 *hop)
{
	return xp_trie_rules_get(&c->rules, key, depth, hop) ? 0 : -ENOENT;
}

static void free_subtree(struct lpm_core *c, __u32 g)
{
	size_t gb = grp_base(c, g);

	for (__u32 j = 0; j < 256; j++) {
		__u32 e = entry(c, gb + j);

		if (e & XP_LPM_EXT)
			free_subtree(c, e & ~XP_LPM_EXT);
	}
	group_free(c, g);
}

void xp_trie_clear(struct lpm_core *c)
{
	__u32 keylen = c->rules.keylen;

	begin_write(c);
	for (size_t i = 0; i < c->root_n; i++) {
		__u32 e = entry(c, i);

		put_entry(c, i, 0, 0);
		if (e & XP_LPM_EXT)
			free_subtree(c, e & ~XP_LPM_EXT);
	}
	xp_trie_rules_fini(&c->rules);
	/* Smallest store: cannot fail but for memory, and then an empty one will do. */
	if (xp_trie_rules_init(&c->rules, keylen, 0))
		c->rules.keylen = keylen;
}

int xp_trie_commit(struct lpm_core *c)
{
	c->st.commits++;
	if (c->sync == XP_LPM_INPLACE) {
		if (c->defer_len)
			reclaim(c, false);
		return 0;
	}
	if (!c->dirty) {
		/* Idle time: catch the standby up now if the readers have moved on, so the
		 * next change need not wait. */
		if (c->replay_pending && (!c->qsbr || xp_qsbr_check(c->qsbr, c->replay_token)))
			replay(c);
		return 0;
	}
	__atomic_store_n(c->active, c->img[c->work], __ATOMIC_RELEASE);
	c->work = !c->work;
	c->dirty = false;
	c->replay_pending = true;
	c->replay_token = c->qsbr ? xp_qsbr_start(c->qsbr) : 0;
	c->st.flips++;
	if (!c->qsbr)
		replay(c);
	return 0;
}

int xp_trie_sync(struct lpm_core *c)
{
	xp_trie_commit(c);
	if (c->replay_pending)
		begin_write(c);
	if (c->defer_len)
		reclaim(c, true);
	return 0;
}

void xp_trie_stats(const struct lpm_core *c, struct xp_lpm_stats *st)
{
	__u32 nimg = c->sync == XP_LPM_DOUBLE ? 2 : 1;

	*st = c->st;
	st->routes = c->rules.count;
	st->groups_max = c->groups;
	st->image_bytes = c->mem[0].size;
	st->bytes =
		nimg * c->mem[0].size + c->img_n + xp_trie_rules_bytes(&c->rules) +
		c->log_cap * sizeof(*c->log) +
		(size_t)c->groups * (sizeof(*c->free_group) + (c->defer ? sizeof(*c->defer) : 0));
	st->deferred = c->defer_len;
	st->page_size = c->mem[0].page_size;
	st->images = nimg;
}

int xp_trie_init(struct lpm_core *c, const struct lpm_core_opts *o)
{
	__u32 nimg = o->sync == XP_LPM_DOUBLE ? 2 : 1;
	int err;

	memset(c, 0, sizeof(*c));
	c->mem[0].fd = c->mem[1].fd = -1;
	c->width = o->width;
	c->root_bits = o->root_bits;
	c->root_n = 1u << o->root_bits;
	c->groups = o->groups;
	c->img_n = grp_base(c, o->groups);
	c->sync = o->sync;
	c->qsbr = o->qsbr;
	c->active = o->active;
	for (__u32 i = 0; i < nimg; i++) {
		XP_OPTS(xp_mem_opts, mo, .size = c->img_n * sizeof(__u32),
			.hugepages = o->hugepages, .bind_node = o->numa_node >= 0,
			.numa_node = o->numa_node);

		/* A fresh memfd reads as zeros: every entry "no route". */
		err = xp_mem_alloc(&mo, &c->mem[i]);
		if (err)
			goto fail;
		c->img[i] = c->mem[i].base;
	}
	c->depth = calloc(c->img_n, 1);
	c->free_group = malloc((size_t)c->groups * sizeof(*c->free_group));
	if (c->sync == XP_LPM_INPLACE && c->qsbr)
		c->defer = malloc((size_t)c->groups * sizeof(*c->defer));
	err = -ENOMEM;
	if (!c->depth || !c->free_group || (c->sync == XP_LPM_INPLACE && c->qsbr && !c->defer))
		goto fail;
	err = xp_trie_rules_init(&c->rules, o->width / 8, o->rules_hint);
	if (err)
		goto fail;
	/* Lowest groups first: a full copy stops at the high-water mark. */
	for (__u32 i = 0; i < c->groups; i++)
		c->free_group[i] = c->groups - 1 - i;
	c->nfree = c->groups;
	c->work = nimg - 1;
	*c->active = c->img[0];
	return 0;
fail:
	xp_trie_fini(c);
	return err;
}

void xp_trie_fini(struct lpm_core *c)
{
	xp_mem_free(&c->mem[0]);
	xp_mem_free(&c->mem[1]);
	free(c->depth);
	free(c->free_group);
	free(c->defer);
	free(c->log);
	xp_trie_rules_fini(&c->rules);
	memset(c, 0, sizeof(*c));
}
