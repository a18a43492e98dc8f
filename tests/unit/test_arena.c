// SPDX-License-Identifier: BSD-3-Clause
/*
 * The arena (xpile/region.h): memfd-backed, lazy (pages only for what is carved, given
 * back on free), several UMEMs from one arena registered with the kernel, the memfd
 * maps the same bytes in a second mapping (what a handover needs), hugepages missing
 * is an error naming the sysctl rather than a SIGBUS. And xp_mem's memfd.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xpile/log.h"
#include "xpile/region.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "hugepages.h"
#include "xt.h"

#define MiB (1ull << 20)

static char logbuf[4096];

static int capture(enum xp_log_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(logbuf);

	return vsnprintf(logbuf + n, sizeof(logbuf) - n, fmt, ap);
}

/* Bytes the memfd holds pages for. */
static __u64 fd_backed(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? ~0ull : (__u64)st.st_blocks * 512;
}

static int umem_reg(void *base, __u64 len)
{
	struct xdp_umem_reg reg = { .addr = (__u64)(unsigned long)base,
				    .len = len,
				    .chunk_size = 2048 };
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		err = -errno;
	close(fd);
	return err;
}

/* 1 GiB of address space, a few MiB of pages: only the carves are backed. */
static void test_lazy_carves(void)
{
	struct xp_arena_opts o = { .sz = sizeof(o), .size = 1024 * MiB, .numa_node = -1 };
	struct xp_arena_buf b[3];
	const __u64 want[3] = { 5 * MiB + 100, 4096, 20 * MiB };
	struct xp_arena *a;
	const struct xp_mem *m;
	__u64 sum = 0;

	o.hugepages = XP_HUGE_NEVER;
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	m = xp_arena_mem(a);
	XT_EQ(m->size, 1024 * MiB);
	XT_EQ(m->page_size, XP_PAGE_4K);
	XT_CHECK(m->fd >= 0);
	XT_EQ(fd_backed(m->fd), 0);
	for (int i = 0; i < 3; i++) {
		XT_REQUIRE(xp_arena_alloc(a, want[i], 0, &b[i]) == 0);
		XT_EQ(b[i].size, (want[i] + 4095) & ~4095ull);
		XT_CHECK((char *)b[i].base == (char *)m->base + b[i].off);
		XT_EQ(b[i].off % (2 * MiB), 0);
		memset(b[i].base, 0x40 + i, b[i].size);
		sum += b[i].size;
	}
	/* No two carves overlap. */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (i != j)
				XT_CHECK(b[i].off + (__u64)b[i].nchunks * 2 * MiB <= b[j].off ||
					 b[j].off + (__u64)b[j].nchunks * 2 * MiB <= b[i].off);
	XT_EQ(xp_arena_backed(a), sum);
	XT_EQ(fd_backed(m->fd), sum);
	/* Two UMEMs out of one arena, each registered with the kernel. */
	XT_EQ(umem_reg(b[0].base, b[0].size & ~2047ull), 0);
	XT_EQ(umem_reg(b[2].base, b[2].size), 0);
	XT_EQ(xp_arena_free(a, &b[2]), 0);
	XT_CHECK(b[2].base == NULL);
	XT_EQ(xp_arena_backed(a), sum - 20 * MiB);
	XT_EQ(fd_backed(m->fd), sum - 20 * MiB);
	XT_EQ(xp_arena_free(a, &b[2]), -EINVAL); /* freed already */
	XT_CHECK(((char *)b[0].base)[5 * MiB] == 0x40);
	xp_arena_destroy(a);
}

/* The memfd is the arena: mapped again (as a new process would, given the fd), it
 * shows the bytes the first mapping wrote. */
static void test_memfd_shared(void)
{
	struct xp_arena_opts o = { .sz = sizeof(o), .size = 8 * MiB, .numa_node = -1 };
	struct xp_mem_opts mo = { .sz = sizeof(mo), .size = 3 * 4096, .hugepages = XP_HUGE_NEVER };
	struct xp_arena_buf b;
	struct xp_arena *a;
	struct xp_mem m;
	char *p;

	o.hugepages = XP_HUGE_NEVER;
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	XT_REQUIRE(xp_arena_alloc(a, 2 * MiB, 0, &b) == 0);
	p = mmap(NULL, xp_arena_mem(a)->size, PROT_READ, MAP_SHARED, xp_arena_mem(a)->fd, 0);
	XT_REQUIRE(p != MAP_FAILED);
	memcpy(b.base, "frame", 6);
	XT_CHECK(!memcmp(p + b.off, "frame", 6));
	XT_EQ(xp_arena_free(a, &b), 0);
	XT_CHECK(p[b.off] == 0); /* the pages went back: a hole reads zero */
	munmap(p, xp_arena_mem(a)->size);
	xp_arena_destroy(a);

	XT_REQUIRE(xp_mem_alloc(&mo, &m) == 0);
	XT_CHECK(m.fd >= 0);
	p = mmap(NULL, m.size, PROT_READ, MAP_SHARED, m.fd, 0);
	XT_REQUIRE(p != MAP_FAILED);
	((char *)m.base)[4097] = 7;
	XT_EQ(p[4097], 7);
	munmap(p, m.size);
	xp_mem_free(&m);
	XT_EQ(m.fd, -1);
}

