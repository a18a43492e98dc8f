// SPDX-License-Identifier: BSD-3-Clause
/*
 * Memory domains (dom.h): the UMEMs and what lives with each. One arena per NUMA node,
 * however many UMEMs (lib/arena.c's lazy iBuddy regions); each domain a carve of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dom.h"
#include "engine.h"
#include "uds.h"

static __u64 handle_of(void *ctx, __u64 addr)
{
	return xp_layout_handle(ctx, addr);
}

/*
 * A receiving socket's fill ring keeps what it holds until packets arrive on that
 * queue: with a pool no bigger than the fill rings, the quiet side of a fwd pair would
 * hoard every frame and starve the other. Each fill ring gets a fair share of its
 * domain's pool instead, and a pool too small for one batch per socket in each place
 * is refused.
 */
int eng_dom_fill_cap(struct engine *e, struct eng_dom *d)
{
	struct eng_config *c = &e->cfg;
	__u32 min;
	__u64 share;

	d->fill_cap = c->fill_ring;
	if (!d->nrx)
		return 0;
	/* One batch in each fill ring and one in flight on each TX ring. */
	min = 2 * d->nrx * c->batch;
	if (d->frames < min)
		return eng_refuse(
			e, -EINVAL,
			"--frames %u is too few for %u receiving socket(s)%s at --batch %u: at least %u (a batch in each fill ring and one in flight), or lower --batch",
			d->frames, d->nrx, e->ndoms > 1 ? " in one UMEM" : "", c->batch, min);
	share = d->frames / d->nrx;
	if (d->nrx > 1 && share < d->fill_cap)
		d->fill_cap = (__u32)share;
	return 0;
}

int eng_dom_assign(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	const struct eng_mem_cfg *m = c->mem;
	__u32 i;
	int err = 0;

	if (m->umem == ENG_UMEM_PER_PORT && c->tap)
		return eng_refuse(
			e, -EINVAL,
			"--host-tap needs --umem shared: its io_uring registers one UMEM (drop --umem per-port)");
	e->ndoms = m->umem == ENG_UMEM_PER_PORT ? c->nports : 1;
	e->dom = calloc(e->ndoms, sizeof(*e->dom));
	if (!e->dom)
		return ut_say(-ENOMEM, "out of memory");
	for (i = 0; i < e->nworkers; i++) {
		e->workers[i].wd = calloc(e->ndoms, sizeof(*e->workers[i].wd));
		if (!e->workers[i].wd)
			return ut_say(-ENOMEM, "out of memory");
	}
	for (i = 0; i < e->ndoms; i++)
		e->dom[i].id = i;
	for (i = 0; i < c->nports; i++)
		e->ports[i].dom = &e->dom[m->umem == ENG_UMEM_PER_PORT ? i : 0];
	for (i = 0; i < e->nq; i++) {
		struct eng_q *q = &e->qs[i];
		struct eng_dom *d = q->port->dom;
		struct eng_wdom *wd = &q->w->wd[d->id];

		q->dom = d;
		q->wd = wd;
		d->nq++;
		d->nrx += c->mode->needs_rx;
		if (!wd->d) {
			wd->d = d;
			wd->rank = d->nworkers++;
		}
	}
	for (i = 0; i < e->ndoms && !err; i++) {
		struct eng_dom *d = &e->dom[i];
		__u32 per_q = c->mode->needs_rx ? c->fill_ring + c->tx_ring : c->tx_ring;

		/* A dealer holds up to 4 shares of a batch per channel (xpile/deal.h). */
		d->frames = m->frames ? m->frames :
					d->nq * per_q +
						d->nworkers * (m->cache + c->batch +
							       4 * (c->batch > 32 ? c->batch : 32));
		err = eng_dom_fill_cap(e, d);
	}
	return err;
}

/* The arena of NUMA node @node (-1: none), created on first use, sized @want bytes:
 * every large buffer (each UMEM, later the buffers registered with io_uring) is carved
 * from the arena of its node. */
struct xp_arena *eng_node_arena(struct engine *e, int node, __u64 want, enum xp_hugepages hp)
{
	struct xp_arena_opts ao = { .sz = sizeof(ao) };
	__u32 i;

