// SPDX-License-Identifier: BSD-3-Clause
/* UMEM memory: hugepages and their fallback, NUMA node lookup and bind, mlock. */
#include <errno.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xpile/log.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "hugepages.h"
#include "xt.h"

static char logbuf[4096];

static int capture(enum xp_log_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(logbuf);

	return vsnprintf(logbuf + n, sizeof(logbuf) - n, fmt, ap);
}

/* The kernel takes the layout's UMEM registration (chunk size, headroom, flags, length). */
static int umem_reg(const struct xp_layout *l, const struct xp_mem *m)
{
	struct xdp_umem_reg reg = { .addr = (__u64)(unsigned long)m->base,
				    .len = l->area_size,
				    .chunk_size = l->chunk_size,
				    .headroom = l->headroom,
				    .flags = l->umem_flags };
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	err = setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ? -errno : 0;
	close(fd);
	return err;
}

static void test_ifname_node(void)
{
	int node = 7;

	XT_EQ(xp_numa_node_of_ifname("lo", &node), 0);
	XT_EQ(node, -1); /* virtual device: any node */
	XT_EQ(xp_numa_node_of_ifname("xpnosuchif0", &node), -ENODEV);
	XT_EQ(xp_numa_node_of_ifname("../lo", &node), -EINVAL);
	XT_EQ(xp_numa_node_of_ifname("", &node), -EINVAL);
	XT_EQ(xp_numa_node_of_ifname("averyveryverylongname", &node), -EINVAL);
}

static void test_small_pages_bind_lock(void)
{
	struct xp_mem_opts o = { .sz = sizeof(o),
				 .size = 3 * 4096 + 5,
				 .hugepages = XP_HUGE_NEVER,
				 .bind_node = true,
				 .numa_node = 0,
				 .lock = true };
	struct xp_mem m;
	int node = -1;

	XT_REQUIRE(xp_mem_alloc(&o, &m) == 0);
	XT_EQ(m.page_size, 4096);
	XT_EQ(m.size, 4 * 4096);
	XT_CHECK(!m.hugepages);
	XT_CHECK(m.locked);
	XT_EQ(m.numa_node, 0);
	memset(m.base, 0xa5, m.size);
	/* get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR): the node the page really is on. */
	XT_EQ(syscall(SYS_get_mempolicy, &node, NULL, 0, m.base, 3), 0);
	XT_EQ(node, 0);
	xp_mem_free(&m);
	XT_CHECK(m.base == NULL);
	xp_mem_free(&m); /* idempotent */

	o.numa_node = 4000;
	XT_EQ(xp_mem_alloc(&o, &m), -EINVAL);
	o.size = 0;
	XT_EQ(xp_mem_alloc(&o, &m), -EINVAL);
}

/* Not enough hugepages: auto falls back with the sysctl to run, require refuses. */
static void test_hugepage_fallback(void)
{
	long avail = xp_hugepages_free();
	struct xp_mem_opts o = { .sz = sizeof(o), .size = (__u64)(avail + 1) * XP_PAGE_2M - 100 };
	struct xp_mem m;

	if (avail > 64)
		avail = xt_hp_drain();
	if (avail < 0 || avail > 64)
		XT_SKIP_CASE("%ld hugepages free after draining: the fallback cannot be reached",
			     avail);
	o.size = (__u64)(avail + 1) * XP_PAGE_2M - 100;
	logbuf[0] = 0;
	XT_REQUIRE(xp_mem_alloc(&o, &m) == 0);
	XT_EQ(m.page_size, 4096);
	XT_CHECK(!m.hugepages);
	XT_CHECK(strstr(logbuf, "> /proc/sys/vm/nr_hugepages") != NULL);
	XT_CHECK(strstr(logbuf, "needed") != NULL);
	((char *)m.base)[m.size - 1] = 1;
	xp_mem_free(&m);

	logbuf[0] = 0;
	o.hugepages = XP_HUGE_REQUIRE;
	XT_EQ(xp_mem_alloc(&o, &m), -ENOMEM);
	XT_CHECK(strstr(logbuf, "echo ") != NULL);
	xt_hp_restore();
}

/* Reserve two hugepages more than are there, use them, give them back. */
static void test_hugepages(void)
{
	struct xp_mem_opts o = {
		.sz = sizeof(o), .size = 2 * XP_PAGE_2M, .hugepages = XP_HUGE_REQUIRE, .lock = true
	};
	struct xp_mem m;

	long nr = xt_hp_read(), total = xt_hp_meminfo("HugePages_Total");

	XT_REQUIRE(xt_hp_save() == 0 && nr >= 0);
	/* Pages others hold beyond the pool count as surplus: grow past all of them. */
	XT_REQUIRE(xt_hp_write((total > nr ? total : nr) + 2) == 0);
	if (xp_hugepages_free() < 2)
		XT_SKIP_CASE("the kernel could not reserve 2 hugepages (memory fragmented)");
	XT_REQUIRE(xp_mem_alloc(&o, &m) == 0);
	XT_EQ(m.page_size, XP_PAGE_2M);
	XT_CHECK(m.hugepages);
	XT_EQ(m.size, 2 * XP_PAGE_2M);
	XT_EQ((unsigned long)m.base % XP_PAGE_2M, 0);
	memset(m.base, 1, m.size);
	{
		/* 1986 interleaved frames fill the two pages; the kernel takes them. */
		struct xp_layout_opts lo = { .sz = sizeof(lo),
					     .nframes = 1986,
					     .page_size = m.page_size };
		struct xp_layout l;

		XT_REQUIRE(xp_layout_compute(&lo, &l) == 0);
		XT_EQ(l.area_size, m.size);
		XT_EQ(umem_reg(&l, &m), 0);
	}
	xp_mem_free(&m);
	xt_hp_restore();
	XT_EQ(xt_hp_read(), xt_hp_saved);
}

static void test_umem_registration(void)
{
	static const enum xp_layout_kind kinds[] = { XP_LAYOUT_INTERLEAVED, XP_LAYOUT_ALIGNED };
	static const __u32 sizes[] = { 2048, 3072, 4096 };

	for (unsigned k = 0; k < 2; k++)
		for (unsigned f = 0; f < 3; f++) {
			struct xp_layout_opts lo = { .sz = sizeof(lo),
						     .frame_size = sizes[f],
						     .headroom = 64,
						     .nframes = 1000,
						     .kind = kinds[k],
						     .page_size = XP_PAGE_4K };
			struct xp_mem_opts mo = { .sz = sizeof(mo), .hugepages = XP_HUGE_NEVER };
			struct xp_layout l;
			struct xp_mem m;

			if (kinds[k] == XP_LAYOUT_ALIGNED && sizes[f] == 3072)
				continue;
			XT_REQUIRE(xp_layout_compute(&lo, &l) == 0);
			mo.size = l.area_size;
			XT_REQUIRE(xp_mem_alloc(&mo, &m) == 0);
			XT_EQ(umem_reg(&l, &m), 0);
			xp_mem_free(&m);
		}
}

int main(void)
{
	if (geteuid() != 0)
		XT_SKIP("needs root (mlock, mbind, reserving hugepages)");
	xp_set_log_fn(capture);
	XT_RUN(test_ifname_node);
	XT_RUN(test_small_pages_bind_lock);
	XT_RUN(test_umem_registration);
	XT_RUN(test_hugepage_fallback);
	XT_RUN(test_hugepages);
	return xt_done();
}
