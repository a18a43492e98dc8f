// SPDX-License-Identifier: BSD-3-Clause
/* Provided-buffer rings and the multishot read without liburing's helpers (uring_buf.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "uring_buf.h"

int ut_bufring_setup(struct io_uring *ring, struct ut_bufring *b, __u32 entries, __u16 bgid)
{
	struct io_uring_buf_reg reg;
	size_t len = (size_t)entries * sizeof(struct io_uring_buf);
	void *p;
	int err;

	memset(b, 0, sizeof(*b));
	if (!entries || (entries & (entries - 1)) || entries > 32768)
		return -EINVAL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)p;
	reg.ring_entries = entries;
	reg.bgid = bgid;
	err = io_uring_register_buf_ring(ring, &reg, 0);
	if (err) {
		munmap(p, len);
		return err < 0 ? err : -EINVAL;
	}
	b->br = p;
	b->entries = entries;
	b->bgid = bgid;
	io_uring_buf_ring_init(b->br);
	return 0;
}

void ut_bufring_free(struct io_uring *ring, struct ut_bufring *b)
{
	if (!b->br)
		return;
	io_uring_unregister_buf_ring(ring, b->bgid);
	munmap(b->br, (size_t)b->entries * sizeof(struct io_uring_buf));
	b->br = NULL;
}

void ut_prep_read_multishot(struct io_uring_sqe *sqe, int fd, bool fixed, __u16 bgid)
{
	/* The kernel wants no address and no length: each read takes a whole buffer. */
	io_uring_prep_rw(IORING_OP_READ, sqe, fd, NULL, 0, 0);
	sqe->opcode = UT_OP_READ_MULTISHOT;
	sqe->flags |= IOSQE_BUFFER_SELECT | (fixed ? IOSQE_FIXED_FILE : 0);
	sqe->buf_group = bgid;
}
