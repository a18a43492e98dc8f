// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench punt, the shared slow-path thread the engine does not have (punt_thread.h):
 * the worker hands each frame to a thread on another core over a single-producer ring;
 * that thread writes it to the TAP (WRITE_FIXED, one submit per batch, as the engine's
 * worker does) and hands the frame back over a second ring. What it measures against
 * the engine's per-worker ring: the worker's own cost per frame (the handoff) and the
 * slow-path thread's (its wall time per frame: it spins, so it is a core's worth). The
 * thread runs only during a run, so its spinning never overlaps the other variants.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "benchutil.h"
#include "punt_thread.h"

#define PT_RING 1024u /* entries of each ring: more than the frames in flight */
#define PT_BATCH 32u

struct punt_thread {
	pthread_t t; /* during a run */
	int fd, core, err;
	__u8 *buf;
	size_t slot;
	__u32 len;
	struct io_uring ring;
	__u32 req[PT_RING], done[PT_RING];
	/* Producer indexes, shared; each consumer's own (the rings never fill: no side
	 * needs to see the other's consumer index). */
	__u32 req_tail, done_tail, req_head, done_head;
	int stop;
};

static void *slow_main(void *arg)
{
	struct punt_thread *p = arg;
	struct io_uring_cqe *cqe;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->core, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		__u32 h = p->req_head, t = __atomic_load_n(&p->req_tail, __ATOMIC_ACQUIRE);
		__u32 n = t - h < PT_BATCH ? t - h : PT_BATCH, dt = p->done_tail;

		if (!n) {
			__builtin_ia32_pause();
			continue;
		}
		for (__u32 i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
			__u32 id = p->req[(h + i) % PT_RING];

			io_uring_prep_write_fixed(sqe, 0, p->buf + id * p->slot, p->len, 0, 0);
			sqe->flags |= IOSQE_FIXED_FILE;
		}
		io_uring_submit_and_wait(&p->ring, n);
		for (__u32 i = 0; i < n; i++) {
			if (io_uring_wait_cqe(&p->ring, &cqe) || cqe->res != (int)p->len)
				p->err = 1;
			io_uring_cqe_seen(&p->ring, cqe);
			p->done[(dt + i) % PT_RING] = p->req[(h + i) % PT_RING];
		}
		p->req_head = h + n;
		__atomic_store_n(&p->done_tail, dt + n, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Another core than the caller's: the lowest one online. */
static int other_core(void)
{
	int me = sched_getcpu();
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	for (int c = 0; c < n; c++)
		if (c != me)
			return c;
	return -1;
}

int punt_thread_start(struct punt_thread **out, int tap_fd, __u8 *buf, size_t bytes, size_t slot)
{
	struct punt_thread *p = calloc(1, sizeof(*p));
	struct iovec iov = { buf, bytes };
	int err;

	if (!p)
		return -ENOMEM;
	p->fd = tap_fd;
	p->buf = buf;
	p->slot = slot;
	p->core = other_core();
	err = p->core < 0 ? -ENODEV : io_uring_queue_init(64, &p->ring, 0);
	if (!err && (io_uring_register_buffers(&p->ring, &iov, 1) ||
		     io_uring_register_files(&p->ring, &p->fd, 1)))
		err = -errno;
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

double punt_thread_run(struct punt_thread *p, __u32 len, __u32 nframes, __u64 n, double *handoff_ns)
{
	__u32 freeid[PT_RING], nfree = 0, rt = p->req_tail, dh = p->done_head;
	__u64 sent = 0, back = 0;
	double t0, ho = 0;

	p->len = len;
	p->stop = 0;
	for (__u32 i = 0; i < nframes && i < PT_RING; i++)
		freeid[nfree++] = i;
	if (pthread_create(&p->t, NULL, slow_main, p))
		return -1;
	t0 = bench_now_ns();
	while (back < n) {
		if (nfree >= PT_BATCH && sent < n) {
			/* As if each frame had just been received on this core (the kernel's copy
			 * into it): written here, not timed. */
			for (__u32 i = 0; i < PT_BATCH; i++)
				memset(p->buf + freeid[nfree - 1 - i] * p->slot + 14, (int)i,
				       len - 14);
			double ta = bench_now_ns();

			for (__u32 i = 0; i < PT_BATCH; i++)
				p->req[rt++ % PT_RING] = freeid[--nfree];
			__atomic_store_n(&p->req_tail, rt, __ATOMIC_RELEASE);
			ho += bench_now_ns() - ta;
			sent += PT_BATCH;
		}
		__u32 dt = __atomic_load_n(&p->done_tail, __ATOMIC_ACQUIRE);

		if (dt != dh) {
			double ta = bench_now_ns();

			for (; dh != dt; dh++, back++)
				freeid[nfree++] = p->done[dh % PT_RING];
			ho += bench_now_ns() - ta;
		}
	}
	double wall = (bench_now_ns() - t0) / (double)n;

	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	pthread_join(p->t, NULL);
	p->done_head = dh;
	*handoff_ns = ho / (double)n;
	return p->err ? -1 : wall;
}

void punt_thread_stop(struct punt_thread *p)
{
	if (!p)
		return;
	io_uring_queue_exit(&p->ring);
	free(p);
}
