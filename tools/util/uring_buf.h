/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A provided-buffer ring and the multishot read, by hand: liburing 2.3 (Debian 12) has
 * neither io_uring_setup_buf_ring() nor the READ_MULTISHOT opcode (Linux 6.7). The ring
 * of buffer descriptors is anonymous memory registered with IORING_REGISTER_PBUF_RING
 * (io_uring_register_buf_ring()); a multishot read takes a buffer from it per completion
 * (IORING_CQE_F_BUFFER, the buffer id above IORING_CQE_BUFFER_SHIFT) and stays armed
 * while IORING_CQE_F_MORE is set. Used by the host TAPs' inject (user/tap.c) and by
 * `xpile-bench punt --dir inject`.
 */
#ifndef XPILE_URING_BUF_H
#define XPILE_URING_BUF_H

#include <stdbool.h>

#include <liburing.h>

#define UT_OP_READ_MULTISHOT 49 /* IORING_OP_READ_MULTISHOT, Linux 6.7 */

struct ut_bufring {
	struct io_uring_buf_ring *br;
	__u32 entries; /* a power of two */
	__u16 bgid;
};

/* Maps and registers a ring of @entries (a power of two) as group @bgid: 0 or -errno
 * (-EINVAL before Linux 5.19: no provided-buffer rings). */
int ut_bufring_setup(struct io_uring *ring, struct ut_bufring *b, __u32 entries, __u16 bgid);
void ut_bufring_free(struct io_uring *ring, struct ut_bufring *b);
/* Queues buffer @bid at @addr; made visible to the kernel by ut_bufring_publish(). */
static inline void ut_bufring_add(struct ut_bufring *b, void *addr, __u32 len, __u16 bid, int nth)
{
	io_uring_buf_ring_add(b->br, addr, len, bid, io_uring_buf_ring_mask(b->entries), nth);
}
static inline void ut_bufring_publish(struct ut_bufring *b, int n)
{
	io_uring_buf_ring_advance(b->br, n);
}
/* A multishot read of @fd (a fixed file if @fixed) into buffers of group @bgid. */
void ut_prep_read_multishot(struct io_uring_sqe *sqe, int fd, bool fixed, __u16 bgid);

#endif /* XPILE_URING_BUF_H */
