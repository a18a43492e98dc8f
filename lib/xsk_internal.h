/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lib/xsk.c and lib/handover_xsk.c share and no caller sees: the UMEM as the
 * library holds it, and the ring mapping both a new socket and an imported one use.
 */
#ifndef XPILE_XSK_INTERNAL_H
#define XPILE_XSK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/if_xdp.h>

#include "xpile/xsk.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

struct xp_umem {
	int fd; /* socket the UMEM is registered on; -1 once its xp_xsk closed it */
	bool fd_taken; /* the first socket uses fd as its own */
	bool bound; /* first socket bound: later ones may share */
	bool need_wakeup; /* what the first socket bound with; shared ones inherit it */
	bool sg;
	int owner_fd; /* fd of the bound socket others share */
	unsigned int refs;
	void *area;
	__u64 size;
	__u32 chunk_size;
	__u32 headroom;
	__u32 flags;
	bool area_mapped; /* imported: the mapping of the memfd is ours to unmap */
};

bool xp__pow2(__u32 v);
/* Maps ring @r of socket @fd (@size entries of @entry bytes at page offset @pgoff) and
 * caches its indices: 0 or -errno. */
int xp__ring_map(int fd, struct xp_ring *r, const struct xdp_ring_offset *off, __u32 size,
		 size_t entry, __u64 pgoff);
void xp__ring_unmap(struct xp_ring *r);

#endif /* XPILE_XSK_INTERNAL_H */
