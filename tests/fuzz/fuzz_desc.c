// SPDX-License-Identifier: BSD-3-Clause
/*
 * The trust boundary with the kernel as the library draws it (xpile/desc.h): an RX
 * descriptor or a completion address, fed random and frame-derived values against a real
 * UMEM geometry from xp_layout_compute() and a real ledger, is taken exactly when it
 * points inside one frame the ledger has in fill (RX) or tx (completion), at that frame's
 * start, and its bytes lie in that frame. A frame is taken once: given twice, the second
 * is refused. The engine's ring moves (user/rings.c) make exactly these calls per
 * descriptor, with the frame starts table of xp_desc_starts_fill().
 *
 * Input: 8 bytes of geometry (kind, frame size, headroom, frames, page size, packing,
 * batch; the mode byte: completions or RX, a debug ledger or not, which frames are in
 * fill), then 9 to 13 bytes per descriptor.
 */
#include "fuzz.h"
#include "xpile/desc.h"
#include "xpile/layout.h"
#include "xpile/ledger.h"
#include "xpile/log.h"

#define RING 256
#define MAX_FRAMES 1024

static __u8 in_fill[MAX_FRAMES]; /* RX: frames the ledger has in fill, as the oracle sees */

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

	d->options = sel & 0x80 ? 1 : 0; /* XDP_PKT_CONTD: the check ignores it */
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

/* Every frame to fill, then @pick says which go back to free: real frames that were
 * never posted, which the kernel has no business giving back. */
static void fill_frames(const struct xp_layout *l, struct xp_ledger_acct *a, __u8 pick)
{
	for (__u32 i = 0; i < l->nframes; i++) {
		__u64 h = xp_layout_frame(l, i);
		bool keep = !pick || (i * 2654435761u >> 24) % 8 >= (pick & 7u);

		xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, &h, 1);
		in_fill[i] = 1;
		if (!keep) {
			xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_FREE, &h, 1);
			in_fill[i] = 0;
		}
	}
}

/* The library's whole RX check, as the engine makes it per descriptor. */
static long rx_take(const struct xp_layout *l, struct xp_ledger_acct *a, const __u32 *starts,
		    const struct xdp_desc *d)
{
	if (!xp_desc_rx_ok(l, d))
		return -1;
	return xp_desc_frame(a, starts, xp_layout_handle(l, d->addr), XP_PLACE_FILL);
}

static void fuzz_rx(struct fuzz_in *in, const struct xp_layout *l, struct xp_ledger_acct *a,
		    const __u32 *starts, __u8 pick)
{
	fill_frames(l, a, pick);
	for (__u32 n = 0; in->n && n < RING; n++) {
		struct xdp_desc d;
		bool want;
		long s;

		gen_desc(in, l, &d);
		/* Every frame-exact descriptor passes the layout half. */
		FUZZ_CHECK(!desc_valid(l, &d) || xp_desc_rx_ok(l, &d),
			   "xp_desc_rx_ok refused a valid RX desc addr %#llx len %u",
			   (unsigned long long)d.addr, d.len);
		want = desc_valid(l, &d) && in_fill[frame_idx(l, d.addr)];
		s = rx_take(l, a, starts, &d);
		FUZZ_CHECK_KNOWN(desc_tag(l, &d), s < 0 || want,
				 "accepted RX desc addr %#llx len %u: not inside one frame in fill "
				 "(area %llu, chunk %u, stride %u, %u frames, %s)",
				 (unsigned long long)d.addr, d.len,
				 (unsigned long long)l->area_size, l->chunk_size, l->stride,
				 l->nframes, l->umem_flags ? "unaligned" : "aligned");
		FUZZ_CHECK_KNOWN("desc-refused", s >= 0 || !want,
				 "valid RX desc addr %#llx len %u of a frame in fill refused",
				 (unsigned long long)d.addr, d.len);
		if (s < 0)
			continue;
		FUZZ_CHECK((__u64)s == xp_layout_handle(l, d.addr) >> a->shift,
			   "xp_desc_frame returned slot %ld for handle %#llx", s,
			   (unsigned long long)xp_layout_handle(l, d.addr));
		/* Taken: the engine hands it to the application; a second look refuses it. */
		__u64 h = xp_layout_handle(l, d.addr);

		xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, &h, 1);
		in_fill[frame_idx(l, d.addr)] = 0;
		FUZZ_CHECK(rx_take(l, a, starts, &d) < 0, "frame %#llx taken twice",
			   (unsigned long long)h);
	}
}

