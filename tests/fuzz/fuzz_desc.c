// SPDX-License-Identifier: BSD-3-Clause
/*
 * The engine's trust boundary with the kernel: RX descriptors (eng_rx_ring) and
 * completion addresses (eng_complete) in user/rings.c, fed random and frame-derived values
 * against a real UMEM geometry from xp_layout_compute().
 *
 * The rule (rings.c: "a descriptor from the kernel is trusted only once it points
 * inside one frame ... and that frame is one we gave it"): an accepted RX descriptor's
 * handle is the start of a real frame (xp_layout_frame_index() and back) that the
 * ledger has in fill, and its bytes [data, data + len) lie in that frame; an accepted
 * completion address maps to a real frame the ledger has in tx. A frame is taken once:
 * given twice, the second is bad. Everything else is refused and counted once in
 * bad_descs. Across calls every descriptor is consumed once: returned
 * (in ring order) or counted bad, and eng_rx_ring returns whole packets (XDP_PKT_CONTD
 * chains) unless a chain is longer than the batch.
 *
 * Input: 8 bytes of geometry (kind, frame size, headroom, frames, page size, packing,
 * batch; the mode byte: completions or RX, a debug ledger or not, which frames are in
 * fill), then 11 bytes per descriptor.
 */
#include "../../user/rings.c"

/* The ring moves (user/rings.c) alone: this harness's worker has no capture ring
 * (w->cap stays NULL, so eng_rx_ring() never calls the capture hook, whose ring code,
 * tools/util/capring.c, is not linked in). */
void ut_cap_batch(struct ut_cap_ring *r, __u32 ifid, const struct xp_layout *l, void *base,
		  __u32 queue, const struct xdp_desc *d, __u32 n, unsigned int dir)
{
	(void)r, (void)ifid, (void)l, (void)base, (void)queue, (void)d, (void)n, (void)dir;
}

#include "fuzz.h"
#include "xpile/log.h"

#define RING 256
#define MAX_FRAMES 1024

static struct eng_dom dom0;
static struct eng_wdom wdom0;
static struct engine eng = { .dom = &dom0, .ndoms = 1 };
static struct eng_worker wk = { .wd = &wdom0 };
static struct eng_q q;
static __u8 in_fill[MAX_FRAMES]; /* RX: frames the ledger has in fill, as the oracle sees */
static struct xp_xsk xsk;
static struct xdp_desc rxring[RING];
static __u64 compring[RING];
static struct xdp_desc txring[RING];
static __u32 rx_prod, rx_cons, rx_flags, c_prod, c_cons, c_flags, t_prod, t_cons, t_flags;

static __u64 handle_of(void *ctx, __u64 addr)
{
	return xp_layout_handle(ctx, addr);
}

/* The rule, from the layout alone. */
static bool frame_ok(const struct xp_layout *l, __u64 h)
{
	__u32 idx;

	return !xp_layout_frame_index(l, h, &idx) && xp_layout_frame(l, idx) == h &&
	       h + l->chunk_size <= l->area_size;
}

static bool desc_valid(const struct xp_layout *l, const struct xdp_desc *d)
{
	__u64 h = xp_layout_handle(l, d->addr), data = xp_layout_data(l, d->addr);

	return frame_ok(l, h) && data >= h && data + d->len <= h + l->chunk_size;
}

static const char *desc_tag(const struct xp_layout *l, const struct xdp_desc *d)
{
	__u64 data = xp_layout_data(l, d->addr);

	return data + d->len > l->area_size ? "desc-past-umem" : "desc-not-frame";
}

static void ring_init(struct xp_ring *r, void *mem, __u32 *prod, __u32 *cons, __u32 *flags)
{
	memset(r, 0, sizeof(*r));
	r->ring = mem;
	r->size = RING;
	r->mask = RING - 1;
	r->producer = prod;
	r->consumer = cons;
	r->flags = flags;
	*prod = *cons = *flags = 0;
}

