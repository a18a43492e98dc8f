// SPDX-License-Identifier: BSD-3-Clause
/* Frames a callback left unaccounted for (leak.h): recorded by the worker, said once. */
#include "engine.h"
#include "leak.h"
#include "say.h"

void eng_leak(struct eng_worker *w, struct eng_q *q, struct eng_wdom *wd, __s64 out)
{
	wd->leaked += out;
	__atomic_store_n(&q->c.leaked, q->c.leaked + (__u64)(out < 0 ? -out : out),
			 __ATOMIC_RELAXED);
	if (w->e->cfg.mem->ledger_debug)
		ut_say(0, "ledger: callback %s %s %lld frame(s) on %s:%u: %s", w->e->cfg.mode->name,
		       out > 0 ? "leaked" : "gave back", (long long)(out > 0 ? out : -out),
		       q->port->ifname, q->queue,
		       out > 0 ? "neither sent, freed, punted nor held (xpile/pkt.h)" :
				 "more than it had (a frame freed or sent twice?)");
}

void eng_leaks_report(struct engine *e)
{
	bool gone = __atomic_load_n(&e->finished, __ATOMIC_ACQUIRE) == e->nworkers;

	for (__u32 i = 0; i < e->nq; i++) {
		struct eng_q *q = &e->qs[i];
		__u64 n = __atomic_load_n(&q->c.leaked, __ATOMIC_RELAXED);

		if (n != q->leak_told && !e->cfg.mem->ledger_debug) /* debug: told at once */
			ut_say(0,
			       "ledger: callback %s left %llu frame(s) on %s:%u unaccounted for: neither sent, freed, punted nor held (xpile/pkt.h)",
			       e->cfg.mode->name, (unsigned long long)(n - q->leak_told),
			       q->port->ifname, q->queue);
		q->leak_told = n;
	}
	for (__u32 i = 0; gone && e->nworkers && i < e->ndoms; i++)
		for (__u32 k = 0; k < e->nworkers; k++) {
			struct eng_wdom *wd = &e->workers[k].wd[i];

			if (wd->d && wd->held)
				ut_say(0,
				       "ledger: callback %s still holds %lld frame(s) of UMEM %u on worker %u at exit: a worker_fini callback must send or free them",
				       e->cfg.mode->name, (long long)wd->held, i, k);
		}
}