static void fuzz_complete(struct fuzz_in *in, const struct xp_layout *l, struct xp_ledger_acct *a,
			  const __u32 *starts)
{
	__u64 taken[RING];
	bool back[RING] = { false };
	__u32 ntaken = l->nframes < 64 ? l->nframes : 64;

	/* Frames in flight on TX, as the engine's send leaves them. */
	for (__u32 i = 0; i < ntaken; i++)
		taken[i] = xp_layout_frame(l, (__u32)((__u64)i * l->nframes / ntaken));
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_TX, taken, ntaken);
	for (__u32 n = 0; in->n && n < RING; n++) {
		__u8 sel = fuzz_u8(in);
		__u32 r = fuzz_u32(in);
		__u64 addr, h;
		int inflight = -1;
		long s;

		if (sel & 1) /* a frame sent, with the offset its TX descriptor carried */
			addr = xp_layout_tx_addr(l, taken[r % ntaken], r % l->chunk_size);
		else
			addr = sel & 2 ? (__u64)r << (sel >> 2 & 31) : l->area_size - (r % 8192);
		h = xp_layout_handle(l, addr);
		for (__u32 i = 0; i < ntaken; i++)
			if (frame_ok(l, h) && taken[i] == h)
				inflight = (int)i;
		s = h < l->area_size ? xp_desc_frame(a, starts, h, XP_PLACE_TX) : -1;
		FUZZ_CHECK_KNOWN("desc-comp-not-frame", s < 0 || (inflight >= 0 && !back[inflight]),
				 "completion address %#llx taken: no frame in tx (area %llu, %s)",
				 (unsigned long long)addr, (unsigned long long)l->area_size,
				 l->umem_flags ? "unaligned" : "aligned");
		FUZZ_CHECK(s >= 0 || inflight < 0 || back[inflight],
			   "completion of frame %#llx in tx refused", (unsigned long long)h);
		if (s < 0)
			continue;
		xp_ledger_move(a, XP_PLACE_TX, XP_PLACE_FREE, &h, 1);
		back[inflight] = true;
	}
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
	struct xp_ledger_opts lo = { .sz = sizeof(lo) };
	struct xp_ledger *ledger = NULL;
	struct xp_ledger_acct *a = NULL;
	struct xp_ledger_report rep;
	struct xp_layout l;
	__u64 *handles = NULL;
	__u32 *starts = NULL;
	__u8 mode;

	if (geometry(&in, &l))
		return 0;
	mode = fuzz_u8(&in);
	(void)fuzz_u8(&in); /* the batch size of the corpus' format: the check is per descriptor */
	handles = calloc(l.nframes, sizeof(*handles));
	if (!handles)
		return 0;
	for (__u32 i = 0; i < l.nframes; i++)
		handles[i] = xp_layout_frame(&l, i);
	lo.handles = handles;
	lo.nframes = l.nframes;
	lo.debug = !(mode & 2);
	lo.handle_of = handle_of;
	lo.ctx = &l;
	FUZZ_CHECK(!xp_ledger_create(&lo, &ledger), "ledger");
	FUZZ_CHECK(!xp_ledger_acct_new(ledger, &a), "acct");
	if (xp_desc_starts_needed(&l, a)) {
		starts = malloc(a->nslots * sizeof(*starts));
		FUZZ_CHECK(starts, "starts");
		xp_desc_starts_fill(&l, a, starts);
	}
	memset(in_fill, 0, sizeof(in_fill));
	if (mode & 1)
		fuzz_complete(&in, &l, a, starts);
	else
		fuzz_rx(&in, &l, a, starts, mode >> 2);
	/* Only the moves the checks allowed were made: a debug ledger saw each match. */
	xp_ledger_audit(ledger, NULL, &rep);
	FUZZ_CHECK(!rep.bad_transitions, "%llu bad transitions after the checks' moves",
		   (unsigned long long)rep.bad_transitions);
	xp_ledger_destroy(ledger);
	free(starts);
	free(handles);
	return 0;
}
