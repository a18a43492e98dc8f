// SPDX-License-Identifier: BSD-3-Clause
/*
 * AF_XDP sockets over the raw kernel API: libxdp 1.3 lacks the options this needs
 * (XDP_USE_SG, per-socket fill/completion sizes for shared UMEMs, busy-poll), and owning
 * the few syscalls keeps the ring layout under our control.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_internal.h"
#include "xsk_internal.h"
#include "opts_internal.h"
#include "xpile/users.h"
#include "xpile/xsk.h"

/* The kernel pins a UMEM and charges it to RLIMIT_MEMLOCK unless the process has
 * CAP_IPC_LOCK; over the limit it says ENOBUFS, which names neither. */
static void umem_reg_error(const struct xp_umem_opts *o, int err)
{
	struct rlimit rl;

	if ((err == ENOBUFS || err == ENOMEM || err == EPERM) && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < o->size) {
		xp_err("umem: RLIMIT_MEMLOCK is %llu bytes but the UMEM needs %llu (the kernel pins it); raise it (ulimit -l %llu, or LimitMEMLOCK=infinity in a systemd unit) or grant CAP_IPC_LOCK (run as root)\n",
		       (unsigned long long)rl.rlim_cur, (unsigned long long)o->size,
		       (unsigned long long)(o->size + 1023) / 1024 + 1024);
		return;
	}
	xp_err("umem: XDP_UMEM_REG of %llu bytes (chunk %u, headroom %u, flags %#x) failed: %s%s\n",
	       (unsigned long long)o->size, o->chunk_size, o->headroom, o->flags, strerror(err),
	       err == ENOBUFS || err == ENOMEM || err == EPERM ?
		       " (the UMEM is pinned: raise `ulimit -l` or grant CAP_IPC_LOCK)" :
		       "");
}

int xp_umem_create(const struct xp_umem_opts *opts, struct xp_umem **out)
{
	struct xdp_umem_reg reg = {};
	struct xp_umem_opts oc;
	const struct xp_umem_opts *o = &oc;
	struct xp_umem *u;
	int fd, err;

	if (!XP_OPTS_LOAD_LOG("umem", &oc, opts, xp_umem_opts))
		return -EINVAL;
	/* reserved_ is inside what this build knows now (socket_fd came after it), but
	 * stays zero as the opts rule has it. */
	if (!out || !o->area || !o->size || !o->chunk_size || o->reserved_ ||
	    memcmp(o->reserved2_, (const __u8[3]){ 0 }, sizeof(o->reserved2_))) {
		xp_err("umem: invalid options (area, size and chunk size are required; reserved_ fields zero)\n");
		if (o->socket_given)
			close(o->socket_fd);
		return -EINVAL;
	}
	fd = o->socket_given ? o->socket_fd : socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		xp_err("umem: cannot create an AF_XDP socket: %s%s\n", strerror(errno),
		       errno == EPERM ? " (run as root or grant CAP_NET_RAW)" : "");
		return err;
	}
	reg.addr = (__u64)(unsigned long)o->area;
	reg.len = o->size;
	reg.chunk_size = o->chunk_size;
	reg.headroom = o->headroom;
	reg.flags = o->flags;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg))) {
		err = -errno;
		umem_reg_error(o, -err);
		close(fd);
		return err;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		close(fd);
		return -ENOMEM;
	}
	u->fd = fd;
	u->owner_fd = -1;
	u->area = o->area;
	u->size = o->size;
	u->chunk_size = o->chunk_size;
	u->headroom = o->headroom;
	u->flags = o->flags;
	*out = u;
	return 0;
}

int xp_umem_destroy(struct xp_umem *u)
{
	if (!u)
		return 0;
	if (u->refs)
		return -EBUSY;
	if (u->fd >= 0)
		close(u->fd);
	if (u->area_mapped)
		munmap(u->area, u->size);
	free(u);
	return 0;
}

__u64 xp_umem_size(const struct xp_umem *u)
{
	return u->size;
}

__u32 xp_umem_chunk_size(const struct xp_umem *u)
{
	return u->chunk_size;
}

__u32 xp_umem_headroom(const struct xp_umem *u)
{
	return u->headroom;
}

bool xp_umem_unaligned(const struct xp_umem *u)
{
	return u->flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG;
}

void *xp_umem_area(const struct xp_umem *u)
{
	return u->area;
}

__u32 xp_xsk_frame_room(const struct xp_umem *u)
{
	return u->chunk_size - u->headroom - 256 /* XDP_PACKET_HEADROOM */;
}

int xp_ifname_rx_queues(const char *ifname)
{
	char path[128];
	int n;

	if (!if_nametoindex(ifname))
		return -ENODEV;
	for (n = 0; n < 4096; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%d", ifname, n);
		if (access(path, F_OK))
			break;
	}
	/* /sys of another namespace (no `ip netns exec`) shows nothing: do not guess. */
	return n ? n : -ENOENT;
}

