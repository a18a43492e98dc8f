// SPDX-License-Identifier: BSD-3-Clause
/*
 * The DPDK side of xpile-bench alloc: the same loop over rte_mempool (ring_mp_mc,
 * stack, lf_stack) with its per-lcore default cache. Built only when the Makefile
 * finds libdpdk (XPILE_HAVE_DPDK); otherwise these are stubs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloc.h"
#include "benchutil.h"

#ifdef XPILE_HAVE_DPDK
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

bool alloc_dpdk_available(void)
{
	return true;
}

int alloc_dpdk_init(const struct alloc_params *p)
{
	/* Memory for the largest pool of a run, plus EAL's own. */
	return bench_dpdk_eal_init("alloc",
				   2 * (size_t)p->nobjs * (p->frame + 128) / (1 << 20) + 256);
}

int alloc_dpdk_pool_create(const char *ops, const struct alloc_params *p, void **out)
{
	static unsigned int seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;
	unsigned int elt = p->frame > 64 ? p->frame - 64 : p->frame;

	snprintf(name, sizeof(name), "xpb%u", seq++);
	/* The per-lcore cache of rte_mempool_create_empty serves registered threads. */
	mp = rte_mempool_create_empty(name, p->nobjs, elt, p->cache, 0, SOCKET_ID_ANY, 0);
	if (!mp) {
		fprintf(stderr, "xpile-bench alloc: rte_mempool_create_empty: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	if (rte_mempool_set_ops_byname(mp, ops, NULL) || rte_mempool_populate_default(mp) < 0) {
		fprintf(stderr, "xpile-bench alloc: DPDK mempool ops '%s' unusable: %s\n", ops,
			rte_strerror(rte_errno));
		rte_mempool_free(mp);
		return -1;
	}
	*out = mp;
	return 0;
}

void alloc_dpdk_pool_free(void *mp)
{
	rte_mempool_free(mp);
}

void alloc_dpdk_run(void *vmp, const struct alloc_params *p, struct alloc_result *res)
{
	struct rte_mempool *mp = vmp;
	void **objs = malloc(p->keep * sizeof(*objs));
	struct rte_mempool_cache *cache;

	if (!objs || rte_thread_register()) {
		fprintf(stderr, "xpile-bench alloc: cannot register a DPDK thread\n");
		res->err = -1;
		free(objs);
		return;
	}
	cache = rte_mempool_default_cache(mp, rte_lcore_id());
#define DGET(o, n) rte_mempool_generic_get(mp, (o), (n), cache)
#define DPUT(o, n) rte_mempool_generic_put(mp, (o), (n), cache)
#define DADDR(o) (o)
	ALLOC_LOOP(p, res, objs, DGET, DPUT, DADDR);
	if (p->verbose)
		fprintf(stderr, "  dpdk lcore %u: cache %s size %u len %u (a hit needs len > 0)\n",
			rte_lcore_id(), cache ? "on" : "OFF", cache ? cache->size : 0,
			cache ? cache->len : 0);
	if (!cache && p->cache) {
		fprintf(stderr, "xpile-bench alloc: DPDK ran without its cache\n");
		res->err = -1;
	}
	/* Leave nothing cached in this lcore slot: the next registered thread reuses it. */
	if (cache)
		rte_mempool_cache_flush(cache, mp);
	rte_thread_unregister();
	free(objs);
}

#else

bool alloc_dpdk_available(void)
{
	return false;
}

int alloc_dpdk_init(const struct alloc_params *p)
{
	return -ENOTSUP;
}

int alloc_dpdk_pool_create(const char *ops, const struct alloc_params *p, void **mp)
{
	return -ENOTSUP;
}

void alloc_dpdk_pool_free(void *mp)
{
}

void alloc_dpdk_run(void *mp, const struct alloc_params *p, struct alloc_result *res)
{
	res->err = -ENOTSUP;
}

#endif
