// SPDX-License-Identifier: BSD-3-Clause
/* Grace periods for what the control thread replaces (grace.h). */
#include <time.h>

#include "engine.h"
#include "grace.h"
#include "say.h"
#include "xpile/qsbr.h"

int eng_grace_setup(struct engine *e)
{
	int err = xp_qsbr_create(e->nworkers ? e->nworkers : 1, &e->grace);

	return err ? ut_say(err, "out of memory for the workers' grace periods") : 0;
}

void eng_grace_destroy(struct engine *e)
{
	xp_qsbr_destroy(e->grace);
	e->grace = NULL;
}

__u64 eng_grace_start(struct engine *e)
{
	return xp_qsbr_start(e->grace);
}

bool eng_grace_done(struct engine *e, __u64 token)
{
	return xp_qsbr_check(e->grace, token);
}

bool eng_grace_wait(struct engine *e, __u64 token, unsigned int timeout_ms)
{
	__u64 end = eng_now_ns() + (__u64)timeout_ms * 1000000ull;
	const struct timespec step = { 0, 50000 };

	/* A turn is microseconds; the control thread may nap meanwhile (not a worker's
	 * core: it keeps off them, run.c). */
	while (!xp_qsbr_check(e->grace, token)) {
		if (eng_now_ns() > end)
			return false;
		nanosleep(&step, NULL);
	}
	return true;
}
