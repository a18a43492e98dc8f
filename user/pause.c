// SPDX-License-Identifier: BSD-3-Clause
/*
 * The main thread's side of the workers' pause (pause.h); a worker's side is park() in
 * worker.c.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"
#include "pause.h"

int eng_pause(struct engine *e, const char *why)
{
	__u64 t0 = eng_now_ns();

	__atomic_store_n(&e->parked, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&e->paused, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&e->pause_gen, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&e->parked, __ATOMIC_ACQUIRE) +
		       __atomic_load_n(&e->finished, __ATOMIC_ACQUIRE) <
	       e->nworkers) {
		__u64 waited = eng_now_ns() - t0;

		if (waited > 1000000000ull) {
			eng_resume(e);
			ut_say(0, "%s skipped: workers did not pause within 1 s", why);
			return -ETIMEDOUT;
		}
		/* Spin for the first 200 us: a busy worker parks within a batch, and a
		 * handover's pause is what the traffic waits for. */
		if (waited > 200000)
			usleep(50);
	}
	return 0;
}

void eng_resume(struct engine *e)
{
	__atomic_store_n(&e->paused, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &e->paused, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