	for (i = 0; i < e->narenas; i++)
		if (e->arenas[i].node == node)
			return e->arenas[i].a;
	if (e->narenas == ENG_MAX_PORTS)
		return NULL;
	/* Twice the need: address space only, so a second generation of the UMEMs (a hot
	 * handover) fits beside the first. */
	ao.size = 2 * want;
	ao.hugepages = hp;
	ao.numa_node = node;
	if (xp_arena_create(&ao, &e->arenas[e->narenas].a))
		return NULL;
	e->arenas[e->narenas].node = node;
	return e->arenas[e->narenas++].a;
}

int eng_carve(struct engine *e, int node, __u64 bytes, struct xp_arena_buf *out)
{
	struct xp_arena *a = eng_node_arena(
		e, node, bytes, e->page_size == XP_PAGE_2M ? XP_HUGE_REQUIRE : XP_HUGE_NEVER);

	return a ? xp_arena_alloc(a, bytes, 0, out) : -ENOMEM;
}

void eng_topology(struct engine *e, struct xp_topology *t)
{
	const struct eng_mem_cfg *c = e->cfg.mem;
	int found;

	if (c->channels && c->ranks) {
		snprintf(e->topo_note, sizeof(e->topo_note), "from --channels and --ranks");
	} else {
		found = xp_topology_probe(NULL, t, e->topo_note, sizeof(e->topo_note));
		if (found < 0)
			snprintf(e->topo_note, sizeof(e->topo_note), "probe failed: %s",
				 strerror(-found));
		if (c->channels || c->ranks) {
			size_t k = strlen(e->topo_note);

			snprintf(e->topo_note + k, sizeof(e->topo_note) - k, "; --%s %u wins",
				 c->channels ? "channels" : "ranks",
				 c->channels ? c->channels : c->ranks);
		}
		/* Said with the ready line, so a start-up error stays one line. */
		e->topo_guessed = found < 0 ||
				  (!c->channels && !(found & XP_TOPO_FOUND_CHANNELS)) ||
				  (!c->ranks && !(found & XP_TOPO_FOUND_RANKS));
	}
	if (c->channels)
		t->channels = c->channels;
	if (c->ranks)
		t->ranks = c->ranks;
}

static int layout_of(struct engine *e, struct xp_layout_opts *lo, __u32 nframes,
		     struct xp_layout *out)
{
	const struct eng_mem_cfg *c = e->cfg.mem;
	int err;

	lo->nframes = nframes;
	err = xp_layout_compute(lo, out);
	if (err)
		return ut_say(
			err,
			"bad layout (--frame-size %u --headroom %u --frames %u): see the message above",
			c->frame_size, c->headroom, nframes);
	return 0;
}

/*
 * No mlock: XDP_UMEM_REG pins every UMEM page (pin_user_pages(FOLL_LONGTERM)) and
 * charges it to RLIMIT_MEMLOCK itself, so a lock would only charge the pages a second
 * time (lib/xsk.c names the fix when registration hits the limit).
 */
