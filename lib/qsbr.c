// SPDX-License-Identifier: BSD-3-Clause
/* Reader quiescence for lock-free tables (see xpile/qsbr.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xpile/qsbr.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

struct qsbr_priv {
	pthread_mutex_t lock; /* registration only */
	bool used[];
};

int xp_qsbr_create(__u32 max_readers, struct xp_qsbr **out)
{
	size_t sz = sizeof(struct xp_qsbr) + (size_t)max_readers * sizeof(struct xp_qsbr_slot);
	struct qsbr_priv *p;
	struct xp_qsbr *q;

	if (!out || !max_readers || max_readers > XP_QSBR_MAX_READERS)
		return -EINVAL;
	q = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	p = calloc(1, sizeof(*p) + max_readers);
	if (!q || !p) {
		free(q);
		free(p);
		return -ENOMEM;
	}
	memset(q, 0, sz);
	pthread_mutex_init(&p->lock, NULL);
	q->gen = 1;
	q->nslots = max_readers;
	q->priv = p;
	*out = q;
	return 0;
}

void xp_qsbr_destroy(struct xp_qsbr *q)
{
	struct qsbr_priv *p;

	if (!q)
		return;
	p = q->priv;
	pthread_mutex_destroy(&p->lock);
	free(p);
	free(q);
}

int xp_qsbr_register(struct xp_qsbr *q, __u32 *id)
{
	struct qsbr_priv *p;
	int err = -ENOSPC;

	if (!q || !id)
		return -EINVAL;
	p = q->priv;
	pthread_mutex_lock(&p->lock);
	for (__u32 i = 0; i < q->nslots; i++)
		if (!p->used[i]) {
			p->used[i] = true;
			xp_qsbr_online(q, i);
			*id = i;
			err = 0;
			break;
		}
	pthread_mutex_unlock(&p->lock);
	return err;
}

int xp_qsbr_unregister(struct xp_qsbr *q, __u32 id)
{
	struct qsbr_priv *p;
	int err = -EINVAL;

	if (!q || id >= q->nslots)
		return -EINVAL;
	p = q->priv;
	pthread_mutex_lock(&p->lock);
	if (p->used[id]) {
		xp_qsbr_offline(q, id);
		p->used[id] = false;
		err = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

xp_qsbr_token xp_qsbr_start(struct xp_qsbr *q)
{
	/* Sequentially consistent: ordered after every unpublishing store before it, and
	 * a reader that loads the new value sees those stores. */
	return __atomic_add_fetch(&q->gen, 1, __ATOMIC_SEQ_CST);
}

bool xp_qsbr_check(struct xp_qsbr *q, xp_qsbr_token t)
{
	for (__u32 i = 0; i < q->nslots; i++) {
		__u64 s = __atomic_load_n(&q->slot[i].seen, __ATOMIC_SEQ_CST);

		if (s && s < t)
			return false;
	}
	return true;
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000000000ull + (__u64)t.tv_nsec;
}

void xp_qsbr_wait(struct xp_qsbr *q, xp_qsbr_token t)
{
	__u64 t0;

	if (xp_qsbr_check(q, t))
		return;
	/* A burst is microseconds: spin through one first (yielding at once would hand
	 * a shared core away for a whole time slice), then give the CPU to the readers,
	 * then sleep in short steps (a reader descheduled or stuck). */
	t0 = now_ns();
	while (!xp_qsbr_check(q, t)) {
		__u64 dt = now_ns() - t0;

		if (dt < 20000)
			cpu_relax();
		else if (dt < 1000000)
			sched_yield();
		else
			nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
	}
}

void xp_qsbr_synchronize(struct xp_qsbr *q)
{
	xp_qsbr_wait(q, xp_qsbr_start(q));
}
