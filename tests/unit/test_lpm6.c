// SPDX-License-Identifier: BSD-3-Clause
/*
 * IPv6 LPM (xpile/lpm.h): the trie with a 16- and a 24-bit root against a brute-force
 * reference over random nested rule sets, deep groups folded back level by level on
 * delete, /0 and /128, -ENOSPC without change, the bulk lookup, bad arguments.
 */
#include <errno.h>
#include <string.h>

#include "xpile/log.h"
#include "xpile/lpm.h"
#include "xt.h"

static __u64 rng = 0x2545f4914f6cdd1dull;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)(rng >> 11);
}

static struct xp_lpm6 *make(enum xp_lpm_sync sync, __u32 root, __u32 groups)
{
	XP_OPTS(xp_lpm_opts, o, .sync = sync, .groups = groups, .root_bits = root,
		.hugepages = XP_HUGE_NEVER);
	struct xp_lpm6 *t = NULL;

	if (xp_lpm6_create(&o, &t))
		return NULL;
	return t;
}

struct rule {
	__u8 a[16];
	__u8 depth;
	__u32 hop;
	bool live;
};

static void maskto(__u8 *a, __u32 d)
{
	for (__u32 i = 0; i < 16; i++) {
		__u32 bits = d > 8 * i ? d - 8 * i : 0;

		if (bits < 8)
			a[i] &= (__u8)(0xff00u >> bits);
	}
}

static bool covers(const struct rule *r, const __u8 *a)
{
	__u8 m[16];

	memcpy(m, a, 16);
	maskto(m, r->depth);
	return !memcmp(m, r->a, 16);
}

static __u32 ref_lookup(const struct rule *r, __u32 n, const __u8 *a)
{
	int best = -1;

	for (__u32 i = 0; i < n; i++)
		if (r[i].live && covers(&r[i], a) && (best < 0 || r[i].depth > r[best].depth))
			best = (int)i;
	return best < 0 ? XP_LPM_MISS : r[best].hop;
}

/* 2001:db8::/32 and a few bits more, so rules nest and share groups. */
static void rnd_addr(__u8 *a)
{
	static const __u8 base[4] = { 0x20, 0x01, 0x0d, 0xb8 };

	memcpy(a, base, 4);
	for (int i = 4; i < 16; i++)
		a[i] = (__u8)rnd();
	a[4] &= 0x03;
	if (rnd() % 2)
		memset(a + 6, 0, 6); /* many share their first 48 bits... */
	if (rnd() % 4 == 0)
		a[1] = 0x02; /* ...and some fall outside 2001:db8::/32 */
}

static __u8 rnd_depth(void)
{
	__u32 r = rnd() % 32;

	if (r == 0)
		return rnd() % 12; /* short, cover much (rare: a /8 writes 256 root entries) */
	if (r < 12)
		return 16 + rnd() % 33; /* /16../48 */
	if (r < 24)
		return 49 + rnd() % 16;
	return 65 + rnd() % 64;
}

static void probe(const struct rule *r, __u32 n, __u32 k, __u8 *a)
{
	const struct rule *x = &r[rnd() % n];

	if (k % 3 == 0) {
		rnd_addr(a);
		return;
	}
	memcpy(a, x->a, 16);
	for (__u32 b = x->depth; b < 128; b++)
		if (k % 3 == 2 || rnd() % 2)
			a[b / 8] |= (__u8)(0x80u >> (b % 8));
}

static int check_all(struct xp_lpm6 *t, const struct rule *r, __u32 n, __u32 probes)
{
	int bad = 0;

	for (__u32 k = 0; k < probes && n; k++) {
		__u8 a[16];
		__u32 want, got;

		probe(r, n, k, a);
		want = ref_lookup(r, n, a);
		got = xp_lpm6_lookup(t, a);
		if (got != want && bad++ < 5)
			fprintf(stderr, "  probe %u: got %u want %u\n", k, got, want);
	}
	return bad;
}

static void random_ops(enum xp_lpm_sync sync, __u32 root)
{
	enum { N = 500 };
	static struct rule r[N];
	struct xp_lpm6 *t = make(sync, root, 8192);
	struct xp_lpm_stats st;
	__u32 n = 0;

	XT_REQUIRE(t);
	for (int round = 0; round < 2000; round++) {
		if (rnd() % 10 < 6 && n < N) {
			struct rule x = { .depth = rnd_depth(),
					  .hop = rnd() % 100000,
					  .live = true };
			__u8 given[16];

			rnd_addr(x.a);
			memcpy(given, x.a, 16);
			maskto(x.a, x.depth);
			for (__u32 i = 0; i < n; i++)
				if (r[i].live && r[i].depth == x.depth && !memcmp(r[i].a, x.a, 16))
					r[i].live = false;
			r[n++] = x;
			XT_EQ(xp_lpm6_add(t, given, x.depth, x.hop), 0);
		} else if (n) {
			struct rule *x = &r[rnd() % n];

			if (x->live) {
				XT_EQ(xp_lpm6_del(t, x->a, x->depth), 0);
				x->live = false;
			}
		}
		if (round % 50 == 49) {
			XT_EQ(xp_lpm6_commit(t), 0);
			if (XT_EQ(check_all(t, r, n, 300), 0) == 0)
				break;
		}
	}
	XT_EQ(xp_lpm6_commit(t), 0);
	XT_EQ(check_all(t, r, n, 10000), 0);
	for (__u32 i = 0; i < n; i++)
		if (r[i].live) {
			XT_EQ(xp_lpm6_del(t, r[i].a, r[i].depth), 0);
			r[i].live = false;
		}
	XT_EQ(xp_lpm6_sync(t), 0);
	xp_lpm6_stats(t, &st);
	XT_EQ(st.routes, 0);
	XT_EQ(st.groups_used, 0);
	XT_EQ(check_all(t, r, n, 1000), 0);
	xp_lpm6_destroy(t);
}