int eng_dom_memory(struct engine *e)
{
	struct eng_config *cfg = &e->cfg;
	const struct eng_mem_cfg *c = cfg->mem;
	struct xp_layout_opts lo = { .sz = sizeof(lo) };
	__u64 total = 0, need2m = 0;
	__u32 page = XP_PAGE_4K, i;
	int err;

	if (e->take_over) /* the UMEMs are the old engine's, mapped by the handover stage */
		return 0;
	lo.frame_size = c->frame_size;
	lo.headroom = c->headroom;
	lo.kind = c->layout;
	eng_topology(e, &lo.topo);
	if (c->hugepages != XP_HUGE_NEVER) {
		long avail = xp_hugepages_free();

		lo.page_size = XP_PAGE_2M;
		for (i = 0; i < e->ndoms; i++) {
			err = layout_of(e, &lo, e->dom[i].frames, &e->dom[i].layout);
			if (err)
				return err;
			need2m += e->dom[i].layout.area_size;
		}
		if (c->hugepages == XP_HUGE_REQUIRE || avail >= (long)(need2m / XP_PAGE_2M))
			page = XP_PAGE_2M;
		else {
			/* Said once set-up succeeded (print_sockets()). */
			e->huge_free = avail > 0 ? avail : 0;
			e->huge_need = (__u32)(need2m / XP_PAGE_2M);
			e->huge_want = xp_hugepages_wanted(need2m);
		}
	}
	lo.page_size = page;
	for (i = 0; i < e->ndoms; i++) {
		struct eng_dom *d = &e->dom[i];
		int node = -1;

		err = layout_of(e, &lo, d->frames, &d->layout);
		if (err)
			return err;
		total += d->layout.area_size;
		/* The domain's first port says the node (per-port: its only one). */
		for (__u32 p = 0; p < cfg->nports; p++)
			if (e->ports[p].dom == d) {
				if (xp_numa_node_of_ifname(e->ports[p].ifname, &node) || node < 0)
					node = -1;
				break;
			}
		d->node = node;
	}
	/* Every frame is touched at start: UMEMs larger than the memory there is would
	 * only end in the OOM killer. */
	{
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		__u64 phys = pages > 0 && psz > 0 ? (__u64)pages * (__u64)psz : 0;
		const struct xp_layout *l = &e->dom[0].layout;

		if (phys && total > phys)
			return eng_refuse(
				e, -ENOMEM,
				"--frames %u needs %.1f GiB of UMEM (%u UMEM(s) of %u frames of %u bytes, %u per %u KiB page since a frame may not cross a page) but the machine has %.1f GiB; use fewer --frames (the default fits the rings) or 2 MiB hugepages (--hugepages require)",
				c->frames ? c->frames : l->nframes, total / 1073741824.0, e->ndoms,
				l->nframes, c->frame_size, l->frames_per_page, page / 1024,
				phys / 1073741824.0);
	}
	e->page_size = page;
	/* Each node's arena is sized once for every UMEM it will hold. */
	for (i = 0; i < e->ndoms; i++) {
		__u64 want = 0;

		for (__u32 k = 0; k < e->ndoms; k++)
			if (e->dom[k].node == e->dom[i].node)
				want += e->dom[k].layout.area_size;
		if (!eng_node_arena(e, e->dom[i].node, want,
				    page == XP_PAGE_2M ? XP_HUGE_REQUIRE : XP_HUGE_NEVER)) {
			if (page ==
			    XP_PAGE_2M) /* the library named the pages missing and the sysctl */
				return -ENOMEM;
			return ut_say(-ENOMEM, "cannot reserve %llu bytes for the UMEM arena",
				      (unsigned long long)want);
		}
	}
	for (i = 0; i < e->ndoms; i++) {
		struct eng_dom *d = &e->dom[i];
		__u64 size = d->layout.area_size;

		err = eng_carve(e, d->node, size, &d->buf);
		if (err) {
			if (page == XP_PAGE_2M) /* said by the library */
				return err;
			return ut_say(err, "cannot allocate %llu bytes of UMEM: %s",
				      (unsigned long long)size, strerror(-err));
		}
		/* d->mem describes the UMEM itself: the carve, on the arena's memfd. */
		d->mem = *xp_arena_mem(eng_node_arena(e, d->node, size, XP_HUGE_NEVER));
		d->mem.base = d->buf.base;
		d->mem.size = d->buf.size;
		d->mem_ok = true;
		d->unaligned = d->layout.umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG;
	}
	return 0;
}

/*
 * M3 per-core containers: worker i of a domain starts with slice i of its fill order
 * (xp_layout_core_slice()), which covers every channel and cache set evenly. Every
 * frame leaves the pool and goes back to its worker's slice: the head of the slice into
 * the dealer's channel stacks, last frame first so its first frames are dealt first,
 * the rest into the worker's cache, which flushes what it cannot hold to its home
 * stripe. Frames in a dealer or a cache are free frames: the ledger does not change.
 */
