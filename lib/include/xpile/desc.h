/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The trust boundary with the kernel: a descriptor from an RX ring or an address from a
 * completion ring is trusted only once it points inside one frame of the UMEM's layout
 * and that frame is one the owner gave the kernel (the ledger has it in fill, or in tx).
 * Inline: the engine's ring moves call these once per descriptor (user/rings.c).
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
