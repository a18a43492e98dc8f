// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's one event loop: every wait is an io_uring operation (accept, recvmsg,
 * read of the signalfd, timeouts) whose user_data is the struct ag_ev to call back.
 * Nothing polls or sleeps: the thread blocks in io_uring_submit_and_wait().
 */
#include <errno.h>
#include <string.h>

#include "agent.h"

int ag_loop_init(struct ag_loop *l, unsigned int entries)
{
	memset(l, 0, sizeof(*l));
	return io_uring_queue_init(entries, &l->ring, 0);
}

void ag_loop_fini(struct ag_loop *l)
{
	io_uring_queue_exit(&l->ring);
}

struct io_uring_sqe *ag_loop_sqe(struct ag_loop *l, struct ag_ev *ev)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	/* Submission only fails when the ring is full of what was just submitted, which
	 * the CQ ring (twice the SQ) absorbs; the caller's op then simply does not run. */
	if (sqe)
		io_uring_sqe_set_data(sqe, ev);
	return sqe;
}

/* Runs the callbacks of what completed (@until_stop: not after l->stop is set). */
static void dispatch(struct ag_loop *l, bool until_stop)
{
	struct io_uring_cqe *cqe;

	while (!(until_stop && l->stop) && !io_uring_peek_cqe(&l->ring, &cqe)) {
		struct ag_ev *ev = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		unsigned int flags = cqe->flags;

		/* Seen before the callback runs: it may submit, and may free @ev. */
		io_uring_cqe_seen(&l->ring, cqe);
		if (ev && ev->fn)
			ev->fn(l, ev, res, flags);
	}
}

void ag_loop_drain(struct ag_loop *l)
{
	/* Cancelled and shut-down operations complete within microseconds; 10 ms of
	 * silence means none is left. */
	for (int round = 0; round < 100; round++) {
		struct __kernel_timespec ts = { .tv_nsec = 10000000LL };
		struct io_uring_cqe *cqe;

		io_uring_submit(&l->ring);
		if (io_uring_wait_cqe_timeout(&l->ring, &cqe, &ts))
			return;
		dispatch(l, false);
	}
}

int ag_loop_run(struct ag_loop *l)
{
	while (!l->stop) {
		int err = io_uring_submit_and_wait(&l->ring, 1);

		if (err < 0 && err != -EINTR && err != -EAGAIN && err != -EBUSY)
			return err;
		dispatch(l, true);
	}
	return 0;
}
