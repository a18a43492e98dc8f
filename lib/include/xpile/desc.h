/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The trust boundary with the kernel: a descriptor from an RX ring or an address from a
 * completion ring is trusted only once it points inside one frame of the UMEM's layout
 * and that frame is one the owner gave the kernel (the ledger has it in fill, or in tx).
 * Inline: the engine's ring moves call these once per descriptor (user/rings.c).
 *
 *   __u32 *starts = NULL;
 *   if (xp_desc_starts_needed(l, a)) {            // once, after the account exists
 *           starts = malloc(a->nslots * sizeof(*starts));
 *           xp_desc_starts_fill(l, a, starts);
 *   }
 *   ok = xp_desc_rx_ok(l, d) &&
 *        xp_desc_frame(a, starts, xp_layout_handle(l, d->addr), XP_PLACE_FILL) >= 0;
 */
#ifndef XPILE_DESC_H
#define XPILE_DESC_H

#include <stdbool.h>
#include <linux/if_xdp.h>
#include <linux/types.h>

#include "xpile/layout.h"
#include "xpile/ledger.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RX: @d's frame handle is the start of a slot inside the area, and its bytes
 * [data, data + len) lie in that frame. */
static inline bool xp_desc_rx_ok(const struct xp_layout *l, const struct xdp_desc *d)
{
	__u64 handle = xp_layout_handle(l, d->addr);
	__u64 data = xp_layout_data(l, d->addr);

	return handle <= l->area_size - l->chunk_size && data >= handle &&
	       data + d->len <= handle + l->chunk_size && d->len <= l->chunk_size;
}

/* Whether xp_desc_frame() needs a table of frame starts: unaligned chunks put a frame
 * start anywhere in its ledger slot, and a slot wider than a chunk (one frame alone
 * made it so) holds a start that is not its own first byte. Aligned chunks of a
 * power-of-two size need none: a slot is a chunk, its start the handle. */
static inline bool xp_desc_starts_needed(const struct xp_layout *l, const struct xp_ledger_acct *a)
{
	return (l->umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG) ||
	       (1ull << a->shift) != l->chunk_size;
}

/* Fills @starts (@a->nslots entries) with the low 32 bits of each slot's frame start,
 * ~0 where a slot holds none (frames are 64-byte aligned, so none starts there). */
static inline void xp_desc_starts_fill(const struct xp_layout *l, const struct xp_ledger_acct *a,
				       __u32 *starts)
{
	for (__u64 s = 0; s < a->nslots; s++)
		starts[s] = ~0u;
	for (__u32 i = 0; i < l->nframes; i++) {
		__u64 h = xp_layout_frame(l, i);

		starts[h >> a->shift] = (__u32)h;
	}
}

/*
 * The frame at handle @h (below the area size) is one the ledger account @a has in
 * place @p, and @h is exactly its start: unaligned chunks put a frame start anywhere in
 * its slot, so there @starts (the low 32 bits of each slot's frame start) says where;
 * NULL when a slot is a chunk. The state byte is the one every transition writes
 * already. Returns the slot, or -1.
 */
static inline long xp_desc_frame(const struct xp_ledger_acct *a, const __u32 *starts, __u64 h,
				 enum xp_place p)
{
	__u64 s = h >> a->shift;

	if (__builtin_expect(s >= a->nslots, 0))
		return -1;
	if (starts && starts[s] != (__u32)h)
		return -1;
	return __atomic_load_n(&a->state[s], __ATOMIC_RELAXED) == p ? (long)s : -1;
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_DESC_H */
