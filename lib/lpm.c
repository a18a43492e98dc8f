// SPDX-License-Identifier: BSD-3-Clause
/* xp_lpm (IPv4) and xp_lpm6 (IPv6) over the one trie of lib/lpm_core.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "lpm_internal.h"
#include "opts_internal.h"

/* Groups beyond this would need more than 4 GiB per image. */
#define GROUPS_MAX (1u << 22)
#define GROUPS_DEFAULT 1024u

static int core_create(const char *what, const struct xp_lpm_opts *opts, __u32 width,
		       __u32 **active, struct lpm_core **out)
{
	struct xp_lpm_opts o;
	struct lpm_core *c;
	__u32 root;
	int err;

	if (!XP_OPTS_LOAD_LOG(what, &o, opts, xp_lpm_opts))
		return -EINVAL;
	root = o.root_bits ? o.root_bits : (width == 32 ? 24 : 16);
	if ((width == 32 && root != 24) || (width == 128 && root != 16 && root != 24)) {
		xp_err("%s: root_bits %u: %s\n", what, o.root_bits,
		       width == 32 ? "IPv4 tables have a 24-bit root (0 or 24)" :
				     "IPv6 roots are 16 or 24 bits (0 = 16)");
		return -EINVAL;
	}
	if (o.groups > GROUPS_MAX || o.sync > XP_LPM_DOUBLE || o.hugepages > XP_HUGE_NEVER) {
		xp_err("%s: groups %u (at most %u), sync %d or hugepages %d out of range\n", what,
		       o.groups, GROUPS_MAX, o.sync, o.hugepages);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = xp_trie_init(c, &(struct lpm_core_opts){
				      .width = width,
				      .root_bits = root,
				      .groups = o.groups ? o.groups : GROUPS_DEFAULT,
				      .rules_hint = o.routes_hint ? o.routes_hint : 1024,
				      .sync = o.sync,
				      .hugepages = o.hugepages,
				      .numa_node = o.bind_node ? o.numa_node : -1,
				      .qsbr = o.qsbr,
				      .active = active,
			      });
	if (err) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

static void key4(__u8 k[4], __u32 addr, __u32 depth)
{
	__u32 m = depth ? addr & ~0u << (32 - depth) : 0;

	k[0] = m >> 24;
	k[1] = m >> 16;
	k[2] = m >> 8;
	k[3] = m;
}

int xp_lpm_create(const struct xp_lpm_opts *opts, struct xp_lpm **out)
{
	struct xp_lpm *t;
	int err;

	if (!out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = core_create("lpm", opts, 32, &t->active, (struct lpm_core **)&t->priv);
	if (err) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

void xp_lpm_destroy(struct xp_lpm *t)
{
	if (!t)
		return;
	xp_trie_fini(t->priv);
	free(t->priv);
	free(t);
}

int xp_lpm_add(struct xp_lpm *t, __u32 addr, __u8 depth, __u32 hop)
{
	__u8 k[4];

	if (!t || depth > 32 || hop > XP_LPM_HOP_MAX)
		return -EINVAL;
	key4(k, addr, depth);
	return xp_trie_add(t->priv, k, depth, hop);
}

int xp_lpm_del(struct xp_lpm *t, __u32 addr, __u8 depth)
{
	__u8 k[4];

	if (!t || depth > 32)
		return -EINVAL;
	key4(k, addr, depth);
	return xp_trie_del(t->priv, k, depth);
}

int xp_lpm_get(const struct xp_lpm *t, __u32 addr, __u8 depth, __u32 *hop)
{
	__u8 k[4];

	if (!t || !hop || depth > 32)
		return -EINVAL;
	key4(k, addr, depth);
	return xp_trie_get(t->priv, k, depth, hop);
}

void xp_lpm_clear(struct xp_lpm *t)
{
	if (t)
		xp_trie_clear(t->priv);
}

int xp_lpm_commit(struct xp_lpm *t)
{
	return t ? xp_trie_commit(t->priv) : -EINVAL;
}

int xp_lpm_sync(struct xp_lpm *t)
{
	return t ? xp_trie_sync(t->priv) : -EINVAL;
}

void xp_lpm_stats(const struct xp_lpm *t, struct xp_lpm_stats *st)
{
	if (t && st)
		xp_trie_stats(t->priv, st);
}

int xp_lpm6_create(const struct xp_lpm_opts *opts, struct xp_lpm6 **out)
{
	struct lpm_core *c;
	struct xp_lpm6 *t;
	int err;

	if (!out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = core_create("lpm6", opts, 128, &t->active, &c);
	if (err) {
		free(t);
		return err;
	}
	t->priv = c;
	t->groups_at = c->root_n;
	t->root_shift = 32 - c->root_bits;
	t->root_bytes = c->root_bits / 8;
	*out = t;
	return 0;
}

void xp_lpm6_destroy(struct xp_lpm6 *t)
{
	if (!t)
		return;
	xp_trie_fini(t->priv);
	free(t->priv);
	free(t);
}

int xp_lpm6_add(struct xp_lpm6 *t, const __u8 addr[16], __u8 depth, __u32 hop)
{
	__u8 k[16];

	if (!t || !addr || depth > 128 || hop > XP_LPM_HOP_MAX)
		return -EINVAL;
	xp_trie_key_mask(k, addr, 16, depth);
	return xp_trie_add(t->priv, k, depth, hop);
}

int xp_lpm6_del(struct xp_lpm6 *t, const __u8 addr[16], __u8 depth)
{
	__u8 k[16];

	if (!t || !addr || depth > 128)
		return -EINVAL;
	xp_trie_key_mask(k, addr, 16, depth);
	return xp_trie_del(t->priv, k, depth);
}

int xp_lpm6_get(const struct xp_lpm6 *t, const __u8 addr[16], __u8 depth, __u32 *hop)
{
	__u8 k[16];

	if (!t || !addr || !hop || depth > 128)
		return -EINVAL;
	xp_trie_key_mask(k, addr, 16, depth);
	return xp_trie_get(t->priv, k, depth, hop);
}

void xp_lpm6_clear(struct xp_lpm6 *t)
{
	if (t)
		xp_trie_clear(t->priv);
}

int xp_lpm6_commit(struct xp_lpm6 *t)
{
	return t ? xp_trie_commit(t->priv) : -EINVAL;
}

int xp_lpm6_sync(struct xp_lpm6 *t)
{
	return t ? xp_trie_sync(t->priv) : -EINVAL;
}

void xp_lpm6_stats(const struct xp_lpm6 *t, struct xp_lpm_stats *st)
{
	if (t && st)
		xp_trie_stats(t->priv, st);
}
