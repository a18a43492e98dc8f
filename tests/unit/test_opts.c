// SPDX-License-Identifier: BSD-3-Clause
/*
 * The options-struct rule (xpile/opts.h) on every create and open call:
 *
 * - an older caller's short struct is read only up to its .sz: the struct is put
 *   against a PROT_NONE page, so a read past .sz faults, and what it leaves out takes
 *   the defaults;
 * - a newer caller's non-zero byte past what this build knows (or a set reserved_
 *   field) is refused with -EINVAL, an all-zero tail is accepted;
 * - a .sz too small to hold .sz itself is refused.
 *
 * xp_xsk_create binds a real AF_XDP socket to lo in a network namespace of its own
 * (copy mode; nothing attached anywhere), so it needs root; without, that case skips.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xpile/deal.h"
#include "xpile/ledger.h"
#include "xpile/log.h"
#include "xpile/pool.h"
#include "xpile/region.h"
#include "xpile/steer.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "xpile/xsk.h"
#include "xt.h"

static char *guard_map;
static size_t page;

static int quiet(enum xp_log_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* The @sz bytes of @src, copied so that they end where a PROT_NONE page starts. */
static void *at_guard(const void *src, size_t sz)
{
	char *p = guard_map + page - sz;

	memcpy(p, src, sz);
	return p;
}

/* A caller newer than this build: @sz bytes, the first @known from @src, then zeros,
 * with byte @poke (if below @sz) set. */
static void *newer(const void *src, size_t known, size_t sz, size_t poke)
{
	static __attribute__((aligned(16))) char buf[512];

	memset(buf, 0, sizeof(buf));
	memcpy(buf, src, known);
	*(size_t *)buf = sz;
	if (poke < sz)
		buf[poke] = 1;
	return buf;
}

#define OFFEND(T, f) XP_OFFSETOFEND(struct T, f)

static __u64 handles[256];

static void pool_opts(void)
{
	struct xp_pool_opts o = { .sz = OFFEND(xp_pool_opts, flags), .backend = XP_POOL_RING };
	struct xp_pool *p = NULL;

	/* Short: knows backend and flags; umem_size, stripes... must read as zero. */
	XT_EQ(xp_pool_create(handles, 256, at_guard(&o, o.sz), &p), 0);
	XT_REQUIRE(p);
	XT_EQ(xp_pool_backend(p), XP_POOL_RING);
	XT_CHECK(!xp_pool_debug(p));
	xp_pool_destroy(p);
	o.sz = sizeof(o);
	XT_EQ(xp_pool_create(handles, 256, newer(&o, sizeof(o), sizeof(o) + 8, ~0ul), &p), 0);
	xp_pool_destroy(p);
	XT_EQ(xp_pool_create(handles, 256, newer(&o, sizeof(o), sizeof(o) + 8, sizeof(o) + 7), &p),
	      -EINVAL);
	XT_EQ(xp_pool_create(
		      handles, 256,
		      newer(&o, sizeof(o), sizeof(o), offsetof(struct xp_pool_opts, reserved_)),
		      &p),
	      -EINVAL);
	XT_EQ(xp_pool_create(handles, 256, newer(&o, sizeof(o), 4, ~0ul), &p), -EINVAL);
	XT_CHECK(!p);
}

