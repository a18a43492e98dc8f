// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ring backend on its own (lib/pool_internal.h): exact capacity for sizes that
 * are not powers of two, FIFO order across the wrap of the slot array, and refusals
 * that move nothing.
 */
#include <errno.h>

#include "pool_internal.h"
#include "xt.h"

static void exact_capacity(void)
{
	const __u32 caps[] = { 1, 2, 3, 31, 32, 33, 100, 1000 };

	for (int c = 0; c < 8; c++) {
		struct xp_mpmc *r = NULL;
		__u64 buf[1001];

		XT_EQ(xp_mpmc_create(caps[c], &r), 0);
		XT_REQUIRE(r);
		for (__u32 i = 0; i <= caps[c]; i++)
			buf[i] = i;
		XT_EQ(xp_mpmc_enqueue(r, buf, caps[c] + 1), -ENOSPC);
		XT_EQ(xp_mpmc_count(r), 0);
		XT_EQ(xp_mpmc_enqueue(r, buf, caps[c]), 0);
		XT_EQ(xp_mpmc_count(r), caps[c]);
		XT_EQ(xp_mpmc_enqueue(r, buf, 1), -ENOSPC);
		XT_EQ(xp_mpmc_dequeue(r, buf, caps[c] + 1), -ENOBUFS);
		XT_EQ(xp_mpmc_count(r), caps[c]);
		XT_EQ(xp_mpmc_enqueue(r, buf, 0), 0);
		XT_EQ(xp_mpmc_dequeue(r, buf, 0), 0);
		xp_mpmc_destroy(r);
	}
	XT_EQ(xp_mpmc_create(0, &(struct xp_mpmc *){ NULL }), -EINVAL);
}

/* Odd-sized batches walk the head around the slot array many times. */
static void fifo_across_wrap(void)
{
	struct xp_mpmc *r = NULL;
	__u64 in = 0, out = 0, buf[64];
	unsigned int seed = 3;

	XT_EQ(xp_mpmc_create(100, &r), 0);
	XT_REQUIRE(r);
	for (int i = 0; i < 100000; i++) {
		__u32 k = (__u32)rand_r(&seed) % 64, cnt = xp_mpmc_count(r);

		if (rand_r(&seed) % 2) {
			for (__u32 j = 0; j < k; j++)
				buf[j] = in + j;
			if (xp_mpmc_enqueue(r, buf, k) == 0)
				in += k;
			else
				XT_CHECK(cnt + k > 100);
		} else if (xp_mpmc_dequeue(r, buf, k) == 0) {
			for (__u32 j = 0; j < k; j++)
				if (!XT_EQ(buf[j], out + j))
					return;
			out += k;
		} else {
			XT_CHECK(k > cnt);
		}
		XT_EQ(xp_mpmc_count(r), in - out);
		if (in - out)
			XT_EQ(xp_mpmc_peek(r, 0), out);
	}
	xp_mpmc_destroy(r);
}

int main(void)
{
	XT_RUN(exact_capacity);
	XT_RUN(fifo_across_wrap);
	return xt_done();
}