static int geometry(struct fuzz_in *in, struct xp_layout *l)
{
	static const __u32 sizes[] = { 2048, 4096, 2112, 2176, 3008, 3072, 4032 };
	struct xp_layout_opts o = { .sz = sizeof(o) };
	__u8 k = fuzz_u8(in);

	o.kind = k & 1 ? XP_LAYOUT_ALIGNED : XP_LAYOUT_INTERLEAVED;
	o.frame_size = o.kind == XP_LAYOUT_ALIGNED ?
			       (k & 2 ? 4096 : 2048) :
			       sizes[(k >> 1) % (sizeof(sizes) / sizeof(sizes[0]))];
	o.headroom = fuzz_u8(in) * 4;
	o.nframes = 1 + fuzz_u16(in) % MAX_FRAMES;
	o.page_size = k & 0x10 ? XP_PAGE_2M : XP_PAGE_4K;
	o.flags = k & 0x20 ? XP_LAYOUT_F_PACK : 0;
	o.topo.channels = 1 + (k >> 6);
	o.topo.l1_sets = 64;
	o.topo.l2_sets = 1024;
	return xp_layout_compute(&o, l);
}

/* One descriptor: frame-derived most of the time (the interesting edges), else raw. */
static void gen_desc(struct fuzz_in *in, const struct xp_layout *l, struct xdp_desc *d)
{
	__u8 sel = fuzz_u8(in);
	__u16 a = fuzz_u16(in), b = fuzz_u16(in);
	__u32 r32 = fuzz_u32(in);
	__u64 h = xp_layout_frame(l, a % l->nframes);
	__s32 off = (__s32)(b % (2 * l->chunk_size + 1)) - (__s32)l->chunk_size / 2;

	d->options = sel & 0x80 ? XDP_PKT_CONTD : 0;
	d->len = r32 % (l->chunk_size + 128);
	switch (sel & 7) {
	case 0: /* anything */
		d->addr = (__u64)r32 << 32 | (__u64)a << 16 | b;
		d->len = fuzz_u32(in);
		break;
	case 1: /* a frame and an offset, the way the kernel writes them */
	case 2:
		d->addr = xp_layout_tx_addr(l, h, (__u32)(off < 0 ? -off : off));
		break;
	case 3: /* a handle off the frame start */
		d->addr = xp_layout_tx_addr(l, h + off, l->data_off);
		break;
	case 4: /* the end of the UMEM */
		d->addr = l->area_size - (b % 4096);
		break;
	case 5: /* past the last frame */
		d->addr = xp_layout_frame(l, l->nframes - 1) + l->stride * (1 + a % 4) + off;
		break;
	case 6: /* offset bits with the handle bits overflowing */
		d->addr = h | (__u64)r32 << 32;
		break;
	default: /* exact frame start, data at data_off */
		d->addr = xp_layout_tx_addr(l, h, l->data_off);
		d->len = r32 % (l->chunk_size - l->data_off + 2);
		break;
	}
}

/* Index of the frame an accepted descriptor is: desc_valid() holds. */
static __u32 frame_idx(const struct xp_layout *l, __u64 addr)
{
	__u32 idx = 0;

	xp_layout_frame_index(l, xp_layout_handle(l, addr), &idx);
	return idx;
}

/* The frames the kernel may give back: those in fill; @pick says which of them are. */
static void fill_frames(const struct xp_layout *l, __u8 pick)
{
	__u64 h[64];
	__u32 k;

	memset(in_fill, 0, sizeof(in_fill));
	for (;;) {
		for (k = 64; k && xp_deal_get(wk.wd[0].deal, h, k);)
			k /= 2;
		if (!k)
			break;
		xp_ledger_move(wk.wd[0].acct, XP_PLACE_FREE, XP_PLACE_FILL, h, k);
		for (__u32 i = 0; i < k; i++)
			in_fill[frame_idx(l, h[i])] = 1;
	}
	/* Some stay free: frames that are real but were never posted. */
	for (__u32 i = 0; pick && i < l->nframes; i++) {
		if ((i * 2654435761u >> 24) % 8 >= (pick & 7))
			continue;
		h[0] = xp_layout_frame(l, i);
		xp_ledger_move(wk.wd[0].acct, XP_PLACE_FILL, XP_PLACE_FREE, h, 1);
		xp_deal_put(wk.wd[0].deal, h, 1);
		in_fill[i] = 0;
	}
}

