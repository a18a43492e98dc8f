// SPDX-License-Identifier: BSD-3-Clause
/* UMEM layout: stride arithmetic, placement inside pages, handle/offset round trips. */
#include <errno.h>

#include "xpile/log.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "xt.h"

static __u32 gcd(__u32 a, __u32 b)
{
	return b ? gcd(b, a % b) : a;
}

static void test_stride_arithmetic(void)
{
	for (__u32 fs = 2048; fs <= 4096; fs += 64)
		for (__u32 ch = 1; ch <= 12; ch++)
			for (__u32 rk = 1; rk <= 4; rk++) {
				__u32 min = fs / 64, s = xp_layout_stride_lines(min, ch, rk);

				XT_CHECK(s >= min);
				XT_EQ(gcd(s, ch * rk), 1);
				XT_EQ(s & 1, 1);
				/* The smallest such stride: no padding is wasted. */
				for (__u32 t = min; t < s; t++)
					XT_CHECK(gcd(t, ch * rk * 2) != 1);
			}
	XT_EQ(xp_layout_stride_lines(32, 4, 1), 33);
	XT_EQ(xp_layout_stride_lines(32, 8, 2), 33);
	XT_EQ(xp_layout_stride_lines(32, 3, 1), 35);
	XT_EQ(xp_layout_stride_lines(64, 6, 1), 65);
}

static void test_default_layout(void)
{
	struct xp_layout_opts o = { .sz = sizeof(o), .nframes = 4096, .page_size = XP_PAGE_2M };
	struct xp_layout l;

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	XT_EQ(l.kind, XP_LAYOUT_INTERLEAVED);
	XT_EQ(l.stride, 2112);
	XT_EQ(l.chunk_size, 2048);
	XT_EQ(l.umem_flags, XDP_UMEM_UNALIGNED_CHUNK_FLAG);
	XT_EQ(l.topo.channels, 4);
	XT_EQ(l.topo.ranks, 1);
	XT_EQ(l.data_off, 256);
	/* 992 * 2112 + 2048 is exactly 2 MiB: 993 frames per hugepage. */
	XT_EQ(l.frames_per_page, 993);
	XT_EQ(l.area_size, 5ull * XP_PAGE_2M);

	o.kind = XP_LAYOUT_ALIGNED;
	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	XT_EQ(l.stride, 2048);
	XT_EQ(l.umem_flags, 0);
	XT_EQ(l.area_size, 4096ull * 2048);
}

/* Every frame inside the area and inside one page, none overlapping, index round trip. */
static void check_placement(const struct xp_layout *l)
{
	__u64 prev_end = 0;

	for (__u32 i = 0; i < l->nframes; i++) {
		__u64 h = xp_layout_frame(l, i);
		__u32 idx = ~0u;

		if (!XT_CHECK(h >= prev_end) || !XT_CHECK(h + l->frame_size <= l->area_size))
			return;
		if (!(l->frames_per_page == ~0u))
			XT_EQ(h / l->page_size, (h + l->frame_size - 1) / l->page_size);
		prev_end = h + l->frame_size;
		XT_EQ(xp_layout_frame_index(l, h, &idx), 0);
		XT_EQ(idx, i);
		XT_EQ(xp_layout_frame_index(l, h + l->frame_size - 1, &idx), 0);
		XT_EQ(idx, i);
		if (i + 1 < l->nframes && xp_layout_frame(l, i + 1) > h + l->frame_size)
			XT_EQ(xp_layout_frame_index(l, h + l->frame_size, &idx), -EINVAL);
	}
}

static void test_placement_many(void)
{
	static const __u32 pages[] = { XP_PAGE_4K, XP_PAGE_2M };
	static const __u32 hrooms[] = { 0, 64, 256 };

	for (__u32 fs = 2048; fs <= 4096; fs += 64 * 7)
		for (unsigned p = 0; p < 2; p++)
			for (__u32 ch = 1; ch <= 8; ch++)
				for (unsigned h = 0; h < 3; h++) {
					struct xp_layout_opts o = {
						.sz = sizeof(o),
						.frame_size = fs,
						.headroom = hrooms[h],
						.nframes = 3001,
						.page_size = pages[p],
						.topo = { .channels = ch },
					};
					struct xp_layout l;

					XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
					check_placement(&l);
				}
	for (__u32 fs = 2048; fs <= 4096; fs *= 2) {
		struct xp_layout_opts o = {
			.sz = sizeof(o), .frame_size = fs, .nframes = 777, .kind = XP_LAYOUT_ALIGNED
		};
		struct xp_layout l;

		XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
		check_placement(&l);
		o.flags = XP_LAYOUT_F_PACK;
		o.kind = XP_LAYOUT_INTERLEAVED;
		XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
		check_placement(&l);
		XT_EQ(xp_layout_frame(&l, 5), 5ull * l.stride);
	}
}

/* On 4 KiB pages a 2048-byte frame fits once per page; offsets rotate over 32 lines. */
static void test_4k_pages(void)
{
	struct xp_layout_opts o = { .sz = sizeof(o), .nframes = 1024, .page_size = XP_PAGE_4K };
	struct xp_layout l;
	__u32 offs[64] = { 0 };

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	XT_EQ(l.frames_per_page, 1);
	XT_EQ(l.rot_lines, 32); /* 33 possible, 32 keeps 4 channels even */
	XT_EQ(l.area_size, 1024ull * 4096); /* 256 frames per MiB, half of aligned */
	for (__u32 i = 0; i < 64; i++)
		offs[(xp_layout_frame(&l, i) % 4096) / 64]++;
	for (__u32 k = 0; k < 64; k++)
		XT_EQ(offs[k], k < 32 ? 2 : 0);
}