int eng_dom_deal(struct engine *e, struct eng_dom *d)
{
	__u32 n = d->layout.nframes, first, count, i, k, step;
	__u64 *all = calloc(n, sizeof(__u64));
	int err = 0;

	if (!all)
		return ut_say(-ENOMEM, "out of memory");
	if (xp_pool_get(d->pool, all, n)) {
		free(all);
		return ut_say(
			-EIO,
			"cannot take the %u frames out of the pool for the workers' M3 slices", n);
	}
	/* The same frames, in fill order, are d->handles; those a ring holds (a handover's)
	 * stay out of the pool. */
	for (i = 0; i < e->nworkers && !err; i++) {
		struct eng_wdom *wd = &e->workers[i].wd[d->id];
		__u32 head, nfree = 0;

		if (!wd->d)
			continue;
		xp_layout_core_slice(&d->layout, d->nworkers, wd->rank, &first, &count);
		wd->slice_first = first;
		wd->slice_count = count;
		for (k = 0; k < count; k++)
			if (xp_ledger_state_of(d->ledger, d->handles[first + k]) == XP_PLACE_FREE)
				all[nfree++] = d->handles[first + k];
		/* The slice's head fits the dealer's stacks without a spill (a run of it is
		 * within 1 of even per channel); the rest waits in the cache and the home
		 * stripe, in order, for the dealer's pulls. */
		head = (wd->deal->cap - 2) * wd->deal->npresent;
		head = head < nfree ? head : nfree;
		for (k = nfree; k > head && !err; k -= step) {
			__u64 buf[64];

			step = k - head < 64 ? k - head : 64;
			for (__u32 j = 0; j < step; j++)
				buf[j] = all[k - 1 - j];
			err = xp_cache_put(wd->cache, buf, step);
		}
		for (k = head; k > 0 && !err; k -= step) {
			__u64 buf[64];

			step = k < 64 ? k : 64;
			for (__u32 j = 0; j < step; j++)
				buf[j] = all[k - 1 - j];
			err = xp_deal_put(wd->deal, buf, step);
		}
	}
	free(all);
	if (err)
		return ut_say(err, "cannot hand worker %u its M3 slice: %s", i - 1, strerror(-err));
	return 0;
}

static int dom_frames(struct engine *e, struct eng_dom *d)
{
	const struct eng_mem_cfg *c = e->cfg.mem;
	__u32 batch = e->cfg.batch;
	struct xp_pool_opts po = { .sz = sizeof(po) };
	struct xp_ledger_opts lo = { .sz = sizeof(lo) };
	struct xp_umem_opts uo = { .sz = sizeof(uo) };
	__u32 n = d->layout.nframes, i;
	int err;

	d->handles = calloc(n, sizeof(__u64));
	if (!d->handles)
		return ut_say(-ENOMEM, "out of memory");
	err = xp_layout_fill_order(&d->layout, d->nworkers, c->m3_seed, d->handles);
	if (err)
		return ut_say(err, "fill order failed: %s", strerror(-err));
	po.backend = c->pool_backend;
	po.flags = c->ledger_debug ? XP_POOL_F_DEBUG : 0;
	po.umem_size = d->layout.area_size;
	po.max_caches = d->nworkers;
	/* One stripe per worker: cache i's home is stripe i (creation order, the rank), so
	 * what a worker flushes, it gets back: its M3 slice stays its own. */
	po.stripes = d->nworkers < XP_PILE_STRIPES_MAX ? d->nworkers : XP_PILE_STRIPES_MAX;
	err = xp_pool_create(d->handles, n, &po, &d->pool);
	if (err)
		return ut_say(err, "cannot create the frame pool: see the message above");
	lo.handles = d->handles;
	lo.nframes = n;
	lo.max_accts = d->nworkers + 1;
	lo.debug = c->ledger_debug;
	lo.handle_of = handle_of;
	lo.ctx = &d->layout;
	err = xp_ledger_create(&lo, &d->ledger);
	if (err)
		return ut_say(err, "cannot create the frame ledger: see the message above");
	/* In rank order: the pool's stripes and the ledger's accounts follow creation. */
	for (__u32 r = 0; r < d->nworkers; r++) {
		for (i = 0; i < e->nworkers; i++) {
			struct eng_worker *w = &e->workers[i];
			struct eng_wdom *wd = &w->wd[d->id];
			struct xp_deal_opts dop = { .sz = sizeof(dop), .max_get = batch };

			if (!wd->d || wd->rank != r)
				continue;
			/* Each core its own stream; 0 stays 0 (LIFO). */
			if (c->m3_seed)
				dop.seed = c->m3_seed + 0x9e3779b97f4a7c15ull * (i + 1) +
					   0x632be59bd9b4e019ull * d->id;
			err = xp_cache_create(d->pool, c->cache, &wd->cache)		     ?:
				      xp_deal_create(&d->layout, wd->cache, &dop, &wd->deal) ?:
				      xp_ledger_acct_new(d->ledger, &wd->acct);
			if (err)
				return ut_say(err, "cannot create the cache of core %d", w->core);
		}
	}
	if (e->take_over) /* dealt and mapped at the handover (handover_take.c) */
		return 0;
	err = eng_dom_deal(e, d);
	if (err)
		return err;
	uo.area = d->mem.base;
	uo.size = d->layout.area_size;
	uo.chunk_size = d->layout.chunk_size;
	uo.headroom = d->layout.headroom;
	uo.flags = d->layout.umem_flags;
	{ /* --uds with /xsk_socket: registered on a socket the agent made (uds.c) */
		int ifindex;

		uo.socket_fd = eng_uds_take(e, d, &ifindex);
		uo.socket_given = uo.socket_fd >= 0;
	}
	return xp_umem_create(&uo, &d->umem); /* a failure is logged by the library */
}