static void deal_opts(void)
{
	struct xp_layout_opts lo = { .sz = OFFEND(xp_layout_opts, kind), .nframes = 256 };
	struct xp_deal_opts o = { .sz = sizeof(size_t) };
	struct xp_layout l;
	struct xp_pool *p;
	struct xp_cache *c;
	struct xp_deal *d = NULL;
	__u64 h[256];

	/* The layout's short struct: knows up to kind, not topo, page_size, stride, flags. */
	XT_EQ(xp_layout_compute(at_guard(&lo, lo.sz), &l), 0);
	XT_EQ(l.page_size, XP_PAGE_4K);
	XT_EQ(l.topo.channels, XP_TOPO_DEFAULT_CHANNELS);
	lo.sz = sizeof(lo);
	XT_EQ(xp_layout_compute(newer(&lo, sizeof(lo), sizeof(lo) + 8, sizeof(lo)), &l), -EINVAL);
	XT_EQ(xp_layout_compute(newer(&lo, sizeof(lo), sizeof(lo) + 8, ~0ul), &l), 0);
	for (__u32 i = 0; i < l.nframes; i++)
		h[i] = xp_layout_frame(&l, i);
	XT_REQUIRE(xp_pool_create(h, l.nframes, NULL, &p) == 0);
	XT_REQUIRE(xp_cache_create(p, 64, &c) == 0);
	XT_EQ(xp_deal_create(&l, c, at_guard(&o, o.sz), &d), 0);
	XT_CHECK(d);
	xp_deal_destroy(d);
	o.sz = sizeof(o);
	XT_EQ(xp_deal_create(&l, c, newer(&o, sizeof(o), sizeof(o) + 16, sizeof(o) + 9), &d),
	      -EINVAL);
	XT_EQ(xp_deal_create(&l, c, newer(&o, sizeof(o), 7, ~0ul), &d), -EINVAL);
	xp_cache_destroy(c);
	xp_pool_destroy(p);
}

static void ledger_opts(void)
{
	struct xp_ledger_opts o = { .sz = OFFEND(xp_ledger_opts, max_accts),
				    .handles = handles,
				    .nframes = 256 };
	struct xp_ledger *l = NULL;
	struct xp_ledger_acct *a;

	XT_EQ(xp_ledger_create(at_guard(&o, o.sz), &l), 0);
	XT_REQUIRE(l);
	XT_EQ(xp_ledger_acct_new(l, &a), 0);
	XT_CHECK(!a->debug);
	xp_ledger_destroy(l);
	o.sz = sizeof(o);
	XT_EQ(xp_ledger_create(newer(&o, sizeof(o), sizeof(o) + 8, sizeof(o)), &l), -EINVAL);
}

static void mem_region_opts(void)
{
	struct xp_mem_opts mo = { .sz = OFFEND(xp_mem_opts, size), .size = 4096 };
	struct xp_region_opts ro = { .sz = OFFEND(xp_region_opts, chunk),
				     .size = 1 << 20,
				     .chunk = 4096 };
	struct xp_region *r = NULL;
	struct xp_mem m = { 0 };

	XT_EQ(xp_mem_alloc(at_guard(&mo, mo.sz), &m), 0);
	XT_CHECK(m.base && !m.locked && m.numa_node == -1);
	xp_mem_free(&m);
	mo.sz = sizeof(mo);
	XT_EQ(xp_mem_alloc(newer(&mo, sizeof(mo), sizeof(mo),
				 offsetof(struct xp_mem_opts, reserved_) + 2),
			   &m),
	      -EINVAL);
	/* Knows size and chunk, not spaces or algo: one lazy space. */
	XT_EQ(xp_region_create(at_guard(&ro, ro.sz), &r), 0);
	XT_REQUIRE(r);
	XT_EQ(xp_region_spaces(r), 1);
	xp_region_destroy(r);
	ro.sz = sizeof(ro);
	XT_EQ(xp_region_create(newer(&ro, sizeof(ro), sizeof(ro) + 8, sizeof(ro) + 3), &r),
	      -EINVAL);
}

/* Refused before it touches the interface or a BPF object. */
static void steer_opts(void)
{
	struct xp_steer_opts o = { .sz = sizeof(o), .ifname = "lo" };
	struct xp_steer *s = NULL;

	/* Should a refusal regress, the open it lets through must not reach the host's lo:
	 * a network namespace of our own (as root; else the open fails without rights). */
	if (!geteuid() && unshare(CLONE_NEWNET))
		fprintf(stderr, "  (steer_opts: no network namespace of its own)\n");
	XT_EQ(xp_steer_open(newer(&o, sizeof(o), sizeof(o) + 8, sizeof(o) + 1), &s), -EINVAL);
	XT_EQ(xp_steer_open(
		      newer(&o, sizeof(o), sizeof(o), offsetof(struct xp_steer_opts, reserved_)),
		      &s),
	      -EINVAL);
	XT_EQ(xp_steer_open(newer(&o, sizeof(o), 0, ~0ul), &s), -EINVAL);
	XT_CHECK(!s);
}

