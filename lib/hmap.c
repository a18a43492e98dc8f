// SPDX-License-Identifier: BSD-3-Clause
/* The intrusive hash map of lib/hmap_internal.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hmap_internal.h"
#include "rand_internal.h"

int xp_hmap_init(struct xp_hmap *m, size_t hint)
{
	__u64 n = 16;

	while (n < hint)
		n <<= 1;
	m->b = calloc(n, sizeof(struct xp_hnode *));
	m->mask = n - 1;
	m->count = 0;
	return m->b ? 0 : -ENOMEM;
}

void xp_hmap_fini(struct xp_hmap *m)
{
	free(m->b);
	memset(m, 0, sizeof(*m));
}

static void grow(struct xp_hmap *m)
{
	__u64 n = (m->mask + 1) * 2;
	struct xp_hnode **b = calloc(n, sizeof(struct xp_hnode *));

	if (!b)
		return;
	for (__u64 i = 0; i <= m->mask; i++)
		for (struct xp_hnode *x = m->b[i], *next; x; x = next) {
			next = x->next;
			x->next = b[x->hash & (n - 1)];
			b[x->hash & (n - 1)] = x;
		}
	free(m->b);
	m->b = b;
	m->mask = n - 1;
}

void xp_hmap_insert(struct xp_hmap *m, struct xp_hnode *n, __u64 hash)
{
	if (m->count > m->mask)
		grow(m);
	n->hash = hash;
	n->next = m->b[hash & m->mask];
	m->b[hash & m->mask] = n;
	m->count++;
}

void xp_hmap_remove(struct xp_hmap *m, struct xp_hnode *n)
{
	struct xp_hnode **p = &m->b[n->hash & m->mask];

	while (*p && *p != n)
		p = &(*p)->next;
	if (*p) {
		*p = n->next;
		m->count--;
	}
}

__u64 xp_hash_bytes(const void *p, size_t len, __u64 seed)
{
	const __u8 *b = p;
	__u64 h = xp_mix64(seed ^ len);

	for (; len >= 8; len -= 8, b += 8) {
		__u64 w;

		memcpy(&w, b, 8);
		h = xp_mix64(h ^ w);
	}
	if (len) {
		__u64 w = 0;

		memcpy(&w, b, len);
		h = xp_mix64(h ^ w);
	}
	return h;
}