static void fuzz_rx(struct fuzz_in *in, const struct xp_layout *l, __u32 batch, __u8 pick)
{
	struct xdp_desc want[RING], out[ENG_MAX_BATCH];
	__u32 n = 0, nvalid = 0, nbad = 0, got = 0, calls = 0, returned = 0;

	fill_frames(l, pick);
	ring_init(&xsk.rx, rxring, &rx_prod, &rx_cons, &rx_flags);
	while (in->n && n < RING) {
		gen_desc(in, l, &rxring[n]);
		/* The library's layout check (xpile/desc.h) lets every frame-exact one by. */
		FUZZ_CHECK(!desc_valid(l, &rxring[n]) || xp_desc_rx_ok(l, &rxring[n]),
			   "xp_desc_rx_ok refused a valid RX desc addr %#llx len %u",
			   (unsigned long long)rxring[n].addr, rxring[n].len);
		/* In ring order, as eng_rx_ring takes them: a frame once, while in fill. */
		if (desc_valid(l, &rxring[n]) && in_fill[frame_idx(l, rxring[n].addr)]) {
			in_fill[frame_idx(l, rxring[n].addr)] = 0;
			want[nvalid++] = rxring[n];
		} else {
			nbad++;
		}
		n++;
	}
	rx_prod = n;
	memset(&q.c, 0, sizeof(q.c));
	while (xsk.rx.cached_cons != n && calls++ < 4 * RING) {
		__u32 before = xsk.rx.cached_cons;
		__u32 k = eng_rx_ring(&wk, &q, out, batch), whole = k;

		FUZZ_CHECK(k <= batch, "eng_rx_ring returned %u of a batch of %u", k, batch);
		returned += k;
		for (__u32 i = 0; i < k; i++) {
			FUZZ_CHECK_KNOWN(
				desc_tag(l, &out[i]),
				desc_valid(l, &out[i]) && got < nvalid &&
					!memcmp(&out[i], &want[got], sizeof(out[i])),
				"accepted RX desc addr %#llx len %u: not inside one frame in fill "
				"(area %llu, chunk %u, stride %u, %u frames, %s)",
				(unsigned long long)out[i].addr, out[i].len,
				(unsigned long long)l->area_size, l->chunk_size, l->stride,
				l->nframes, l->umem_flags ? "unaligned" : "aligned");
			if (!desc_valid(l, &out[i]))
				continue;
			FUZZ_CHECK(got < nvalid && !memcmp(&out[i], &want[got], sizeof(out[i])),
				   "valid descriptor %u missing, duplicated or out of order", got);
			got++;
		}
		/* Whole packets, unless the batch is one chain that does not end in it. */
		if (k && (out[k - 1].options & XDP_PKT_CONTD))
			for (__u32 i = 0; i < k; i++)
				FUZZ_CHECK(
					out[i].options & XDP_PKT_CONTD,
					"batch ends inside a packet after a whole one (%u of %u)",
					i, k);
		(void)whole;
		FUZZ_CHECK(rx_cons == xsk.rx.cached_cons, "consumer not released");
		if (xsk.rx.cached_cons == before && !k)
			break;
	}
	FUZZ_CHECK(xsk.rx.cached_cons == n, "ring not drained: %u of %u consumed",
		   xsk.rx.cached_cons, n);
	FUZZ_CHECK_KNOWN("desc-refused", got == nvalid, "%u valid descriptors refused",
			 nvalid - got);
	/* Consumed once: returned or counted bad, never both, never twice. */
	FUZZ_CHECK_KNOWN("desc-bad-twice", returned + q.c.bad_descs == n,
			 "%u returned + bad_descs %llu != %u descriptors (%u bad; batch %u)",
			 returned, (unsigned long long)q.c.bad_descs, n, nbad, batch);
}

