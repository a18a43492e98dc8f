/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory domains (dom.c): the UMEMs and what lives with each. --umem shared makes one
 * domain for every port, --umem per-port one per port; each is a carve of the arena of
 * its port's NUMA node, with its own layout, frame pool, ledger and fill order, and
 * each worker has a cache, a dealer, a ledger account and an M3 slice in every domain
 * it has a socket in. A queue points at its domain and at its worker's state there
 * (q->dom, q->wd), so the hot path never looks anything up.
 */
#ifndef XPILE_ENG_DOM_H
#define XPILE_ENG_DOM_H

#include <stdbool.h>
#include <linux/types.h>

#include "xpile/deal.h"
#include "xpile/ledger.h"
#include "xpile/pool.h"
#include "xpile/region.h"
#include "xpile/layout.h"
#include "xpile/mem.h"

struct engine;
struct xp_topology;

enum eng_umem { ENG_UMEM_SHARED, ENG_UMEM_PER_PORT };

/* The memory options (main.c fills them; the engine's cfg.mem points here). */
struct eng_mem_cfg {
	int umem; /* enum eng_umem */
	enum xp_layout_kind layout;
	enum xp_hugepages hugepages;
	__u32 frame_size, headroom, frames, cache;
	__u64 m3_seed; /* 0: deterministic fill order, LIFO refills */
	__u32 channels, ranks; /* memory topology; 0: probed (xp_topology_probe) */
	enum xp_pool_backend pool_backend;
	bool ledger_debug; /* every move checked against the state byte; debug pool */
};

/* What a worker saw of one frame domain at its cut, between two loop turns
 * (user/audit.c). */
struct eng_cut {
	struct xp_ledger_cut led;
	__u64 allocator; /* frames in its cache and dealer */
	__u64 pile_ops; /* its cache's slow paths so far: every pile access is one */
	__u64 app; /* frames it holds at the cut: those in its TAP ring's io_uring */
	__s64 held; /* APP frames it holds at the cut: held (xp_pkt_hold()) and leaked */
	__u32 pile; /* the domain's pile count */
};

/*
 * A frame domain (user/dom.c): one UMEM carved from its NUMA node's arena, with its
 * own layout, frame pool, ledger and handles. --umem shared: one domain for every
 * port; per-port: one per port. A frame never leaves its domain: fwd between two
 * domains copies (modes/fwd.c).
 */
struct eng_dom {
	__u32 id;
	int node; /* NUMA node of its arena (-1: none) */
	struct xp_layout layout;
	struct xp_arena_buf buf; /* the carve */
	struct xp_mem mem; /* describes the carve: base, size, page size, node, memfd */
	bool mem_ok;
	bool unaligned;
	bool imported; /* mapped from a predecessor's memfd (handover.h): no carve of ours */
	__u64 *handles; /* every frame, in fill order */
	__u32 *starts; /* unaligned chunks: low bits of the frame start in each ledger slot */
	struct xp_pool *pool;
	struct xp_umem *umem; /* registered on its first socket */
	struct xp_ledger *ledger;
	__u32 frames; /* --frames, or what its sockets and workers need */
	__u32 nq, nrx; /* its sockets, those that receive */
	__u32 nworkers; /* workers with a socket in it */
	__u32 fill_cap; /* most frames one fill ring may hold (fair share of a small pool) */
};

/* A worker's allocator state in one domain: NULL d when it has no socket there. */
struct eng_wdom {
	struct eng_dom *d;
	struct xp_cache *cache;
	struct xp_deal *deal; /* in front of cache: refills even over channels */
	struct xp_ledger_acct *acct;
	__u32 rank; /* its index among the domain's workers: its M3 slice, its stripe */
	__u32 slice_first, slice_count; /* its M3 slice of the fill order (xpile/layout.h) */
	__s64 held; /* frames in its hold place (xp_pkt_hold()): APP in the ledger */
	__s64 leaked; /* APP frames its callbacks left unaccounted for (api.c) */
	struct eng_cut cut;
};

static inline void *eng_data(const struct eng_dom *d, __u64 addr)
{
	return xp_layout_ptr(&d->layout, d->mem.base, addr);
}

/* Set-up stages, in order (run.c's table). */
int eng_dom_assign(struct engine *e); /* queues to domains, frames and fill shares */
int eng_dom_memory(struct engine *e); /* layouts, then each UMEM carved from its arena */
int eng_dom_frames(struct engine *e); /* pools, ledgers, caches, dealers, slices, UMEMs */
/* Their tear-down, in reverse; each may run again, and after a failed set-up: */
void eng_dom_frames_free(struct engine *e); /* caches, UMEMs, ledgers, pools */
void eng_dom_memory_free(struct engine *e); /* the carves, then the arenas */
void eng_dom_free(struct engine *e); /* the domains themselves */
/* Dealers first, then caches: every free frame back in its pile (also eng_run()). */
void eng_dom_caches_destroy(struct engine *e);

/* The workers' M3 slices of @d from its pool: the frames its ledger has free only (a
 * handover's others are in rings). */
int eng_dom_deal(struct engine *e, struct eng_dom *d);
/* @d's fill ring share of its frames (a handover changes its frames): 0 or refused. */
int eng_dom_fill_cap(struct engine *e, struct eng_dom *d);
struct xp_arena *eng_node_arena(struct engine *e, int node, __u64 want, enum xp_hugepages hp);
/* Carves @bytes for a large buffer from the arena of NUMA node @node (-1: none). */
int eng_carve(struct engine *e, int node, __u64 bytes, struct xp_arena_buf *out);
/* Channels and ranks: the options, else the probe, which says where it looked. */
void eng_topology(struct engine *e, struct xp_topology *t);
/* ", "umem":N" in JSON, " (UMEM N)" in text when there is more than one: for lines
 * about @d (a static buffer: one use per line). */
const char *eng_dom_tag(const struct engine *e, const struct eng_dom *d, bool json);

#endif /* XPILE_ENG_DOM_H */