/* A carve of a node's arena has its pages on that node (node 0 exists everywhere). */
static void test_numa_bind(void)
{
	struct xp_arena_opts o = { .sz = sizeof(o), .size = 16 * MiB, .numa_node = 0 };
	struct xp_arena_buf b;
	struct xp_arena *a;
	int node = -1;

	o.hugepages = XP_HUGE_NEVER;
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	XT_EQ(xp_arena_mem(a)->numa_node, 0);
	XT_REQUIRE(xp_arena_alloc(a, 3 * MiB, 0, &b) == 0);
	/* get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR): the node the page really is on. */
	XT_EQ(syscall(SYS_get_mempolicy, &node, NULL, 0, (char *)b.base + 2 * MiB, 3), 0);
	XT_EQ(node, 0);
	XT_EQ(xp_arena_free(a, &b), 0);
	xp_arena_destroy(a);
	o.numa_node = 4000;
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	XT_EQ(xp_arena_alloc(a, 4096, 0, &b), -EINVAL);
	xp_arena_destroy(a);
}

static void test_full_and_bad(void)
{
	struct xp_arena_opts o = { .sz = sizeof(o), .size = 6 * MiB, .numa_node = -1 };
	struct xp_arena_buf b, c;
	struct xp_arena *a;

	o.hugepages = XP_HUGE_NEVER;
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	XT_EQ(xp_arena_mem(a)->size, 8 * MiB); /* a power of two chunks */
	XT_EQ(xp_arena_alloc(a, 0, 0, &b), -EINVAL);
	logbuf[0] = 0;
	XT_EQ(xp_arena_alloc(a, 9 * MiB, 0, &b), -ENOMEM);
	XT_CHECK(strstr(logbuf, "no free range") != NULL);
	XT_REQUIRE(xp_arena_alloc(a, 6 * MiB, 0, &b) == 0);
	XT_EQ(xp_arena_alloc(a, 1, 0, &c), -ENOMEM);
	XT_EQ(xp_arena_free(a, &b), 0);
	XT_REQUIRE(xp_arena_alloc(a, 1, 0, &c) == 0);
	xp_arena_destroy(a);
	o.chunk = 3000;
	XT_EQ(xp_arena_create(&o, &a), -EINVAL);
	o.chunk = 0;
	o.size = 0;
	XT_EQ(xp_arena_create(&o, &a), -EINVAL);
}

/* Hugetlb memfd: a carve the pages cannot back fails with the sysctl (no SIGBUS); with
 * pages reserved it gets them, and only for what it asked. */
static void test_hugepages(void)
{
	struct xp_arena_opts o = { .sz = sizeof(o), .size = 64 * MiB, .numa_node = -1 };
	struct xp_arena_buf b;
	struct xp_arena *a;
	long avail = xp_hugepages_free();

	o.hugepages = XP_HUGE_REQUIRE;
	if (avail > 16)
		avail = xt_hp_drain();
	if (avail < 0 || avail > 16)
		XT_SKIP_CASE("%ld hugepages free after draining: the shortage cannot be made",
			     avail);
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	XT_EQ(xp_arena_mem(a)->page_size, XP_PAGE_2M);
	XT_CHECK(xp_arena_mem(a)->hugepages);
	logbuf[0] = 0;
	XT_EQ(xp_arena_alloc(a, (__u64)(avail + 1) * 2 * MiB, 0, &b), -ENOMEM);
	XT_CHECK(strstr(logbuf, "> /proc/sys/vm/nr_hugepages") != NULL);
	XT_REQUIRE(xt_hp_save() == 0);
	XT_REQUIRE(xt_hp_write(xt_hp_read() + 3) == 0);
	if (xp_hugepages_free() < 3) {
		xp_arena_destroy(a);
		XT_SKIP_CASE("the kernel could not reserve 3 hugepages (memory fragmented)");
	}
	XT_REQUIRE(xp_arena_alloc(a, 3 * MiB, 0, &b) == 0);
	XT_EQ(b.size, 4 * MiB);
	XT_EQ(fd_backed(xp_arena_mem(a)->fd), 4 * MiB);
	memset(b.base, 1, b.size);
	XT_EQ(umem_reg(b.base, b.size), 0);
	XT_EQ(xp_arena_free(a, &b), 0);
	XT_EQ(fd_backed(xp_arena_mem(a)->fd), 0);
	xp_arena_destroy(a);
	xt_hp_restore();
}

/* XP_HUGE_AUTO without the pages: 4 KiB pages and one warning with the sysctl. */
static void test_auto_fallback(void)
{
	long avail = xp_hugepages_free();
	struct xp_arena_opts o = { .sz = sizeof(o), .numa_node = -1 };
	struct xp_arena *a;

	if (avail > 64)
		avail = xt_hp_drain();
	if (avail < 0 || avail > 64)
		XT_SKIP_CASE("%ld hugepages free after draining: the fallback cannot be reached",
			     avail);
	o.size = (__u64)(avail + 1) * 2 * MiB;
	logbuf[0] = 0;
	XT_REQUIRE(xp_arena_create(&o, &a) == 0);
	XT_EQ(xp_arena_mem(a)->page_size, XP_PAGE_4K);
	XT_CHECK(strstr(logbuf, "using 4 KiB pages") != NULL);
	XT_CHECK(strstr(logbuf, "> /proc/sys/vm/nr_hugepages") != NULL);
	xp_arena_destroy(a);
	xt_hp_restore();
}

int main(void)
{
	if (geteuid() != 0)
		XT_SKIP("needs root (AF_XDP UMEM registration, reserving hugepages)");
	xp_set_log_fn(capture);
	XT_RUN(test_lazy_carves);
	XT_RUN(test_memfd_shared);
	XT_RUN(test_numa_bind);
	XT_RUN(test_full_and_bad);
	XT_RUN(test_hugepages);
	XT_RUN(test_auto_fallback);
	return xt_done();
}