static void random_root16(void)
{
	random_ops(XP_LPM_INPLACE, 16);
}

static void random_root24(void)
{
	random_ops(XP_LPM_INPLACE, 24);
}

static void random_double(void)
{
	random_ops(XP_LPM_DOUBLE, 16);
}

static const __u8 P48[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1 };

/* A /128 under a /48 takes 14 levels of groups below a 16-bit root; deleting it folds
 * them all back, and the /48 answers again everywhere. */
static void deep_delete_folds(void)
{
	struct xp_lpm6 *t = make(XP_LPM_INPLACE, 16, 64);
	struct xp_lpm_stats st;
	__u8 host[16], other[16];

	XT_REQUIRE(t);
	memcpy(host, P48, 16);
	host[15] = 1;
	memcpy(other, host, 16);
	other[15] = 2;
	XT_EQ(xp_lpm6_add(t, P48, 48, 1), 0);
	XT_EQ(xp_lpm6_add(t, host, 128, 2), 0);
	xp_lpm6_stats(t, &st);
	XT_EQ(st.groups_used, 14);
	XT_EQ(xp_lpm6_lookup(t, host), 2);
	XT_EQ(xp_lpm6_lookup(t, other), 1);
	XT_EQ(xp_lpm6_add(t, host, 64, 3), 0);
	XT_EQ(xp_lpm6_lookup(t, other), 3);
	XT_EQ(xp_lpm6_del(t, host, 128), 0);
	XT_EQ(xp_lpm6_lookup(t, host), 3);
	xp_lpm6_stats(t, &st);
	XT_EQ(st.groups_used, 6); /* the /64 keeps the levels down to byte 7 */
	XT_EQ(xp_lpm6_del(t, host, 64), 0);
	XT_EQ(xp_lpm6_lookup(t, host), 1);
	xp_lpm6_stats(t, &st);
	XT_EQ(st.groups_used, 4); /* the /48's own: bytes 2..5 */
	XT_EQ(xp_lpm6_add(t, host, 0, 9), 0);
	XT_EQ(xp_lpm6_lookup(t, (const __u8[16]){ 0xfe, 0x80 }), 9);
	XT_EQ(xp_lpm6_del(t, P48, 48), 0);
	XT_EQ(xp_lpm6_lookup(t, host), 9);
	xp_lpm6_stats(t, &st);
	XT_EQ(st.groups_used, 0);
	xp_lpm6_clear(t);
	XT_EQ(xp_lpm6_lookup(t, host), XP_LPM_MISS);
	xp_lpm6_destroy(t);
}

static void out_of_groups(void)
{
	struct xp_lpm6 *t = make(XP_LPM_INPLACE, 16, 4);
	struct xp_lpm_stats st;
	__u8 host[16];

	XT_REQUIRE(t);
	memcpy(host, P48, 16);
	host[15] = 1;
	XT_EQ(xp_lpm6_add(t, P48, 48, 1), 0); /* 4 groups: bytes 2..5 */
	XT_EQ(xp_lpm6_add(t, host, 128, 2), -ENOSPC);
	XT_EQ(xp_lpm6_lookup(t, host), 1);
	xp_lpm6_stats(t, &st);
	XT_EQ(st.routes, 1);
	XT_EQ(st.groups_used, 4);
	xp_lpm6_destroy(t);
}

static void bulk_matches_single(void)
{
	struct xp_lpm6 *t = make(XP_LPM_INPLACE, 16, 4096);
	__u8 addr[40][16];
	__u32 hop[40];

	XT_REQUIRE(t);
	for (int i = 0; i < 300; i++) {
		__u8 a[16];

		rnd_addr(a);
		XT_EQ(xp_lpm6_add(t, a, 16 + rnd() % 100, rnd() % 70), 0);
	}
	for (int r = 0; r < 50; r++) {
		for (int i = 0; i < 40; i++)
			rnd_addr(addr[i]);
		xp_lpm6_lookup_bulk(t, (const __u8(*)[16])addr, hop, (unsigned int)(r % 41));
		for (int i = 0; i < r % 41; i++)
			XT_EQ(hop[i], xp_lpm6_lookup(t, addr[i]));
	}
	xp_lpm6_destroy(t);
}

static void bad_arguments(void)
{
	struct xp_lpm6 *t = make(XP_LPM_INPLACE, 0, 4), *u = NULL;
	__u32 h;

	XT_REQUIRE(t);
	XT_EQ(xp_lpm6_add(t, P48, 129, 1), -EINVAL);
	XT_EQ(xp_lpm6_add(t, NULL, 8, 1), -EINVAL);
	XT_EQ(xp_lpm6_add(t, P48, 8, XP_LPM_HOP_MAX + 1), -EINVAL);
	XT_EQ(xp_lpm6_del(t, P48, 48), -ENOENT);
	XT_EQ(xp_lpm6_get(t, P48, 48, &h), -ENOENT);
	xp_set_log_fn(NULL);
	{
		XP_OPTS(xp_lpm_opts, o, .root_bits = 20);
		XT_EQ(xp_lpm6_create(&o, &u), -EINVAL);
	}
	XT_CHECK(u == NULL);
	xp_lpm6_destroy(t);
}

int main(void)
{
	XT_RUN(deep_delete_folds);
	XT_RUN(out_of_groups);
	XT_RUN(random_root16);
	XT_RUN(random_root24);
	XT_RUN(random_double);
	XT_RUN(bulk_matches_single);
	XT_RUN(bad_arguments);
	return xt_done();
}
