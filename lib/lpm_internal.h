/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one multibit trie behind xp_lpm (IPv4, DIR-24-8) and xp_lpm6 (IPv6): a root of
 * 2^root_bits entries and groups of 256 below it, leaf-pushed, keys as big-endian bytes.
 * Writer side only; the readers' side is the inline code of xpile/lpm.h. Not installed.
 */
#ifndef XPILE_LPM_INTERNAL_H
#define XPILE_LPM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/lpm.h"
#include "xpile/mem.h"
#include "xpile/qsbr.h"

/* The rules as given (prefix, depth) -> hop: what a delete falls back to. */
struct lpm_rules {
	__u32 keylen; /* 4 or 16 */
	__u32 mask; /* slots - 1, slots a power of two */
	__u32 count;
	__u8 *keys; /* slots * keylen */
	__u8 *dep; /* depth + 1; 0 = empty slot */
	__u32 *val;
	__u32 per_depth[129]; /* rules of each depth, to skip empty ones */
};

int xp_trie_rules_init(struct lpm_rules *r, __u32 keylen, __u32 hint);
void xp_trie_rules_fini(struct lpm_rules *r);
/* The rule (key, depth)'s value into *val: true if there is one. */
bool xp_trie_rules_get(const struct lpm_rules *r, const __u8 *key, __u32 depth, __u32 *val);
/* Inserts or replaces: 0, or -ENOMEM (nothing changed). */
int xp_trie_rules_put(struct lpm_rules *r, const __u8 *key, __u32 depth, __u32 val);
/* Removes: true if it was there. */
bool xp_trie_rules_del(struct lpm_rules *r, const __u8 *key, __u32 depth);
size_t xp_trie_rules_bytes(const struct lpm_rules *r);
/* Calls @fn for every rule (any order) until it returns non-zero, which is returned. */
int xp_trie_rules_walk(const struct lpm_rules *r,
		       int (*fn)(const __u8 *key, __u32 depth, __u32 val, void *arg), void *arg);

/* A run of entries written since the last flip: replayed onto the other image. */
struct lpm_run {
	__u32 start, count;
};

/* A group unlinked from the live image, reusable once the token's grace period ends. */
struct lpm_defer {
	__u32 group;
	xp_qsbr_token token;
};

struct lpm_core {
	__u32 width; /* 32 or 128 */
	__u32 root_bits; /* 24, or 16 (IPv6) */
	__u32 root_n; /* 1 << root_bits: where the groups start */
	__u32 groups; /* groups each image has room for */
	size_t img_n; /* entries per image */
	enum xp_lpm_sync sync;
	struct xp_qsbr *qsbr;
	__u32 **active; /* the public struct's pointer readers load */

	struct xp_mem mem[2];
	__u32 *img[2];
	__u32 work; /* the image the writer changes: 0 in place, the standby when double */
	bool dirty; /* double: writes since the last flip */
	bool replay_pending; /* double: the standby lacks the last flip's log */
	xp_qsbr_token replay_token;

	__u8 *depth; /* per entry, the depth of the rule that set it (writer only) */
	struct lpm_rules rules;

	__u32 *free_group; /* stack */
	__u32 nfree;
	__u32 group_hwm; /* groups ever handed out: the part of an image a full copy takes */
	struct lpm_defer *defer; /* FIFO, in place only */
	__u32 defer_head, defer_len;

	struct lpm_run *log;
	size_t nlog, log_cap;
	bool log_full; /* too many runs: the replay copies everything up to group_hwm */

	struct xp_lpm_stats st;
};

struct lpm_core_opts {
	__u32 width, root_bits, groups, rules_hint;
	enum xp_lpm_sync sync;
	enum xp_hugepages hugepages;
	int numa_node; /* -1: any */
	struct xp_qsbr *qsbr;
	__u32 **active;
};

/* @dst = the first @depth bits of @src (@keylen bytes), the rest zero. */
void xp_trie_key_mask(__u8 *dst, const __u8 *src, __u32 keylen, __u32 depth);
int xp_trie_init(struct lpm_core *c, const struct lpm_core_opts *o);
void xp_trie_fini(struct lpm_core *c);
/* @key: width/8 big-endian bytes, bits past @depth zero. */
int xp_trie_add(struct lpm_core *c, const __u8 *key, __u32 depth, __u32 hop);
int xp_trie_del(struct lpm_core *c, const __u8 *key, __u32 depth);
int xp_trie_get(const struct lpm_core *c, const __u8 *key, __u32 depth, __u32 *hop);
int xp_trie_commit(struct lpm_core *c);
int xp_trie_sync(struct lpm_core *c);
void xp_trie_clear(struct lpm_core *c);
void xp_trie_stats(const struct lpm_core *c, struct xp_lpm_stats *st);

#endif
