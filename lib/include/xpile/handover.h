/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot handover: a running process hands its AF_XDP sockets and their UMEM to a
 * successor, which maps them and carries on; nothing is registered, bound or put in an
 * XSKMAP again, because the sockets are the same sockets (an fd passed by SCM_RIGHTS is
 * the socket itself: the XSKMAP entry stays valid while any fd of it is open).
 *
 * The pieces, for any owner of sockets (the engine, an embedding node agent):
 *
 *   1. A channel: xp_ho_listen() (a Unix stream socket, mode 0600) in the old process,
 *      xp_ho_connect() in the new one, xp_ho_accept() checks that the peer runs under
 *      the same uid (SO_PEERCRED). Messages are framed by struct xp_ho_hdr: a magic, a
 *      protocol version, the caller's message type, the payload length and the number
 *      of fds sent with it (SCM_RIGHTS). xp_ho_recv() refuses another version with
 *      -EPROTONOSUPPORT and says which (hdr->version).
 *   2. What no fd carries: xp_umem_export() / xp_xsk_export() fill plain records
 *      (struct xp_umem_rec, struct xp_xsk_rec) to send with the UMEM's memfd and each
 *      socket's fd.
 *   3. The successor: xp_umem_import() maps the memfd at the record's offset,
 *      xp_xsk_import() maps the four rings of a received socket fd (XDP_MMAP_OFFSETS,
 *      then one mmap per ring) and takes its indices from the shared ring memory.
 *
 * The old owner must stop touching the rings first, at a batch boundary (everything
 * reserved submitted, everything peeked released: its records' indices then equal the
 * shared ones, which xp_xsk_resync() checks), and may close its fds and unmap only once
 * the successor said it has taken over. Which frames are where (fill ring, kernel, RX
 * ring, TX ring, completion ring, free) is the caller's ledger (xpile/ledger.h) and
 * travels as its own payload. A failed handover changes nothing for the old owner.
 */
#ifndef XPILE_HANDOVER_H
#define XPILE_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/xsk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XP_HO_MAGIC 0x4f485058u /* "XPHO", little-endian */
#define XP_HO_VERSION 1u
/* Most fds one message carries (the kernel's SCM_MAX_FD is 253). */
#define XP_HO_MAX_FDS 253u
/* Message type the library reserves: a one-line reason, text payload (not terminated). */
#define XP_HO_MSG_ERROR 0xffffu

/* The frame of every message; the payload (len bytes) follows it on the stream. */
struct xp_ho_hdr {
	__u32 magic; /* XP_HO_MAGIC */
	__u16 version; /* XP_HO_VERSION of the sender */
	__u16 type; /* the caller's, or XP_HO_MSG_ERROR */
	__u32 len; /* payload bytes */
	__u32 nfds; /* fds passed with the header */
};

/* A UMEM as a successor maps it: its place in the memfd sent beside it, and its
 * registration (XDP_UMEM_REG) as it was made. */
struct xp_umem_rec {
	__u64 offset; /* of the UMEM in the memfd, a multiple of page_size */
	__u64 size; /* bytes registered */
	__u32 chunk_size;
	__u32 headroom;
	__u32 flags; /* XDP_UMEM_UNALIGNED_CHUNK_FLAG */
	__u32 page_size; /* of the memfd's pages: 4096 or 2 MiB (hugetlb) */
};

#define XP_XSK_REC_ZEROCOPY (1u << 0)
#define XP_XSK_REC_NEED_WAKEUP (1u << 1)
#define XP_XSK_REC_SG (1u << 2)

/* One bound socket, what its fd does not tell: where it is bound, its ring sizes and
 * the indices its owner had cached (producer side of fill and TX, consumer side of RX
 * and completion), which a successor checks against the shared ones. */
struct xp_xsk_rec {
	char ifname[16];
	__u32 ifindex;
	__u32 queue;
	__u32 rx_size, tx_size, fill_size, comp_size;
	__u32 flags; /* XP_XSK_REC_* */
	__u32 fill_prod, rx_cons, tx_prod, comp_cons;
};

/*
 * Old side. Binds a Unix stream socket at @path (mode 0600) and listens; *@fd is the
 * caller's. A socket file nothing listens on (left by a process that died) is replaced;
 * one where a process accepts connections is refused with -EADDRINUSE; a path that is
 * not a socket with -EEXIST. Logged with the cause; other errors: socket()'s, bind()'s
 * negative errno.
 */
XP_API int xp_ho_listen(const char *path, int *fd);
/*
 * Accepts one connection on @lfd (non-blocking: -EAGAIN when none waits) and checks
 * its peer's uid (SO_PEERCRED) is this process's effective uid: -EPERM otherwise (the
 * connection is closed). *@fd gets the connection, *@pid (NULL: not wanted) the peer's
 * pid. Both directions time out after @timeout_ms (SO_RCVTIMEO, SO_SNDTIMEO).
 */