bool xp__pow2(__u32 v)
{
	return v && !(v & (v - 1));
}

int xp__ring_map(int fd, struct xp_ring *r, const struct xdp_ring_offset *off, __u32 size,
		 size_t entry, __u64 pgoff)
{
	size_t len = off->desc + (size_t)size * entry;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);

	if (m == MAP_FAILED)
		return -errno;
	r->map = m;
	r->map_len = len;
	r->mask = size - 1;
	r->size = size;
	r->producer = (__u32 *)((char *)m + off->producer);
	r->consumer = (__u32 *)((char *)m + off->consumer);
	r->flags = (__u32 *)((char *)m + off->flags);
	r->ring = (char *)m + off->desc;
	r->cached_prod = *r->producer;
	r->cached_cons = *r->consumer;
	return 0;
}

void xp__ring_unmap(struct xp_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

static int set_ring(int fd, int opt, __u32 size, const char *what)
{
	if (setsockopt(fd, SOL_XDP, opt, &size, sizeof(size)) == 0)
		return 0;
	xp_err("xsk: cannot size the %s ring to %u entries: %s\n", what, size, strerror(errno));
	return -errno;
}

static int set_busy_poll(int fd, const struct xp_xsk_opts *o)
{
	int one = 1, usecs = o->busy_poll_usecs ? (int)o->busy_poll_usecs : 20;
	int budget = o->busy_poll_budget ? (int)o->busy_poll_budget : 64;

	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget))) {
		xp_err("xsk: busy poll setup failed: %s (needs CAP_NET_ADMIN and kernel >= 5.11)\n",
		       strerror(errno));
		return -errno;
	}
	return 0;
}

/* Names the holder when an engine recorded itself as serving the queue. */
static void busy_error(const struct xp_xsk_opts *o)
{
	struct xp_user u[8];
	char who[160];
	int n = xp_users_list(o->ifname, u, 8);

	for (int i = 0; i < n; i++)
		for (__u32 j = 0; j < u[i].nqueues; j++)
			if (u[i].queues[j] == o->queue) {
				xp_users_format(&u[i], 1, who, sizeof(who));
				xp_err("xsk: %s queue %u is busy: %s has an AF_XDP socket on it; stop it or pick another queue\n",
				       o->ifname, o->queue, who);
				return;
			}
	xp_err("xsk: %s queue %u is busy: another AF_XDP socket is bound to it (still after 1 s); stop that program or pick another queue\n",
	       o->ifname, o->queue);
}

static void bind_error(const struct xp_xsk_opts *o, int err, int nq)
{
	const char *ifn = o->ifname;

	switch (err) {
	case EBUSY:
		busy_error(o);
		break;
	case EINVAL:
		if (nq > 0 && o->queue >= (__u32)nq)
			xp_err("xsk: %s has %d queue(s), queue %u is out of range; use 0..%d or add queues (ethtool -L)\n",
			       ifn, nq, o->queue, nq - 1);
		else
			xp_err("xsk: bind to %s queue %u rejected (EINVAL): check the queue number and ring sizes\n",
			       ifn, o->queue);
		break;
	case EOPNOTSUPP:
		xp_err("xsk: %s does not support %s; use --copy (or auto)\n", ifn,
		       o->multi_buffer ? "multi-buffer (XDP_USE_SG) in this mode" : "zero-copy");
		break;
	default:
		xp_err("xsk: bind to %s queue %u failed: %s\n", ifn, o->queue, strerror(err));
	}
}

/* Copy mode sends at most a budget of descriptors per sendto(); a larger one means
 * fewer kicks per packet. An optional budget the kernel refuses (before 6.15) leaves
 * its 32 in place. */
static int set_tx_budget(int fd, const struct xp_xsk_opts *o, __u32 tx_size)
{
	__u32 budget = o->tx_budget;
	int err;

	if (!budget || !setsockopt(fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget)))
		return 0;
	err = -errno;
	if (o->tx_budget_optional) {
		xp_dbg("xsk: TX budget %u refused (%s): the kernel's 32 stays\n", budget,
		       strerror(-err));
		return 0;
	}
	xp_err("xsk: TX budget %u refused (%s): it must be 32..%u (the TX ring) and needs kernel 6.15+\n",
	       budget, strerror(-err), tx_size);
	return err;
}

/* A closed socket frees its queue a few milliseconds later (deferred in the kernel):
 * a start right after a stop would see EBUSY. Retry for up to a second, then it is
 * really taken. */
