// SPDX-License-Identifier: BSD-3-Clause
/*
 * The LPM's rule store: (prefix, depth) -> hop, open addressing with linear probing and
 * backward-shift deletion (no tombstones), in three flat arrays so an IPv4 rule costs 9
 * bytes a slot. Writer side only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lpm_internal.h"
#include "rand_internal.h"

static __u32 slot_of(const struct lpm_rules *r, const __u8 *key, __u32 depth)
{
	__u64 a = 0, b = 0;

	memcpy(&a, key, r->keylen < 8 ? r->keylen : 8);
	if (r->keylen > 8)
		memcpy(&b, key + 8, r->keylen - 8);
	return (__u32)xp_mix64(a ^ xp_mix64(b ^ depth)) & r->mask;
}

static bool slot_is(const struct lpm_rules *r, __u32 s, const __u8 *key, __u32 depth)
{
	return r->dep[s] == depth + 1 && !memcmp(r->keys + (size_t)s * r->keylen, key, r->keylen);
}

static int alloc_slots(struct lpm_rules *r, __u32 slots)
{
	r->keys = malloc((size_t)slots * r->keylen);
	r->dep = calloc(slots, 1);
	r->val = malloc((size_t)slots * sizeof(*r->val));
	if (!r->keys || !r->dep || !r->val) {
		free(r->keys);
		free(r->dep);
		free(r->val);
		return -ENOMEM;
	}
	r->mask = slots - 1;
	return 0;
}

int xp_trie_rules_init(struct lpm_rules *r, __u32 keylen, __u32 hint)
{
	__u32 slots = 16;

	memset(r, 0, sizeof(*r));
	r->keylen = keylen;
	/* At most half full after the hint's rules. */
	while (slots < 2ull * hint && slots < (1u << 31))
		slots <<= 1;
	return alloc_slots(r, slots);
}

void xp_trie_rules_fini(struct lpm_rules *r)
{
	free(r->keys);
	free(r->dep);
	free(r->val);
	memset(r, 0, sizeof(*r));
}

static __u32 find(const struct lpm_rules *r, const __u8 *key, __u32 depth, bool *found)
{
	__u32 s = slot_of(r, key, depth);

	while (r->dep[s]) {
		if (slot_is(r, s, key, depth)) {
			*found = true;
			return s;
		}
		s = (s + 1) & r->mask;
	}
	*found = false;
	return s;
}

bool xp_trie_rules_get(const struct lpm_rules *r, const __u8 *key, __u32 depth, __u32 *val)
{
	bool found;
	__u32 s;

	if (!r->per_depth[depth])
		return false;
	s = find(r, key, depth, &found);
	if (found)
		*val = r->val[s];
	return found;
}

static void place(struct lpm_rules *r, __u32 s, const __u8 *key, __u32 depth, __u32 val)
{
	memcpy(r->keys + (size_t)s * r->keylen, key, r->keylen);
	r->dep[s] = depth + 1;
	r->val[s] = val;
}

static int grow(struct lpm_rules *r)
{
	struct lpm_rules old = *r;
	int err;

	if (old.mask >= (1u << 30))
		return -ENOMEM;
	err = alloc_slots(r, (old.mask + 1) * 2);
	if (err) {
		*r = old;
		return err;
	}
	for (__u32 s = 0; s <= old.mask; s++) {
		const __u8 *key = old.keys + (size_t)s * old.keylen;
		bool found;

		if (old.dep[s])
			place(r, find(r, key, old.dep[s] - 1u, &found), key, old.dep[s] - 1u,
			      old.val[s]);
	}
	free(old.keys);
	free(old.dep);
	free(old.val);
	return 0;
}

int xp_trie_rules_put(struct lpm_rules *r, const __u8 *key, __u32 depth, __u32 val)
{
	bool found;
	__u32 s = find(r, key, depth, &found);

	if (found) {
		r->val[s] = val;
		return 0;
	}
	/* Grow at 3/4 full: probes stay short. */
	if ((r->count + 1) * 4ull > (r->mask + 1ull) * 3) {
		int err = grow(r);

		if (err)
			return err;
		s = find(r, key, depth, &found);
	}
	place(r, s, key, depth, val);
	r->count++;
	r->per_depth[depth]++;
	return 0;
}

bool xp_trie_rules_del(struct lpm_rules *r, const __u8 *key, __u32 depth)
{
	bool found;
	__u32 s = find(r, key, depth, &found), j;

	if (!found)
		return false;
	r->count--;
	r->per_depth[depth]--;
	/* Backward shift: pull up every later entry of the cluster whose home slot does not
	 * lie (cyclically) in (hole, j], so lookups never meet a gap before their key. */
	for (j = (s + 1) & r->mask; r->dep[j]; j = (j + 1) & r->mask) {
		__u32 home = slot_of(r, r->keys + (size_t)j * r->keylen, r->dep[j] - 1u);

		if (((j - home) & r->mask) >= ((j - s) & r->mask)) {
			place(r, s, r->keys + (size_t)j * r->keylen, r->dep[j] - 1u, r->val[j]);
			s = j;
		}
	}
	r->dep[s] = 0;
	return true;
}

size_t xp_trie_rules_bytes(const struct lpm_rules *r)
{
	return (r->mask + 1ull) * (r->keylen + 1 + sizeof(*r->val));
}

int xp_trie_rules_walk(const struct lpm_rules *r,
		       int (*fn)(const __u8 *key, __u32 depth, __u32 val, void *arg), void *arg)
{
	for (__u32 s = 0; s <= r->mask; s++)
		if (r->dep[s]) {
			int rc =
				fn(r->keys + (size_t)s * r->keylen, r->dep[s] - 1u, r->val[s], arg);

			if (rc)
				return rc;
		}
	return 0;
}
