// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rule transactions of a steer handle: the whole set and its default actions
 * replaced atomically (compiled into the idle set, flipped, a grace period), one rule
 * added or removed as such a replace, reads of the set in force and its counters.
 * Writers of one interface are serialised across processes by a lock on its pin
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <bpf/bpf.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "steer_internal.h"
#include "steer_priv.h"
#include "xpile/steer.h"

/* Serializes rule-set writers across processes; the pin directory is the one object
 * every user of this interface's steer shares. */
static int lock_rules(struct xp_steer *s)
{
	int fd = open(s->pin, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int xp_steer_percpu_sum(struct xp_steer *s, int fd, __u32 key, size_t vsz, void *sum)
{
	size_t stride = (vsz + 7) & ~7UL;
	__u8 *buf = calloc(s->ncpu, stride);
	int err;

	if (!buf)
		return -ENOMEM;
	memset(sum, 0, vsz);
	err = bpf_map_lookup_elem(fd, &key, buf) ? -errno : 0;
	for (int c = 0; !err && c < s->ncpu; c++)
		for (size_t w = 0; w < vsz / 8; w++)
			((__u64 *)sum)[w] += ((__u64 *)(buf + c * stride))[w];
	free(buf);
	return err;
}

/* Per-CPU counters of the rules that survive a replace move with them. */
static int move_counters(struct xp_steer *s, __u32 oldset, const struct xp_rule *old, __u32 nold,
			 __u32 newset, const struct xp_rule *rules, __u32 n)
{
	struct xp_rule_counters *src = calloc(s->ncpu, sizeof(*src)),
				*dst = calloc(s->ncpu, sizeof(*dst));
	int err = 0;

	if (!src || !dst) {
		err = -ENOMEM;
		goto out;
	}
	/* The idle set's stats stay: they count what it saw while it was active. */
	if (bpf_map_lookup_elem(s->fds[XP_M_RULE_CNT], &oldset, src) ||
	    bpf_map_lookup_elem(s->fds[XP_M_RULE_CNT], &newset, dst)) {
		err = -errno;
		goto out;
	}
	for (int c = 0; c < s->ncpu; c++)
		memset(dst[c].r, 0, sizeof(dst[c].r));
	for (__u32 i = 0; i < n; i++)
		for (__u32 j = 0; j < nold; j++) {
			if (old[j].id != rules[i].id)
				continue;
			for (int c = 0; c < s->ncpu; c++)
				dst[c].r[i] = src[c].r[j];
			break;
		}
	if (bpf_map_update_elem(s->fds[XP_M_RULE_CNT], &newset, dst, BPF_ANY))
		err = -errno;
out:
	free(src);
	free(dst);
	return err;
}

static int get_set(struct xp_steer *s, __u32 set, struct xp_rule *rules, __u32 max, __u32 *n,
		   struct xp_set_cfg *sc)
{
	if (bpf_map_lookup_elem(s->fds[XP_M_SETCFG], &set, sc))
		return -errno;
	*n = sc->nrules < max ? sc->nrules : max;
	for (__u32 i = 0; i < *n; i++) {
		__u32 k = set * XP_STEER_MAX_RULES + i;

		if (bpf_map_lookup_elem(s->fds[XP_M_RULES], &k, &rules[i]))
			return -errno;
	}
	return 0;
}

/* The one writer path: sort, number, compile into the idle set, flip, wait. */
static int replace_locked(struct xp_steer *s, const struct xp_rule *in, __u32 n,
			  const struct xp_action *dflt, const struct xp_action *perr)
{
	struct xp_rule *rules = NULL, *old = NULL;
	struct xp_set_cfg osc;
	__u32 cur, next, nold = 0;
	struct xp_cfg c;
	char why[160];
	int err;

	if (n > XP_STEER_MAX_RULES) {
		xp_err("%u rules: at most %d fit\n", n, XP_STEER_MAX_RULES);
		return -E2BIG;
	}
	rules = calloc(n + 1, sizeof(*rules));
	old = calloc(XP_STEER_MAX_RULES, sizeof(*old));
	if (!rules || !old) {
		err = -ENOMEM;
		goto out;
	}
	err = xp_steer_read_cfg(s, &c);
	if (err)
		goto out;
	cur = c.active & 1;
	next = !cur;
	err = get_set(s, cur, old, XP_STEER_MAX_RULES, &nold, &osc);
	if (err)
		goto out;
	if (c.next_id == 0)
		c.next_id = 1;
	/* Stable insertion by priority: equal priorities keep their order. */
	for (__u32 i = 0; i < n; i++) {
		struct xp_rule r = in[i];
		__u32 j;

		err = xp_rule_check(&r, why, sizeof(why));
		if (err) {
			xp_err("rule %u: %s\n", i + 1, why);
			goto out;
		}
		if (!r.id)
			r.id = c.next_id++;
		for (j = i; j > 0 && rules[j - 1].prio > r.prio; j--)
			rules[j] = rules[j - 1];
		rules[j] = r;
	}
	/* Nothing may still be reading the idle set (a writer that died mid-way). */
	xp_steer_grace_period();
	err = xp_rules_compile(s->fds, next, rules, n, dflt ?: &osc.dflt, perr ?: &osc.parse_err);
	err = err ?: move_counters(s, cur, old, nold, next, rules, n);
	/* The idle set's config where packets read it, then the flip: two writes, so no
	 * packet sees the new index with the old config. */
	if (!err && bpf_map_lookup_elem(s->fds[XP_M_SETCFG], &next, &c.set[next]))
		err = -errno;
	err = err ?: xp_steer_write_cfg(s, &c);
	if (err)
		goto out;
	c.active = next;
	err = xp_steer_write_cfg(s, &c);
	if (!err)
		xp_steer_grace_period();
out:
	free(rules);
	free(old);
	return err;
}

int xp_steer_rules_replace(struct xp_steer *s, const struct xp_rule *rules, __u32 n)
{
	int lk = lock_rules(s), err;

	if (lk < 0)
		return lk;
	err = replace_locked(s, rules, n, NULL, NULL);
	close(lk);
	return err;
}

/* The set packets see now, and up to @max of its rules (@max 0: only its config). */
static int get_active_set(struct xp_steer *s, __u32 *set, struct xp_rule *rules, __u32 max,
			  __u32 *n, struct xp_set_cfg *sc)
{
	struct xp_cfg c;
	int err = xp_steer_read_cfg(s, &c);

	if (err)
		return err;
	*set = c.active & 1;
	return get_set(s, *set, rules, max, n, sc);
}

int xp_steer_default_get(struct xp_steer *s, struct xp_action *dflt, struct xp_action *perr)
{
	struct xp_set_cfg sc;
	__u32 set, n;
	int err = get_active_set(s, &set, NULL, 0, &n, &sc);

	if (err)
		return err;
	if (dflt)
		*dflt = sc.dflt;
	if (perr)
		*perr = sc.parse_err;
	return 0;
}

int xp_steer_rules_get(struct xp_steer *s, struct xp_rule *rules, struct xp_counter *counters,
		       __u32 max, __u32 *n)
{
	struct xp_set_cfg sc;
	__u32 set;
	int err = get_active_set(s, &set, rules, max, n, &sc);

	struct xp_rule_counters *rc;

	if (err || !counters)
		return err;
	rc = calloc(s->ncpu, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	if (bpf_map_lookup_elem(s->fds[XP_M_RULE_CNT], &set, rc))
		err = -errno;
	for (__u32 i = 0; !err && i < *n; i++) {
		memset(&counters[i], 0, sizeof(counters[i]));
		for (int c = 0; c < s->ncpu; c++) {
			counters[i].packets += rc[c].r[i].packets;
			counters[i].bytes += rc[c].r[i].bytes;
		}
	}
	free(rc);
	return err;
}

/* Read-modify-write of the rule set under the lock: add one rule, delete one by id
 * (@del != 0), and/or change the default actions (NULL: keep). */
static int edit_rules(struct xp_steer *s, const struct xp_rule *add, __u32 del, __u32 *id,
		      const struct xp_action *dflt, const struct xp_action *perr)
{
	struct xp_rule *rules = calloc(XP_STEER_MAX_RULES + 1, sizeof(*rules));
	__u32 n = 0, m = 0;
	struct xp_cfg c;
	int lk, err;

	if (!rules)
		return -ENOMEM;
	lk = lock_rules(s);
	if (lk < 0) {
		free(rules);
		return lk;
	}
	err = xp_steer_rules_get(s, rules, NULL, XP_STEER_MAX_RULES, &n);
	err = err ?: xp_steer_read_cfg(s, &c);
	if (err)
		goto out;
	if (add) {
		rules[n] = *add;
		rules[n].id = 0; /* the only one without: replace_locked numbers it next_id */
		if (id)
			*id = c.next_id ?: 1;
		n++;
	}
	for (__u32 i = 0; i < n; i++)
		if (!del || rules[i].id != del)
			rules[m++] = rules[i];
	if (del && m == n) {
		xp_err("%s: no rule with id %u\n", s->ifname, del);
		err = -ENOENT;
		goto out;
	}
	err = replace_locked(s, rules, m, dflt, perr);
out:
	close(lk);
	free(rules);
	return err;
}

int xp_steer_default_set(struct xp_steer *s, const struct xp_action *dflt,
			 const struct xp_action *parse_err)
{
	return edit_rules(s, NULL, 0, NULL, dflt, parse_err);
}

int xp_steer_set(struct xp_steer *s, const struct xp_steer_set_opts *opts)
{
	struct xp_steer_set_opts o;
	struct xp_errsink es;
	int lk, err;

	if (!XP_OPTS_LOAD_LOG("steer set", &o, opts, xp_steer_set_opts))
		return -EINVAL;
	if (!s || (!o.keep_rules && o.nrules && !o.rules) || !XP_OPTS_RESERVED_CLEAR(o.reserved_))
		return -EINVAL;
	xp_errsink_begin(&es, o.errbuf, o.errbuf_sz);
	if (o.keep_rules) {
		err = edit_rules(s, NULL, 0, NULL, o.dflt, o.parse_err);
	} else {
		lk = lock_rules(s);
		err = lk < 0 ? lk : replace_locked(s, o.rules, o.nrules, o.dflt, o.parse_err);
		if (lk >= 0)
			close(lk);
	}
	xp_errsink_end(&es);
	return err;
}

int xp_steer_rule_add(struct xp_steer *s, const struct xp_rule *r, __u32 *id)
{
	return edit_rules(s, r, 0, id, NULL, NULL);
}

int xp_steer_rule_del(struct xp_steer *s, __u32 id)
{
	return edit_rules(s, NULL, id, NULL, NULL, NULL);
}

int xp_steer_stats_read(struct xp_steer *s, struct xp_steer_stats *out)
{
	struct xp_rule_counters *rc = malloc(sizeof(*rc));
	struct xp_stats st = { 0 };
	int err = rc ? 0 : -ENOMEM;

	/* Each set counts the packets it saw. */
	for (__u32 set = 0; !err && set < XP_STEER_SETS; set++) {
		err = xp_steer_percpu_sum(s, s->fds[XP_M_RULE_CNT], set, sizeof(*rc), rc);
		for (size_t w = 0; !err && w < sizeof(st) / 8; w++)
			((__u64 *)&st)[w] += ((const __u64 *)&rc->stats)[w];
	}
	free(rc);
	if (err)
		return err;
	/* The map counts each packet once, by path and verdict (steer_abi.h). */
	memset(out, 0, sizeof(*out));
	for (int p = 0; p < XP_PATH_MAX; p++)
		for (int v = 0; v < XP_VERDICTS; v++) {
			const struct xp_counter *c = &st.path[p][v];
			int also[3] = { v, v == XP_CNT_XSK_NOSOCK ? XP_CNT_PASS : -1,
					p == XP_PATH_DEFAULT   ? XP_CNT_DEFAULT :
					p == XP_PATH_PARSE_ERR ? XP_CNT_PARSE_ERR :
								 -1 };

			for (int k = 0; k < 3; k++)
				if (also[k] >= 0) {
					out->verdict[also[k]].packets += c->packets;
					out->verdict[also[k]].bytes += c->bytes;
				}
		}
	memcpy(out->parse_err, st.perr, sizeof(out->parse_err));
	return 0;
}