static int bind_retry(int fd, const struct sockaddr_xdp *sxdp)
{
	const struct timespec pause = { .tv_nsec = 10L * 1000 * 1000 };

	for (int i = 0; i < 100; i++) {
		if (!bind(fd, (const struct sockaddr *)sxdp, sizeof(*sxdp)))
			return 0;
		if (errno != EBUSY)
			return -1;
		nanosleep(&pause, NULL);
	}
	return bind(fd, (const struct sockaddr *)sxdp, sizeof(*sxdp));
}

int xp_xsk_create(struct xp_umem *u, const struct xp_xsk_opts *opts, struct xp_xsk **out)
{
	struct xp_xsk_opts oc;
	const struct xp_xsk_opts *o = &oc;
	struct sockaddr_xdp sxdp = {};
	struct xdp_mmap_offsets off;
	struct xdp_options xopts;
	socklen_t optlen;
	__u32 rx_size, tx_size, fill_size, comp_size;
	struct xp_xsk *x;
	bool first;
	int err, ifindex, nq;

	/* Fields past an older caller's .sz read as zero: never read beyond it. */
	if (!XP_OPTS_LOAD_LOG("xsk", &oc, opts, xp_xsk_opts))
		return -EINVAL;
	if (!u || !o->ifname || !out || !XP_OPTS_RESERVED_CLEAR(o->reserved_) ||
	    !XP_OPTS_RESERVED_CLEAR(o->reserved2_)) {
		if (o->socket_given)
			close(o->socket_fd);
		return -EINVAL;
	}
	ifindex = o->ifindex ? o->ifindex : (int)if_nametoindex(o->ifname);
	if (!ifindex) {
		xp_err("xsk: interface %s not found; check `ip link` (in the right namespace)\n",
		       o->ifname);
		if (o->socket_given)
			close(o->socket_fd);
		return -ENODEV;
	}
	/* Another namespace's interface (the socket's): its queues are not ours to count. */
	nq = o->ifindex ? 0 : xp_ifname_rx_queues(o->ifname);
	if (nq > 0 && o->queue >= (__u32)nq) {
		xp_err("xsk: %s has %d queue(s), queue %u is out of range; use 0..%d or add queues (ethtool -L)\n",
		       o->ifname, nq, o->queue, nq - 1);
		if (o->socket_given)
			close(o->socket_fd);
		return -EINVAL;
	}
	rx_size = o->rx_size ? o->rx_size : 2048;
	tx_size = o->tx_size ? o->tx_size : 2048;
	fill_size = o->fill_size ? o->fill_size : 2 * rx_size;
	comp_size = o->comp_size ? o->comp_size : tx_size;
	if (!xp__pow2(rx_size) || !xp__pow2(tx_size) || !xp__pow2(fill_size) ||
	    !xp__pow2(comp_size)) {
		xp_err("xsk: ring sizes must be powers of two (rx %u tx %u fill %u comp %u)\n",
		       rx_size, tx_size, fill_size, comp_size);
		if (o->socket_given)
			close(o->socket_fd);
		return -EINVAL;
	}

	x = calloc(1, sizeof(*x));
	if (!x) {
		if (o->socket_given)
			close(o->socket_fd);
		return -ENOMEM;
	}
	first = !u->fd_taken;
	if (first) {
		x->fd = u->fd;
		u->fd_taken = true;
		x->owns_umem_fd = true;
		if (o->socket_given) /* the UMEM's socket serves: this one is not needed */
			close(o->socket_fd);
	} else if (o->socket_given) {
		x->fd = o->socket_fd;
	} else {
		x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (x->fd < 0) {
			err = -errno;
			free(x);
			return err;
		}
	}
	x->umem = u;
	x->ifindex = ifindex;
	x->queue = o->queue;
	snprintf(x->ifname, sizeof(x->ifname), "%s", o->ifname);

	err = set_ring(x->fd, XDP_RX_RING, rx_size, "RX");
	if (!err)
		err = set_ring(x->fd, XDP_TX_RING, tx_size, "TX");
	if (!err)
		err = set_ring(x->fd, XDP_UMEM_FILL_RING, fill_size, "fill");
	if (!err)
		err = set_ring(x->fd, XDP_UMEM_COMPLETION_RING, comp_size, "completion");
	if (err)
		goto fail;
	optlen = sizeof(off);
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen)) {
		err = -errno;
		goto fail;
	}
	err = xp__ring_map(x->fd, &x->rx, &off.rx, rx_size, sizeof(struct xdp_desc),
			   XDP_PGOFF_RX_RING);
	if (!err)
		err = xp__ring_map(x->fd, &x->tx, &off.tx, tx_size, sizeof(struct xdp_desc),
				   XDP_PGOFF_TX_RING);
	if (!err)
		err = xp__ring_map(x->fd, &x->fill, &off.fr, fill_size, sizeof(__u64),
				   XDP_UMEM_PGOFF_FILL_RING);
	if (!err)
		err = xp__ring_map(x->fd, &x->comp, &off.cr, comp_size, sizeof(__u64),
				   XDP_UMEM_PGOFF_COMPLETION_RING);
	if (err) {
		xp_err("xsk: cannot map the rings of %s queue %u: %s\n", o->ifname, o->queue,
		       strerror(-err));
		goto fail;
	}
	/* Producers start empty: the kernel never wrote the fill or TX ring. */
	x->fill.cached_cons = *x->fill.consumer;
	x->tx.cached_cons = *x->tx.consumer;

	if (o->busy_poll && (err = set_busy_poll(x->fd, o)))
		goto fail;
	if ((err = set_tx_budget(x->fd, o, tx_size)))
		goto fail;

	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = ifindex;
	sxdp.sxdp_queue_id = o->queue;
	if (first) {
		if (o->mode == XP_XSK_COPY)
			sxdp.sxdp_flags |= XDP_COPY;
		else if (o->mode == XP_XSK_ZEROCOPY)
			sxdp.sxdp_flags |= XDP_ZEROCOPY;
		if (!o->no_need_wakeup)
			sxdp.sxdp_flags |= XDP_USE_NEED_WAKEUP;
		if (o->multi_buffer)
			sxdp.sxdp_flags |= XDP_USE_SG;
	} else {
		/* Shared sockets inherit mode, need_wakeup and SG from the UMEM's first. */
		sxdp.sxdp_flags = XDP_SHARED_UMEM;
		sxdp.sxdp_shared_umem_fd = u->owner_fd;
	}
	if (bind_retry(x->fd, &sxdp)) {
		err = -errno;
		bind_error(o, errno, nq);
		goto fail;
	}
	if (first) {
		u->bound = true;
		u->owner_fd = x->fd;
		u->need_wakeup = !o->no_need_wakeup;
		u->sg = o->multi_buffer;
	}
	optlen = sizeof(xopts);
	if (getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &xopts, &optlen) == 0)
		x->zerocopy = xopts.flags & XDP_OPTIONS_ZEROCOPY;
	x->need_wakeup = u->need_wakeup;
	x->multi_buffer = u->sg;
	u->refs++;
	*out = x;
	return 0;

