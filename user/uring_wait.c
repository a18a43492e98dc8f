// SPDX-License-Identifier: BSD-3-Clause
/*
 * The idle worker's wait (uring_wait.h): one-shot polls on io_uring, or poll().
 *
 * A socket's poll is armed when the worker goes to sleep and ends with the first
 * wake-up, so a busy worker has nothing on its sockets' wait queues. A multishot poll
 * (armed once, for good) made every flush of the producer's NAPI run io_uring's wake
 * callback, awake or not: with testpmd as the generator on the other core, fwd fell
 * from 1.59 Mpps (poll()) to 1.45, the flush's wake-up 33 ns per packet of the
 * producer's core (perf). A poll that fired while the worker was awake is not armed
 * again until the next sleep; one that has not fired stays armed. Before sleeping the
 * worker drains the completions (no syscall: a CQ peek), arms what is not armed and
 * looks at its RX rings itself: a frame that came before the arming left no completion
 * to wake it. Arming a readable socket completes at once, so nothing that arrives
 * later is missed either.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "cli_json.h"
#include "engine.h"
#include "tap.h"
#include "uring_wait.h"
#include "xpile/features.h"

#define UW_ENTRIES 128u /* SQ; the CQ is twice that */

/* Entries 0..nq-1 are the worker's sockets, then the TAPs it injects for. */
#define UW_MAX (ENG_MAX_QUEUES + ENG_MAX_PORTS)

struct eng_uwait {
	struct io_uring ring;
	__u32 n;
	int fd[UW_MAX];
	bool armed[UW_MAX];
};

/* What the worker waits on: its sockets, then its TAPs (tap.c). */
static __u32 wait_fds(const struct eng_worker *w, int *fd)
{
	__u32 i;

	for (i = 0; i < w->nq; i++)
		fd[i] = w->q[i]->xsk->fd;
	return i + (w->tapw ? eng_tap_wait_fds(w, fd + i, ENG_MAX_PORTS) : 0);
}

/* Which wait is in use, once per engine: a text line, or a JSON object with --json. */
static void say_once(struct engine *e, int core, bool uring, const char *why)
{
	if (__atomic_exchange_n(&e->wait_told, 1, __ATOMIC_ACQ_REL))
		return;
	if (e->cfg.json) {
		char q[600];

		printf("{\"type\":\"idle_wait\",\"core\":%d,\"wait\":\"%s\",\"why\":%s}\n", core,
		       uring ? "io_uring" : "poll", cli_json_quote(why, q, sizeof(q)));
		fflush(stdout);
	} else if (!e->cfg.quiet) {
		ut_say(0, "idle wait: %s (%s)",
		       uring ? "io_uring poll, one wait for all of a worker's sockets" : "poll()",
		       why);
	}
}

/* Queues a poll for every socket whose poll is not armed; the wait submits them. */
static void arm(struct eng_worker *w)
{
	struct eng_uwait *u = w->uwait;

	for (__u32 i = 0; i < u->n; i++) {
		struct io_uring_sqe *sqe;

		if (u->armed[i] || u->fd[i] < 0)
			continue;
		sqe = io_uring_get_sqe(&u->ring);
		if (!sqe)
			break;
		io_uring_prep_poll_add(sqe, u->fd[i], POLLIN);
		io_uring_sqe_set_data64(sqe, i);
		u->armed[i] = true;
	}
}

/* Takes every completion there is; true if one came from a TAP (entries past the
 * sockets): the TAPs' work is not in the RX rings, so it always ends the sleep. */
static bool drain(struct eng_uwait *u, __u32 nq)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;
	bool tap = false;

	io_uring_for_each_cqe(&u->ring, head, cqe)
	{
		__u64 i = cqe->user_data;

		seen++;
		if (i < u->n && !(cqe->flags & IORING_CQE_F_MORE))
			u->armed[i] = false;
		tap |= i >= nq && i < u->n;
	}
	io_uring_cq_advance(&u->ring, seen);
	return tap;
}