XP_API int xp_ho_accept(int lfd, int timeout_ms, int *fd, pid_t *pid);
/*
 * New side. Connects to @path: -ENOENT (no such file), -ECONNREFUSED (a socket file
 * nobody listens on), -EACCES (not ours to connect to), -EPERM (the listener runs
 * under another uid); the connection times out after @timeout_ms in both directions.
 */
XP_API int xp_ho_connect(const char *path, int timeout_ms, int *fd, pid_t *pid);
/* The inode of the socket file at @path (0: none). A listener records it after
 * xp_ho_listen() and unlinks @path at exit only while it is unchanged: a successor may
 * have bound its own socket there. */
XP_API __u64 xp_ho_path_ino(const char *path);

/*
 * One sendmsg() of @len bytes of @buf with @nfds fds (at most XP_HO_MAX_FDS) attached by
 * SCM_RIGHTS, retried on EINTR; @flags as sendmsg()'s (MSG_NOSIGNAL is always added).
 * Returns the bytes sent, -EINVAL, or sendmsg()'s negative errno. The one place fds are
 * sent from: the handover channel, and the device-plugin replies of an agent.
 */
XP_API ssize_t xp_fd_send(int sock, const void *buf, size_t len, const int *fds, __u32 nfds,
			  int flags);

/*
 * Sends one message: the header (version @version, 0 meaning XP_HO_VERSION; a test may
 * send another) with @nfds fds (at most XP_HO_MAX_FDS) by SCM_RIGHTS, then @len bytes
 * of @data. 0, -EINVAL, or sendmsg()'s negative errno (-EPIPE: the peer is gone).
 */
XP_API int xp_ho_send(int fd, __u16 type, __u16 version, const void *data, __u32 len,
		      const int *fds, __u32 nfds);
/* xp_ho_send() of an XP_HO_MSG_ERROR whose payload is the formatted line. */
XP_API int xp_ho_send_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Receives one message, begun within @timeout_ms (0: only one already arriving; a
 * caller may spin on that) and whole within a second of its first byte: its header into *@hdr, its payload into
 * @buf (at most @cap bytes; a longer one is -EMSGSIZE), its fds into @fds (at most
 * @maxfds; extra ones are closed and it is -EMSGSIZE). Received fds are close-on-exec
 * and the caller's (hdr->nfds of them); on error none is left open. -ETIMEDOUT, -ECONNRESET (the peer closed the
 * connection: died or gave up), -EBADMSG (no magic), -EPROTONOSUPPORT (another
 * version: *@hdr says which; its payload is read and dropped).
 */
XP_API int xp_ho_recv(int fd, struct xp_ho_hdr *hdr, void *buf, __u32 cap, int *fds, __u32 maxfds,
		      int timeout_ms);

/* Old side: fills @out for UMEM @u, found at @offset in the memfd the caller sends
 * (pages of @page_size). 0 or -EINVAL. */
XP_API int xp_umem_export(const struct xp_umem *u, __u64 offset, __u32 page_size,
			  struct xp_umem_rec *out);
/*
 * New side: maps @rec->size bytes of @memfd at @rec->offset (shared, populated) and
 * makes a UMEM of them that registers nothing: its sockets come by xp_xsk_import().
 * The mapping is the UMEM's, unmapped by xp_umem_destroy(); @memfd stays the caller's.
 * -EINVAL (a record the memfd cannot back), mmap()'s negative errno; logged.
 */
XP_API int xp_umem_import(int memfd, const struct xp_umem_rec *rec, struct xp_umem **out);
/* Old side: fills @out for socket @x (its owner between batches). 0 or -EINVAL. */
XP_API int xp_xsk_export(const struct xp_xsk *x, struct xp_xsk_rec *out);
/*
 * New side: a socket of @u from its received @fd and record: checks @fd is an AF_XDP
 * socket (-ENOTSOCK) and maps its four rings. Nothing is bound or registered, and it
 * may run while the old owner still polls: take the indices with xp_xsk_resync() once
 * it has stopped. On success @fd is @*out's, closed by xp_xsk_destroy(); on failure it
 * stays the caller's. Logged.
 */
XP_API int xp_xsk_import(struct xp_umem *u, int fd, const struct xp_xsk_rec *rec,
			 struct xp_xsk **out);
/*
 * New side, once the old owner stopped between batches: the cached indices of @x's four
 * rings from the shared ones, checked against @rec, the owner's xp_xsk_export() at its
 * stop (NULL: not checked): -EPROTO (logged) when it had reserved or peeked entries it
 * never published. 0 otherwise.
 */
XP_API int xp_xsk_resync(struct xp_xsk *x, const struct xp_xsk_rec *rec);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_HANDOVER_H */
