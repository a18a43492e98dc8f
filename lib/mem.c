// SPDX-License-Identifier: BSD-3-Clause
/*
 * UMEM / arena memory: 2 MiB hugepages with a 4 KiB fallback, NUMA bind, mlock. Every
 * mapping is a shared mapping of a memfd (hugetlb or shmem), not anonymous memory, so
 * the fd can go to another process (SCM_RIGHTS) that maps the same frames: the hot
 * handover of a UMEM to a new engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log_internal.h"
#include "mem_internal.h"
#include "opts_internal.h"
#include "xpile/mem.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 4u
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26)
#endif
/* From linux/mempolicy.h, spelled out so no libnuma is needed. */
#define XP_MPOL_BIND 2
#define XP_MPOL_MF_STRICT (1 << 0)
#define XP_MPOL_MF_MOVE (1 << 1)
#define XP_MAX_NODES 1024

long xp_read_long(const char *path, long dflt)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

#define HP_DIR "/sys/kernel/mm/hugepages/hugepages-2048kB/"

long xp_hugepages_free(void)
{
	return xp_read_long(HP_DIR "free_hugepages", 0) - xp_read_long(HP_DIR "resv_hugepages", 0);
}

long xp_hugepages_wanted(__u64 bytes)
{
	long need = (long)((bytes + XP_PAGE_2M - 1) / XP_PAGE_2M), avail = xp_hugepages_free();
	/* Pages others hold beyond the pool are surplus: grow past them too. */
	long total = xp_read_long(HP_DIR "nr_hugepages", 0) +
		     xp_read_long(HP_DIR "surplus_hugepages", 0);

	return total + (need > avail ? need - (avail > 0 ? avail : 0) : 0);
}

int xp_numa_node_of_ifname(const char *ifname, int *node)
{
	char path[PATH_MAX];

	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/') ||
	    !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/class/net/%s", ifname);
	if (access(path, F_OK))
		return -ENODEV;
	/* Virtual devices have no device/ link; -1 there and in the file both mean any. */
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", ifname);
	*node = (int)xp_read_long(path, -1);
	if (*node < 0)
		*node = -1;
	return 0;
}

int xp_mem_bind(void *base, __u64 size, int node)
{
	unsigned long mask[XP_MAX_NODES / (8 * sizeof(unsigned long))] = { 0 };

	if (node >= XP_MAX_NODES)
		return -EINVAL;
	mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
	if (syscall(SYS_mbind, base, size, XP_MPOL_BIND, mask, XP_MAX_NODES + 1,
		    XP_MPOL_MF_STRICT | XP_MPOL_MF_MOVE))
		return -errno;
	return 0;
}

int xp_memfd_map(__u64 size, bool huge, bool noreserve, void **base, int *fdp)
{
	int fd = memfd_create(huge ? "xpile-umem-2M" : "xpile-umem",
			      MFD_CLOEXEC | (huge ? MFD_HUGETLB | MFD_HUGE_2MB : 0));
	void *p;
	int err;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* A hugetlb mapping reserves its pages here unless told not to (the lazy arena
	 * backs each carve with fallocate() instead). */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | (noreserve ? MAP_NORESERVE : 0),
		 fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	*base = p;
	*fdp = fd;
	return 0;
}

static int mem_alloc(const struct xp_mem_opts *o, struct xp_mem *out);

int xp_mem_alloc(const struct xp_mem_opts *opts, struct xp_mem *out)
{
	struct xp_mem_opts oc;
	struct xp_errsink es;
	int err;

	if (!XP_OPTS_LOAD_LOG("mem", &oc, opts, xp_mem_opts))
		return -EINVAL;
	if (!XP_OPTS_RESERVED_CLEAR(oc.reserved_)) {
		xp_err("mem: opts.reserved_ is set; zero the struct before setting fields\n");
		return -EINVAL;
	}
	xp_errsink_begin(&es, oc.errbuf, oc.errbuf_sz);
	err = mem_alloc(&oc, out);
	xp_errsink_end(&es);
	return err;
}

static int mem_alloc(const struct xp_mem_opts *o, struct xp_mem *out)
{
	struct xp_mem m = { .numa_node = -1, .fd = -1 };
	enum xp_hugepages hp;
	__u64 hsize;
	int err;

	if (!out || !o->size) {
		xp_err("mem: NULL out pointer or a size of 0 bytes\n");
		return -EINVAL;
	}
	hp = o->hugepages;
	hsize = (o->size + XP_PAGE_2M - 1) & ~(__u64)(XP_PAGE_2M - 1);
	if (hp != XP_HUGE_NEVER) {
		if (!xp_memfd_map(hsize, true, false, &m.base, &m.fd)) {
			m.size = hsize;
			m.page_size = XP_PAGE_2M;
			m.hugepages = true;
		} else {
			long need = (long)(hsize / XP_PAGE_2M), avail = xp_hugepages_free();
			long want = xp_hugepages_wanted(hsize);

			if (hp == XP_HUGE_REQUIRE) {
				xp_err("%ld free 2 MiB hugepages, %ld needed; reserve them with: "
				       "echo %ld > /proc/sys/vm/nr_hugepages\n",
				       avail, need, want);
				return -ENOMEM;
			}
			xp_warn("%ld free 2 MiB hugepages, %ld needed; using 4 KiB pages "
				"(reserve with: echo %ld > /proc/sys/vm/nr_hugepages)\n",
				avail, need, want);
		}
	}
	if (!m.base) {
		m.size = (o->size + XP_PAGE_4K - 1) & ~(__u64)(XP_PAGE_4K - 1);
		err = xp_memfd_map(m.size, false, false, &m.base, &m.fd);
		if (err || !m.base) {
			err = err ?: -ENOMEM;
			m.base = NULL;
			xp_err("memfd mapping of %llu bytes: %s\n", (unsigned long long)m.size,
			       strerror(-err));
			return err;
		}
		m.page_size = XP_PAGE_4K;
	}
	/* Bind before the first touch so pages are born on the node. */
	if (o->bind_node && o->numa_node >= 0) {
		err = xp_mem_bind(m.base, m.size, o->numa_node);
		if (err) {
			xp_err("binding %llu bytes to NUMA node %d: %s\n",
			       (unsigned long long)m.size, o->numa_node, strerror(-err));
			goto fail;
		}
		m.numa_node = o->numa_node;
	}
	if (o->lock) {
		if (mlock(m.base, m.size)) {
			err = -errno;
			xp_err("mlock of %llu bytes: %s; raise the limit (ulimit -l, "
			       "LimitMEMLOCK=) or run without locking\n",
			       (unsigned long long)m.size, strerror(-err));
			goto fail;
		}
		m.locked = true;
	} else {
		/* Fault everything in now rather than on the data path: one call where the
		 * kernel has it (5.14), else a touch per page. */
		if (madvise(m.base, m.size, MADV_POPULATE_WRITE))
			for (__u64 off = 0; off < m.size; off += m.page_size)
				((volatile char *)m.base)[off] = 0;
	}
	*out = m;
	return 0;
fail:
	munmap(m.base, m.size);
	close(m.fd);
	return err;
}

void xp_mem_free(struct xp_mem *m)
{
	if (!m || !m->base)
		return;
	if (m->locked)
		munlock(m->base, m->size);
	munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	m->base = NULL;
	m->size = 0;
}