static void fuzz_complete(struct fuzz_in *in, const struct xp_layout *l)
{
	__u64 taken[RING];
	__u32 ntaken = 0, n = 0, nbad = 0, used = 0;

	ring_init(&xsk.comp, compring, &c_prod, &c_cons, &c_flags);
	ring_init(&xsk.tx, txring, &t_prod, &t_cons,
		  &t_flags); /* empty: eng_kick has nothing to do */
	/* Frames in flight on TX, as eng_tx leaves them. */
	ntaken = l->nframes < 64 ? l->nframes : 64;
	if (xp_deal_get(wk.wd[0].deal, taken, ntaken))
		return;
	xp_ledger_move(wk.wd[0].acct, XP_PLACE_FREE, XP_PLACE_TX, taken, ntaken);
	while (in->n && n < RING) {
		__u8 sel = fuzz_u8(in);
		__u32 r = fuzz_u32(in);
		__u64 addr;

		if (sel & 1 && used < ntaken) {
			/* a frame in flight, with the offset the TX descriptor carried */
			addr = xp_layout_tx_addr(l, taken[used++], r % l->chunk_size);
		} else if (sel & 1 && used) {
			/* a frame in flight given back twice */
			addr = xp_layout_tx_addr(l, taken[r % used], r % l->chunk_size);
			nbad++;
		} else {
			__u64 h;
			bool inflight = false;

			addr = sel & 2 ? (__u64)r << (sel >> 2 & 31) : l->area_size - (r % 8192);
			h = xp_layout_handle(l, addr);
			for (__u32 i = 0; i < ntaken; i++)
				inflight |= frame_ok(l, h) && taken[i] == h;
			if (inflight)
				continue; /* a frame in flight by chance: the kernel's to give */
			/* a real frame not in flight is not the kernel's to give either */
			nbad++;
		}
		compring[n++] = addr;
	}
	c_prod = n;
	q.tx_inflight = n;
	memset(&q.c, 0, sizeof(q.c));
	eng_complete(&wk, &q);
	struct xp_ledger_report rep;

	xp_ledger_audit(eng.dom[0].ledger, NULL, &rep);
	FUZZ_CHECK_KNOWN("desc-comp-not-frame", !rep.bad_transitions,
			 "a completion address that is no frame went back to the pool (%llu bad "
			 "transitions; area %llu, %s)",
			 (unsigned long long)rep.bad_transitions, (unsigned long long)l->area_size,
			 l->umem_flags ? "unaligned" : "aligned");
	FUZZ_CHECK_KNOWN("desc-comp-not-frame", q.c.bad_descs == nbad,
			 "bad_descs %llu, %u completion addresses were no frame",
			 (unsigned long long)q.c.bad_descs, nbad);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!getenv("FUZZ_VERBOSE"))
		xp_set_log_fn(NULL); /* the ledger's complaints are checked, not printed */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct eng_dom *dom = &eng.dom[0];
	struct eng_wdom *wd = &wk.wd[0];
	struct xp_layout *l = &dom->layout;
	__u64 *handles = NULL;
	struct xp_pool_opts po = { .sz = sizeof(po) };
	struct xp_ledger_opts lo = { .sz = sizeof(lo) };
	struct xp_deal_opts dop = { .sz = sizeof(dop), .max_get = ENG_MAX_BATCH };
	struct xp_pool *pool = NULL;
	__u8 mode, bsel;
	__u32 batch;

	if (geometry(&in, l))
		return 0;
	mode = fuzz_u8(&in);
	bsel = fuzz_u8(&in);
	batch = 1 + bsel % ENG_MAX_BATCH;
	handles = calloc(l->nframes, sizeof(*handles));
	if (!handles)
		return 0;
	for (__u32 i = 0; i < l->nframes; i++)
		handles[i] = xp_layout_frame(l, i);
	lo.handles = handles;
	lo.nframes = l->nframes;
	lo.debug = !(mode & 2);
	lo.handle_of = handle_of;
	lo.ctx = l;
	FUZZ_CHECK(!xp_pool_create(handles, l->nframes, &po, &pool), "pool");
	FUZZ_CHECK(!xp_ledger_create(&lo, &dom->ledger), "ledger");
	FUZZ_CHECK(!xp_cache_create(pool, 256, &wd->cache), "cache");
	FUZZ_CHECK(!xp_deal_create(l, wd->cache, &dop, &wd->deal), "deal");
	FUZZ_CHECK(!xp_ledger_acct_new(dom->ledger, &wd->acct), "acct");
	dom->unaligned = l->umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG;
	FUZZ_CHECK(!eng_dom_starts(dom, wd->acct), "starts");
	wd->d = dom;
	eng.cfg.batch = batch;
	wk.e = &eng;
	q.xsk = &xsk;
	q.w = &wk;
	q.dom = dom;
	q.wd = wd;
	xsk.need_wakeup = false;

	if (mode & 1)
		fuzz_complete(&in, l);
	else
		fuzz_rx(&in, l, batch, mode >> 2);

	xp_deal_destroy(wd->deal);
	xp_cache_destroy(wd->cache);
	xp_pool_destroy(pool);
	xp_ledger_destroy(dom->ledger);
	free(dom->starts);
	dom->starts = NULL;
	free(handles);
	return 0;
}
