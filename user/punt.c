// SPDX-License-Identifier: BSD-3-Clause
/* The host TAP's punt rules, changed while running (punt.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "engine.h"
#include "punt.h"

/* A copy of the set in force, registered to be freed at exit: NULL when the run has
 * made all the changes it may. */
static struct eng_punt_set *punt_copy(struct eng_punt *p)
{
	struct eng_punt_set *s;

	if (p->nsets > ENG_PUNT_CHANGES || !(s = malloc(sizeof(*s))))
		return NULL;
	*s = *p->cur;
	p->sets[p->nsets++] = s;
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
	p->sets[p->nsets++] = s;
	p->cur = s;
	e->punt = p;
	return 0;
}

void eng_punt_free(struct engine *e)
{
	struct eng_punt *p = e->punt;

	if (!p)
		return;
	for (__u32 i = 0; i < p->nsets; i++)
		free(p->sets[i]);
	pthread_mutex_destroy(&p->mu);
	free(p);
	e->punt = NULL;
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
		snprintf(why, len, "%d changes made in this run: restart the engine for more",
			 ENG_PUNT_CHANGES);
		return -ENOSPC;
	}
	id = (int)p->next_id++;
	s->id[s->n] = (__u32)id;
	s->r[s->n] = r;
	snprintf(s->text[s->n], sizeof(s->text[0]), "%s", text);
	s->n++;
	__atomic_store_n(&p->cur, s, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->mu);
	return id;
}

int eng_punt_del(struct engine *e, __u32 id)
{
	struct eng_punt *p = e->punt;
	struct eng_punt_set *s;
	__u32 i, k;
	int err = 0;

	pthread_mutex_lock(&p->mu);
	for (i = 0; i < p->cur->n && p->cur->id[i] != id; i++)
		;
	if (i == p->cur->n)
		err = -ENOENT;
	else if (!(s = punt_copy(p)))
		err = -ENOSPC;
	if (!err) {
		for (k = i; k + 1 < s->n; k++) {
			s->id[k] = s->id[k + 1];
			s->r[k] = s->r[k + 1];
			memcpy(s->text[k], s->text[k + 1], sizeof(s->text[k]));
		}
		s->n--;
		__atomic_store_n(&p->cur, s, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&p->mu);
	return err;
}
