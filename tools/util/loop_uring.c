// SPDX-License-Identifier: BSD-3-Clause
/*
 * The loop's io_uring back end (loop.h): each operation is one SQE whose user_data is
 * its struct ut_ev; the thread blocks in io_uring_submit_and_wait(). At set-up the
 * ring is proven usable, not just created: the opcodes the agent queues are probed and
 * a NOP goes round, so a seccomp profile that allows io_uring_setup but refuses
 * io_uring_enter or io_uring_register still falls back to epoll at start, not later.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>

#include "loop_be.h"
#include "xpile/features.h"

static const int uring_ops[] = { IORING_OP_ACCEPT,	 IORING_OP_RECV,     IORING_OP_RECVMSG,
				 IORING_OP_READ,	 IORING_OP_POLL_ADD, IORING_OP_TIMEOUT,
				 IORING_OP_ASYNC_CANCEL, IORING_OP_NOP };

/* What refused @call with @err, into @why. */
static int refused(int err, const char *call, char *why, size_t len)
{
	xp_uring_refusal(err, call, why, len);
	return err;
}

static int uring_init(struct ut_loop *l, unsigned int entries, char *why, size_t len)
{
	struct io_uring *r = calloc(1, sizeof(*r));
	struct io_uring_probe *probe;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int err;

	if (!r)
		return refused(-ENOMEM, "io_uring", why, len);
	err = io_uring_queue_init(entries, r, 0);
	if (err) {
		free(r);
		return refused(err, "io_uring_setup", why, len);
	}
	probe = calloc(1, sizeof(*probe) + 256 * sizeof(struct io_uring_probe_op));
	err = probe ? io_uring_register_probe(r, probe, 256) : -ENOMEM;
	if (err)
		refused(err, "io_uring_register", why, len);
	for (size_t k = 0; !err && k < sizeof(uring_ops) / sizeof(uring_ops[0]); k++)
		if (!io_uring_opcode_supported(probe, uring_ops[k])) {
			snprintf(why, len, "the kernel's io_uring lacks opcode %d", uring_ops[k]);
			err = -EOPNOTSUPP;
		}
	free(probe);
	if (!err) {
		sqe = io_uring_get_sqe(r);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, NULL);
		err = io_uring_submit_and_wait(r, 1);
		if (err < 0) {
			refused(err, "io_uring_enter", why, len);
		} else {
			err = io_uring_peek_cqe(r, &cqe);
			if (!err)
				io_uring_cqe_seen(r, cqe);
		}
	}
	if (err) {
		io_uring_queue_exit(r);
		free(r);
		return err;
	}
	l->priv = r;
	return 0;
}

static void uring_fini(struct ut_loop *l)
{
	io_uring_queue_exit(l->priv);
	free(l->priv);
	l->priv = NULL;
}

/* An SQE whose completion goes to @ev (the ring is flushed when full). */
static struct io_uring_sqe *sqe_get(struct io_uring *r, struct ut_ev *ev)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);

	if (!sqe) {
		io_uring_submit(r);
		sqe = io_uring_get_sqe(r);
	}
	/* Submission only fails when the ring is full of what was just submitted, which
	 * the CQ ring (twice the SQ) absorbs; the caller's op then simply does not run. */
	if (sqe)
		io_uring_sqe_set_data(sqe, ev);
	return sqe;
}

static int uring_submit(struct ut_loop *l, struct ut_ev *ev, const struct ut_op *op)
{
	struct io_uring_sqe *sqe = sqe_get(l->priv, ev);

	if (!sqe)
		return -EBUSY;
	switch (op->kind) {
	case UT_OP_ACCEPT:
		io_uring_prep_accept(sqe, op->fd, NULL, NULL, SOCK_CLOEXEC);
		break;
	case UT_OP_RECV:
		io_uring_prep_recv(sqe, op->fd, op->buf, op->len, 0);
		break;
	case UT_OP_RECVMSG:
		io_uring_prep_recvmsg(sqe, op->fd, op->msg, (unsigned int)op->flags);
		break;
	case UT_OP_READ:
		io_uring_prep_read(sqe, op->fd, op->buf, (unsigned int)op->len, 0);
		break;
	case UT_OP_POLL_IN:
		io_uring_prep_poll_add(sqe, op->fd, POLLIN);
		break;
	case UT_OP_POLL_OUT:
		io_uring_prep_poll_add(sqe, op->fd, POLLOUT);
		break;
	case UT_OP_TIMEOUT:
		io_uring_prep_timeout(sqe, (struct __kernel_timespec *)op->ts, 0, 0);
		break;
	}
	return 0;
}

static int uring_cancel(struct ut_loop *l, struct ut_ev *ev)
{
	struct io_uring_sqe *sqe = sqe_get(l->priv, NULL);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel(sqe, ev, 0);
	io_uring_submit(l->priv);
	return 0;
}

static int uring_wait(struct ut_loop *l, int timeout_ms)
{
	struct __kernel_timespec ts = { .tv_sec = timeout_ms / 1000,
					.tv_nsec = (long long)(timeout_ms % 1000) * 1000000 };
	struct io_uring_cqe *cqe;
	int err;

	if (timeout_ms < 0) {
		err = io_uring_submit_and_wait(l->priv, 1);
		return err < 0 ? err : 0;
	}
	io_uring_submit(l->priv);
	return io_uring_wait_cqe_timeout(l->priv, &cqe, &ts);
}

static bool uring_next(struct ut_loop *l, struct ut_cqe *c)
{
	struct io_uring_cqe *cqe;

	if (io_uring_peek_cqe(l->priv, &cqe))
		return false;
	c->ev = io_uring_cqe_get_data(cqe);
	c->res = cqe->res;
	c->flags = cqe->flags;
	io_uring_cqe_seen(l->priv, cqe);
	return true;
}

const struct ut_loop_be ut_loop_uring = {
	.name = "io_uring",
	.init = uring_init,
	.fini = uring_fini,
	.submit = uring_submit,
	.cancel = uring_cancel,
	.wait = uring_wait,
	.next = uring_next,
};