/*
 * An xsk caller built when the struct ended at rx_size: the old check (sz covers
 * queue) passed, then tx_size, fill_size, mode, busy_poll... were read past its end.
 */
static void xsk_short_struct(void)
{
	struct xp_umem_opts uo = { .sz = OFFEND(xp_umem_opts, headroom),
				   .size = 1 << 20,
				   .chunk_size = 4096 };
	struct xp_xsk_opts o = { .sz = OFFEND(xp_xsk_opts, rx_size),
				 .ifname = "lo",
				 .rx_size = 64 };
	struct xp_umem *u = NULL;
	struct xp_xsk *x = NULL;
	void *area;

	if (geteuid() || unshare(CLONE_NEWNET)) {
		fprintf(stderr, "  (xsk_short_struct needs root for its own network namespace)\n");
		return;
	}
	if (system("ip link set lo up"))
		fprintf(stderr, "  (ip link set lo up failed)\n");
	area = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	XT_REQUIRE(area != MAP_FAILED);
	uo.area = area;
	XT_EQ(xp_umem_create(at_guard(&uo, uo.sz), &u), 0);
	XT_REQUIRE(u);
	XT_CHECK(!xp_umem_unaligned(u));
	XT_EQ(xp_xsk_create(u, at_guard(&o, o.sz), &x), 0);
	if (x) {
		XT_EQ(x->rx.size, 64);
		XT_EQ(x->tx.size, 2048); /* defaults for what it did not know */
		XT_EQ(x->fill.size, 128);
		XT_CHECK(x->need_wakeup); /* no_need_wakeup read as false */
		XT_CHECK(!x->multi_buffer);
		xp_xsk_destroy(x);
	}
	o.sz = sizeof(o);
	XT_EQ(xp_xsk_create(u, newer(&o, sizeof(o), sizeof(o) + 8, sizeof(o) + 4), &x), -EINVAL);
	XT_EQ(xp_xsk_create(
		      u, newer(&o, sizeof(o), sizeof(o), offsetof(struct xp_xsk_opts, reserved_)),
		      &x),
	      -EINVAL);
	XT_EQ(xp_umem_destroy(u), 0);
	uo.sz = sizeof(uo);
	XT_EQ(xp_umem_create(
		      newer(&uo, sizeof(uo), sizeof(uo), offsetof(struct xp_umem_opts, reserved_)),
		      &u),
	      -EINVAL);
	munmap(area, 1 << 20);
}

/* The public helpers behave as the header says. */
static void macros(void)
{
	XP_OPTS(xp_pool_opts, o, .stripes = 2);
	struct xp_pool_opts short_o = { .sz = OFFEND(xp_pool_opts, flags) };

	XT_EQ(o.sz, sizeof(o));
	XT_EQ(o.stripes, 2);
	XT_CHECK(XP_OPTS_VALID(&o, xp_pool_opts));
	XT_CHECK(XP_OPTS_VALID((struct xp_pool_opts *)NULL, xp_pool_opts));
	XT_EQ(XP_OPTS_GET(&short_o, flags, 7), 0);
	XT_EQ(XP_OPTS_GET(&short_o, stripes, 7), 7);
	XT_EQ(XP_OPTS_KNOWN(xp_pool_opts), OFFEND(xp_pool_opts, stripes));
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	guard_map =
		mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard_map == MAP_FAILED || mprotect(guard_map + page, page, PROT_NONE))
		XT_SKIP("cannot map a guard page");
	for (__u32 i = 0; i < 256; i++)
		handles[i] = (__u64)i * 4096;
	xp_set_log_fn(quiet);
	XT_RUN(macros);
	XT_RUN(pool_opts);
	XT_RUN(deal_opts);
	XT_RUN(ledger_opts);
	XT_RUN(mem_region_opts);
	XT_RUN(steer_opts);
	XT_RUN(xsk_short_struct);
	return xt_done();
}