fail:
	xp__ring_unmap(&x->rx);
	xp__ring_unmap(&x->tx);
	xp__ring_unmap(&x->fill);
	xp__ring_unmap(&x->comp);
	if (first) {
		/* The rings are set on the UMEM's fd now: it cannot be bound again, and no
		 * socket can share the UMEM: destroy it. */
		u->fd_taken = true;
		x->fd = -1;
	} else {
		close(x->fd);
	}
	free(x);
	return err;
}

void xp_xsk_destroy(struct xp_xsk *x)
{
	struct xp_umem *u;

	if (!x)
		return;
	u = x->umem;
	xp__ring_unmap(&x->rx);
	xp__ring_unmap(&x->tx);
	xp__ring_unmap(&x->fill);
	xp__ring_unmap(&x->comp);
	/*
	 * Closing the UMEM's own socket while shared ones live is safe: the kernel keeps
	 * the UMEM referenced by every socket bound to it.
	 */
	close(x->fd);
	if (x->owns_umem_fd) {
		u->fd = -1;
		u->owner_fd = -1;
	}
	u->refs--;
	free(x);
}

int xp_xsk_stats(const struct xp_xsk *x, struct xp_xsk_stats *out)
{
	struct xdp_statistics s = {};
	socklen_t len = sizeof(s);

	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &s, &len))
		return -errno;
	memset(out, 0, sizeof(*out));
	out->rx_dropped = s.rx_dropped;
	out->rx_invalid_descs = s.rx_invalid_descs;
	out->tx_invalid_descs = s.tx_invalid_descs;
	/* Kernels before 5.9 return only the first three. */
	if (len >= sizeof(s)) {
		out->rx_ring_full = s.rx_ring_full;
		out->rx_fill_ring_empty_descs = s.rx_fill_ring_empty_descs;
		out->tx_ring_empty_descs = s.tx_ring_empty_descs;
	}
	return 0;
}

int xp_xsk_kick_tx(struct xp_xsk *x)
{
	/* -EAGAIN/-ENOBUFS/-EBUSY are transient (budget spent, completion ring full): retry. */
	if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	return -errno;
}

int xp_xsk_wake_rx(struct xp_xsk *x)
{
	if (recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL) >= 0 || errno == EAGAIN)
		return 0;
	return -errno;
}

int xp_xsk_napi_id(const struct xp_xsk *x, __u32 *id)
{
	socklen_t len = sizeof(*id);

	*id = 0;
	if (getsockopt(x->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, id, &len))
		return -errno;
	return 0;
}
