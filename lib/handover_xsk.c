// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hot handover of UMEMs and sockets (xpile/handover.h): the records an old engine sends
 * beside the fds, and the successor's side that maps what it received.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_internal.h"
#include "xsk_internal.h"
#include "xpile/handover.h"

int xp_umem_export(const struct xp_umem *u, __u64 offset, __u32 page_size, struct xp_umem_rec *out)
{
	if (!u || !out || !page_size || offset % page_size)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->offset = offset;
	out->size = u->size;
	out->chunk_size = u->chunk_size;
	out->headroom = u->headroom;
	out->flags = u->flags;
	out->page_size = page_size;
	return 0;
}

int xp_umem_import(int memfd, const struct xp_umem_rec *rec, struct xp_umem **out)
{
	struct xp_umem *u;
	struct stat st;
	void *m;

	if (memfd < 0 || !rec || !out || !rec->size || !rec->chunk_size || !rec->page_size ||
	    rec->offset % rec->page_size || fstat(memfd, &st) ||
	    rec->offset + rec->size > (__u64)st.st_size) {
		xp_err("umem: import: a record the memfd cannot back (offset %llu, size %llu)\n",
		       rec ? (unsigned long long)rec->offset : 0ull,
		       rec ? (unsigned long long)rec->size : 0ull);
		return -EINVAL;
	}
	/* The pages exist (the old owner's, pinned by the kernel): populating only builds
	 * this process's page tables, so the data path never faults. */
	m = mmap(NULL, rec->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, memfd,
		 (off_t)rec->offset);
	if (m == MAP_FAILED) {
		int err = -errno;

		xp_err("umem: import: mapping %llu bytes of the memfd: %s\n",
		       (unsigned long long)rec->size, strerror(-err));
		return err;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		munmap(m, rec->size);
		return -ENOMEM;
	}
	/* Registered long ago on a socket that is not ours to bind again: sockets come by
	 * xp_xsk_import() only. */
	u->fd = -1;
	u->owner_fd = -1;
	u->fd_taken = true;
	u->bound = true;
	u->area = m;
	u->area_mapped = true;
	u->size = rec->size;
	u->chunk_size = rec->chunk_size;
	u->headroom = rec->headroom;
	u->flags = rec->flags;
	*out = u;
	return 0;
}

int xp_xsk_export(const struct xp_xsk *x, struct xp_xsk_rec *out)
{
	if (!x || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out->ifname, x->ifname, sizeof(out->ifname));
	out->ifindex = (__u32)x->ifindex;
	out->queue = x->queue;
	out->rx_size = x->rx.size;
	out->tx_size = x->tx.size;
	out->fill_size = x->fill.size;
	out->comp_size = x->comp.size;
	out->flags = (x->zerocopy ? XP_XSK_REC_ZEROCOPY : 0) |
		     (x->need_wakeup ? XP_XSK_REC_NEED_WAKEUP : 0) |
		     (x->multi_buffer ? XP_XSK_REC_SG : 0);
	out->fill_prod = x->fill.cached_prod;
	out->rx_cons = x->rx.cached_cons;
	out->tx_prod = x->tx.cached_prod;
	out->comp_cons = x->comp.cached_cons;
	return 0;
}

int xp_xsk_import(struct xp_umem *u, int fd, const struct xp_xsk_rec *rec, struct xp_xsk **out)
{
	struct xdp_mmap_offsets off;
	socklen_t len = sizeof(off);
	int domain = 0, err;
	struct xp_xsk *x;

	if (!u || fd < 0 || !rec || !out || !xp__pow2(rec->rx_size) || !xp__pow2(rec->tx_size) ||
	    !xp__pow2(rec->fill_size) || !xp__pow2(rec->comp_size))
		return -EINVAL;
	len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) || domain != AF_XDP) {
		xp_err("xsk: import of %.16s queue %u: fd %d is not an AF_XDP socket\n",
		       rec->ifname, rec->queue, fd);
		return -ENOTSOCK;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->fd = fd;
	x->umem = u;
	x->ifindex = (int)rec->ifindex;
	x->queue = rec->queue;
	memcpy(x->ifname, rec->ifname, sizeof(x->ifname));
	x->ifname[sizeof(x->ifname) - 1] = 0;
	len = sizeof(off);
	if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len)) {
		err = -errno;
		goto fail;
	}
	/* A bound socket maps its rings again (the kernel allows it from XSK_BOUND on).
	 * The indices cached now are a first look: the old owner still runs; see
	 * xp_xsk_resync() for the ones to start from. */
	err = xp__ring_map(fd, &x->rx, &off.rx, rec->rx_size, sizeof(struct xdp_desc),
			   XDP_PGOFF_RX_RING);
	if (!err)
		err = xp__ring_map(fd, &x->tx, &off.tx, rec->tx_size, sizeof(struct xdp_desc),
				   XDP_PGOFF_TX_RING);
	if (!err)
		err = xp__ring_map(fd, &x->fill, &off.fr, rec->fill_size, sizeof(__u64),
				   XDP_UMEM_PGOFF_FILL_RING);
	if (!err)
		err = xp__ring_map(fd, &x->comp, &off.cr, rec->comp_size, sizeof(__u64),
				   XDP_UMEM_PGOFF_COMPLETION_RING);
	if (err)
		goto fail;
	x->zerocopy = rec->flags & XP_XSK_REC_ZEROCOPY;
	x->need_wakeup = rec->flags & XP_XSK_REC_NEED_WAKEUP;
	x->multi_buffer = rec->flags & XP_XSK_REC_SG;
	u->refs++;
	*out = x;
	return 0;
fail:
	xp_err("xsk: import of %s queue %u: cannot map its rings: %s\n", x->ifname, x->queue,
	       strerror(-err));
	xp__ring_unmap(&x->rx);
	xp__ring_unmap(&x->tx);
	xp__ring_unmap(&x->fill);
	xp__ring_unmap(&x->comp);
	free(x);
	return err;
}

int xp_xsk_resync(struct xp_xsk *x, const struct xp_xsk_rec *rec)
{
	struct xp_ring *r[4] = { &x->rx, &x->tx, &x->fill, &x->comp };

	/* Exact for both sides: a producer's free room is size - (prod - cons) from the
	 * kernel's consumer, a consumer's backlog prod - cons from the kernel's producer. */
	for (int i = 0; i < 4; i++) {
		r[i]->cached_prod = __atomic_load_n(r[i]->producer, __ATOMIC_ACQUIRE);
		r[i]->cached_cons = __atomic_load_n(r[i]->consumer, __ATOMIC_ACQUIRE);
	}
	/* Ours to produce (fill, TX) and consume (RX, completion): the old owner published
	 * everything it reserved and released everything it peeked. */
	if (rec && (x->fill.cached_prod != rec->fill_prod || x->tx.cached_prod != rec->tx_prod ||
		    x->rx.cached_cons != rec->rx_cons || x->comp.cached_cons != rec->comp_cons)) {
		xp_err("xsk: %s queue %u: ring indices differ from the old owner's (fill %u/%u, rx %u/%u, tx %u/%u, completion %u/%u): it was not between batches\n",
		       x->ifname, x->queue, x->fill.cached_prod, rec->fill_prod, x->rx.cached_cons,
		       rec->rx_cons, x->tx.cached_prod, rec->tx_prod, x->comp.cached_cons,
		       rec->comp_cons);
		return -EPROTO;
	}
	return 0;
}
