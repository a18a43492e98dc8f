// SPDX-License-Identifier: BSD-3-Clause
/* The host TAP's punt rules, changed while running (punt.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "engine.h"
#include "punt.h"
#include "grace.h"

/* Frees the retired sets whose grace period has passed (with p->mu held). Tokens grow
 * with each change, so once one set's period has passed, every older one's has. */
static void punt_reclaim(struct engine *e, struct eng_punt *p)
{
	struct eng_punt_set **pp = &p->retired, *s;

	while ((s = *pp) && !eng_grace_done(e, s->token))
		pp = &s->older;
	*pp = NULL;
	while (s) {
		struct eng_punt_set *older = s->older;

		free(s);
		p->nretired--;
		p->freed++;
		s = older;
	}
}

/* Makes @s the set in force; the one it replaces waits for its grace period. */
static void punt_publish(struct engine *e, struct eng_punt *p, struct eng_punt_set *s)
{
	struct eng_punt_set *old = p->cur;

	__atomic_store_n(&p->cur, s, __ATOMIC_RELEASE);
	old->token = eng_grace_start(e); /* after the store: a worker past it sees @s */
	old->older = p->retired;
	p->retired = old;
	p->nretired++;
	p->changes++;
	punt_reclaim(e, p);
}

static struct eng_punt_set *punt_copy(const struct eng_punt *p)
{
	struct eng_punt_set *s = malloc(sizeof(*s));

	if (s)
		*s = *p->cur;
	return s;
}

int eng_punt_init(struct engine *e, const struct xp_rule *first)
{
	struct eng_punt *p = calloc(1, sizeof(*p));
	struct eng_punt_set *s = calloc(1, sizeof(*s));

	if (!p || !s) {
		free(p);
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	p->next_id = 1;
	if (first) {
		s->n = 1;
		s->id[0] = p->next_id++;
		s->r[0] = *first;
		xp_rule_format(first, s->text[0], sizeof(s->text[0]));
	}
	p->cur = s;
	e->punt = p;
	return 0;
}

/* After the workers are gone: nothing reads any set. */
void eng_punt_free(struct engine *e)
{
	struct eng_punt *p = e->punt;

	if (!p)
		return;
	while (p->retired) {
		struct eng_punt_set *s = p->retired;

		p->retired = s->older;
		free(s);
	}
	free(p->cur);
	pthread_mutex_destroy(&p->mu);
	free(p);
	e->punt = NULL;
}

void eng_punt_reclaim(struct engine *e)
{
	struct eng_punt *p = e->punt;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	punt_reclaim(e, p);
	pthread_mutex_unlock(&p->mu);
}

int eng_punt_add(struct engine *e, const char *text, char *why, size_t len)
{
	struct eng_punt *p = e->punt;
	struct eng_punt_set *s;
	struct xp_rule r;
	int id;

	if (eng_capture_rule_parse(text, &r, why, len))
		return -EINVAL;
	pthread_mutex_lock(&p->mu);
	if (p->cur->n == ENG_PUNT_MAX) {
		pthread_mutex_unlock(&p->mu);
		snprintf(why, len, "%d rules in force already: delete one first", ENG_PUNT_MAX);
		return -ENOSPC;
	}
	s = punt_copy(p);
	if (!s) {
		pthread_mutex_unlock(&p->mu);
		snprintf(why, len, "out of memory for a new rule set: try again");
		return -ENOMEM;
	}
	id = (int)p->next_id++;
	s->id[s->n] = (__u32)id;
	s->r[s->n] = r;
	snprintf(s->text[s->n], sizeof(s->text[0]), "%s", text);
	s->n++;
	punt_publish(e, p, s);
	pthread_mutex_unlock(&p->mu);
	return id;
}

int eng_punt_del(struct engine *e, __u32 id)
{
	struct eng_punt *p = e->punt;
	struct eng_punt_set *s = NULL;
	__u32 i, k;
	int err = 0;

	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->cur->n && p->cur->id[i] != id; i++)
		;
	if (i == p->cur->n)
		err = -ENOENT;
	else if (!(s = punt_copy(p)))
		err = -ENOMEM;
	if (!err) {
		for (k = i; k + 1 < s->n; k++) {
			s->id[k] = s->id[k + 1];
			s->r[k] = s->r[k + 1];
			memcpy(s->text[k], s->text[k + 1], sizeof(s->text[k]));
		}
		s->n--;
		punt_publish(e, p, s);
	}
	pthread_mutex_unlock(&p->mu);
	return err;
}