int eng_dom_frames(struct engine *e)
{
	for (__u32 i = 0; i < e->ndoms; i++) {
		int err = dom_frames(e, &e->dom[i]);

		if (err)
			return err;
	}
	return 0;
}

void eng_dom_caches_destroy(struct engine *e)
{
	for (__u32 i = 0; i < e->nworkers; i++) {
		for (__u32 k = 0; k < e->ndoms; k++) {
			struct eng_wdom *wd = &e->workers[i].wd[k];

			xp_deal_destroy(wd->deal);
			wd->deal = NULL;
			if (wd->cache)
				xp_cache_destroy(wd->cache);
			wd->cache = NULL;
		}
	}
}

void eng_dom_frames_free(struct engine *e)
{
	eng_dom_caches_destroy(e);
	for (__u32 i = 0; i < e->ndoms; i++) {
		struct eng_dom *d = &e->dom[i];

		if (d->umem && xp_umem_destroy(d->umem))
			ut_say(0, "UMEM %u still in use at exit", i);
		d->umem = NULL;
		xp_ledger_destroy(d->ledger);
		d->ledger = NULL;
		xp_pool_destroy(d->pool);
		d->pool = NULL;
		free(d->handles);
		d->handles = NULL;
		free(d->starts);
		d->starts = NULL;
	}
}

void eng_dom_memory_free(struct engine *e)
{
	for (__u32 i = 0; i < e->ndoms; i++) {
		struct eng_dom *d = &e->dom[i];

		/* Handed over: the successor maps these pages; freeing the carve would punch
		 * them out of the memfd under it (the arena's unmap and close leave them). */
		if (d->mem_ok && !e->hands_off)
			xp_arena_free(eng_node_arena(e, d->node, 0, XP_HUGE_NEVER), &d->buf);
		d->mem_ok = false;
		if (d->imported && d->mem.fd >= 0) /* its mapping went with the UMEM */
			close(d->mem.fd);
		d->imported = false;
	}
	for (__u32 i = 0; i < e->narenas; i++)
		xp_arena_destroy(e->arenas[i].a);
	e->narenas = 0;
}

void eng_dom_free(struct engine *e)
{
	for (__u32 i = 0; i < e->nworkers; i++) {
		free(e->workers[i].wd);
		e->workers[i].wd = NULL;
	}
	free(e->dom);
	e->dom = NULL;
	e->ndoms = 0;
}

const char *eng_dom_tag(const struct engine *e, const struct eng_dom *d, bool json)
{
	static char tag[32];

	if (json)
		snprintf(tag, sizeof(tag), ",\"umem\":%u", d->id);
	else if (e->ndoms > 1)
		snprintf(tag, sizeof(tag), " (UMEM %u)", d->id);
	else
		tag[0] = 0;
	return tag;
}