static void test_handle_strip(void)
{
	struct xp_layout_opts o = {
		.sz = sizeof(o), .nframes = 2000, .headroom = 128, .page_size = XP_PAGE_2M
	};
	struct xp_layout l, a;

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	o.kind = XP_LAYOUT_ALIGNED;
	XT_REQUIRE(xp_layout_compute(&o, &a) == 0);
	for (__u32 i = 0; i < l.nframes; i += 37) {
		__u64 h = xp_layout_frame(&l, i), ha = xp_layout_frame(&a, i);
		__u32 offs[] = { 0, l.data_off, l.data_off + 14, l.frame_size - 1 };

		for (unsigned k = 0; k < 4; k++) {
			/* RX ring in unaligned mode: offset in the upper 16 bits. */
			__u64 rx = h | ((__u64)offs[k] << XSK_UNALIGNED_BUF_OFFSET_SHIFT);
			__u64 tx = xp_layout_tx_addr(&l, h, offs[k]);
			__u32 idx;

			XT_EQ(xp_layout_handle(&l, rx), h);
			XT_EQ(xp_layout_data(&l, rx), h + offs[k]);
			XT_EQ(xp_layout_handle(&l, tx), h);
			XT_EQ(xp_layout_data(&l, tx), h + offs[k]);
			XT_EQ(xp_layout_frame_index(&l, rx, &idx), 0);
			XT_EQ(idx, i);
			/* Aligned mode: the address is the data address itself. */
			tx = xp_layout_tx_addr(&a, ha, offs[k]);
			XT_EQ(tx, ha + offs[k]);
			XT_EQ(xp_layout_handle(&a, tx), ha);
			XT_EQ(xp_layout_data(&a, tx), ha + offs[k]);
		}
	}
	{
		char base[16];

		XT_CHECK(xp_layout_ptr(&l, base, 3 | (5ull << 48)) == base + 8);
	}
}

static void test_bad_opts(void)
{
	struct xp_layout l;
	struct xp_layout_opts o = { .sz = sizeof(o), .nframes = 10 };

	o.frame_size = 1024;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	o.frame_size = 8192;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	o.frame_size = 3072;
	o.kind = XP_LAYOUT_ALIGNED;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	o.kind = XP_LAYOUT_INTERLEAVED;
	XT_EQ(xp_layout_compute(&o, &l), 0);
	o.headroom = 3072 - 256;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	o.headroom = 0;
	o.stride = 3000;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	o.stride = 3136;
	XT_EQ(xp_layout_compute(&o, &l), 0);
	XT_EQ(l.stride, 3136);
	o.nframes = 0;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	o.nframes = 1;
	o.page_size = 5000;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
	XT_EQ(xp_layout_compute(NULL, &l), -EINVAL);
	/* channels x ranks that overflowed the channel round to 0: was SIGFPE */
	o.page_size = 0;
	o.topo.channels = 65536;
	o.topo.ranks = 65536;
	XT_EQ(xp_layout_compute(&o, &l), -EINVAL);
}

/* The reason for all this: header lines of consecutive frames walk channels and sets. */
static void test_spread(void)
{
	struct xp_layout_opts o = { .sz = sizeof(o),
				    .nframes = 4096,
				    .page_size = XP_PAGE_2M,
				    .topo = { .l1_sets = 64, .l2_sets = 1024 } };
	struct xp_layout l, a;
	__u32 bins[1024];
	FILE *devnull = fopen("/dev/null", "w");

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	o.kind = XP_LAYOUT_ALIGNED;
	XT_REQUIRE(xp_layout_compute(&o, &a) == 0);
	XT_EQ(xp_layout_spread(&l, XP_SPREAD_L1, 256, bins), 0);
	for (int s = 0; s < 64; s++)
		XT_EQ(bins[s], 4);
	XT_EQ(xp_layout_spread(&a, XP_SPREAD_L1, 256, bins), 0);
	for (int s = 0; s < 64; s++)
		XT_EQ(bins[s], s == 4 || s == 36 ? 128 : 0); /* 2048 = half the L1 period: 2 sets */
	XT_EQ(xp_layout_spread(&l, XP_SPREAD_CH64, 256, bins), 0);
	for (int c = 0; c < 4; c++)
		XT_EQ(bins[c], 64);
	XT_EQ(xp_layout_spread(&a, XP_SPREAD_CH64, 256, bins), 0);
	XT_EQ(bins[0], 256);
	XT_REQUIRE(devnull);
	XT_EQ(xp_layout_report(&l, devnull), 0);
	XT_EQ(xp_layout_report(&a, devnull), 0);
	fclose(devnull);
}

int main(void)
{
	xp_set_log_fn(NULL);
	XT_RUN(test_stride_arithmetic);
	XT_RUN(test_default_layout);
	XT_RUN(test_placement_many);
	XT_RUN(test_4k_pages);
	XT_RUN(test_handle_strip);
	XT_RUN(test_bad_opts);
	XT_RUN(test_spread);
	return xt_done();
}