int eng_uwait_init(struct eng_worker *w)
{
	struct engine *e = w->e;
	struct eng_uwait *u;
	int err;

	w->uwait = NULL;
	if (e->cfg.idle_wait == ENG_WAIT_POLL || e->cfg.spin || !w->nq) {
		if (e->cfg.idle_wait == ENG_WAIT_POLL)
			say_once(e, w->core, false, "--idle-wait poll");
		return 0;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	/* Deferred task work: a socket's wake-up while the worker runs only marks its poll
	 * (the completion is made when the worker next waits). With the default mode every
	 * wake-up interrupts the busy worker to run task work: 1.4x the CPU per packet of
	 * poll() at 4 sockets, measured. COOP_TASKRUN (no interrupt) on kernels before 6.1. */
	err = io_uring_queue_init(UW_ENTRIES, &u->ring,
				  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (err == -EINVAL)
		err = io_uring_queue_init(UW_ENTRIES, &u->ring, IORING_SETUP_COOP_TASKRUN);
	if (err) {
		char why[256], line[300];

		free(u);
		xp_uring_refusal(err, "io_uring_setup", why, sizeof(why));
		if (e->cfg.idle_wait == ENG_WAIT_URING)
			return ut_say(
				err,
				"core %d: --idle-wait uring: io_uring refused: %s; use --idle-wait poll",
				w->core, why);
		snprintf(line, sizeof(line), "io_uring refused: %s", why);
		say_once(e, w->core, false, line);
		return 0;
	}
	u->n = wait_fds(w, u->fd);
	w->uwait = u;
	say_once(e, w->core, true,
		 e->cfg.idle_wait == ENG_WAIT_URING ? "--idle-wait uring" : "auto");
	return 0;
}

static bool rx_pending(const struct eng_worker *w)
{
	for (__u32 i = 0; i < w->nq; i++)
		if (xp_ring_pending(&w->q[i]->xsk->rx))
			return true;
	return false;
}

void eng_uwait_sleep(struct eng_worker *w, int timeout_ms)
{
	struct eng_uwait *u = w->uwait;
	struct pollfd pfd[UW_MAX];
	struct io_uring_cqe *cqe;
	int fd[UW_MAX];
	__u64 deadline;
	__u32 i, n;

	if (!u) {
		n = wait_fds(w, fd);
		for (i = 0; i < n; i++) {
			pfd[i].fd = fd[i];
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		poll(pfd, n, timeout_ms);
		return;
	}
	drain(u, w->nq);
	/* A TAP that went away (tap.c stopped it) is not armed again: its fd would report
	 * an error at every arming and the worker would never sleep. */
	if (u->n > w->nq) {
		n = wait_fds(w, fd);
		for (i = w->nq; i < u->n; i++) {
			__u32 j = w->nq;

			while (j < n && fd[j] != u->fd[i])
				j++;
			if (j == n)
				u->fd[i] = -1;
		}
	}
	/* A socket's completion carries the wake-up's mask and the kernel does not poll the
	 * socket again: a frame the worker took while it was awake still leaves one behind,
	 * found at the next sleep with nothing in the ring (over half the wake-ups at 1-frame
	 * bursts, counted). Such a wake-up is slept through, to the same deadline. */
	deadline = eng_now_ns() + (__u64)timeout_ms * 1000000ull;
	for (;;) {
		struct __kernel_timespec ts;
		__u64 now;

		arm(w);
		if (rx_pending(w))
			return;
		now = eng_now_ns();
		if (now >= deadline)
			return;
		ts = (struct __kernel_timespec){ .tv_nsec = (long long)(deadline - now) };
		/* One enter arms and waits; what was queued before a return above goes in
		 * with the next sleep's. A socket readable by then completes at once. */
		if (io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL) < 0)
			return;
		if (drain(u, w->nq) || rx_pending(w))
			return;
	}
}

void eng_uwait_fini(struct eng_worker *w)
{
	if (!w->uwait)
		return;
	io_uring_queue_exit(&w->uwait->ring);
	free(w->uwait);
	w->uwait = NULL;
}
