// SPDX-License-Identifier: BSD-3-Clause
/*
 * --capture (capture.h): the engine's side of the capture ring (tools/util/capring.h):
 * the file or stdout, its pcapng header with one interface per socket, one ring per
 * worker, the figures at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_json.h"
#include "capture.h"
#include "engine.h"
#include "pcapng.h"
#include "grace.h"

#define CAP_HDR_MAX (64u << 10)
#define CAP_GRACE_MS 2000u /* a capture stop waits this long for the workers' turns */
#define CAP_LIVE_BUFFER (4u << 20) /* ring bytes per worker of a capture started live */

int eng_capture_rule_parse(const char *text, struct xp_rule *r, char *why, size_t len)
{
	char buf[XP_RULE_TEXT_MAX + 1], *argv[XP_RULE_WORDS_MAX + 2];
	int argc;

	if (strlen(text) > XP_RULE_TEXT_MAX) {
		snprintf(why, len, "rule text too long (at most %d bytes)", XP_RULE_TEXT_MAX);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	argc = xp_rule_words(buf, argv, XP_RULE_WORDS_MAX, why, len);
	if (argc < 0)
		return -EINVAL;
	for (int k = 0; k < argc; k++)
		if (!strcmp(argv[k], "action")) {
			snprintf(
				why, len,
				"a capture rule takes no action: give only the match, e.g. 'udp dport 5555'");
			return -EINVAL;
		}
	if (!argc) {
		snprintf(why, len, "empty rule: give a match such as 'udp dport 5555'");
		return -EINVAL;
	}
	argv[argc++] = "action";
	argv[argc++] = "pass";
	return xp_rule_parse(argc, argv, r, why, len) ? -EINVAL : 0;
}

/* The section header and one interface per socket, named PORT:QUEUE. */
static int write_header(struct engine *e, int fd, __u8 *hdr, size_t *len, __u32 snaplen)
{
	size_t off, k;
	char name[40];
	__u32 i;

	off = pcapng_shb_put(hdr, CAP_HDR_MAX, "xpile " XPILE_VERSION);
	for (i = 0; off && i < e->nq; i++) {
		snprintf(name, sizeof(name), "%s:%u", e->qs[i].port->ifname, e->qs[i].queue);
		k = pcapng_idb_put(hdr + off, CAP_HDR_MAX - off, name, snaplen);
		off = k ? off + k : 0;
	}
	*len = off;
	return off ? ut_write_all(fd, hdr, off) : -ENOSPC;
}

static void run_free(struct eng_cap_run *run)
{
	struct eng_cap_rule *r, *older;

	if (!run)
		return;
	free(run->rule);
	for (r = run->retired; r; r = older) {
		older = r->older;
		free(r);
	}
	free(run);
}

/* The header, the rings and the writer's state for @fd (@cr->file names it): 0 or -errno
 * (@fd closed unless stdout), said in @why. */
static int cap_make(struct engine *e, struct eng_cap_run *run, int fd,
		    const struct ut_cap_opts *base, char *why, size_t wlen)
{
	struct ut_cap_opts o = *base;
	__u8 *hdr = malloc(CAP_HDR_MAX);
	size_t len = 0;
	int err;

	err = hdr ? write_header(e, fd, hdr, &len, run->snaplen) : -ENOMEM;
	if (err) {
		free(hdr);
		if (fd > STDOUT_FILENO)
			close(fd);
		snprintf(why, wlen, "%s: cannot write the file header: %s", run->file,
			 strerror(-err));
		return err;
	}
	o.name = run->file;
	o.fd = fd;
	o.hdr = hdr;
	o.hdr_len = len;
	o.nrings = e->nworkers;
	o.snaplen = run->snaplen;
	o.rule = run->rule ? &run->rule->r : NULL;
	err = ut_cap_create(&o, &e->cap);
	free(hdr);
	if (err) {
		if (fd > STDOUT_FILENO)
			close(fd);
		snprintf(why, wlen, "out of memory for the capture rings (%u bytes per worker)",
			 o.buffer);
	}
	return err;
}

/* A rule of our own (freed after a grace period once replaced): NULL and why if @text
 * does not parse or memory is short. */
static struct eng_cap_rule *rule_new(const char *text, char *why, size_t len)
{
	struct eng_cap_rule *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	if (eng_capture_rule_parse(text, &r->r, why, len)) {
		free(r);
		return NULL;
	}
	return r;
}

int eng_capture_setup(struct engine *e)
{
	const struct eng_capture_cfg *cfg = e->cfg.capture;
	struct ut_cap_opts o = { .sz = sizeof(o) };
	struct eng_cap_run *run;
	struct ut_cap_info in;
	char why[512];
	int err, fd;

	if (!cfg)
		return 0;
	run = calloc(1, sizeof(*run));
	if (!run || (cfg->rule_set && !(run->rule = calloc(1, sizeof(*run->rule))))) {
		run_free(run);
		return ut_say(-ENOMEM, "out of memory for --capture");
	}
	snprintf(run->file, sizeof(run->file), "%s", strcmp(cfg->file, "-") ? cfg->file : "stdout");
	run->snaplen = cfg->snaplen;
	if (cfg->rule_set) {
		run->rule->r = cfg->rule;
		xp_rule_format(&cfg->rule, run->rule_text, sizeof(run->rule_text));
	}
	if (!strcmp(cfg->file, "-")) {
		if (isatty(STDOUT_FILENO)) {
			run_free(run);
			return eng_refuse(
				e, -EINVAL,
				"--capture -: stdout is a terminal; pipe it (| tcpdump -r -) or give a file");
		}
		fd = STDOUT_FILENO;
	} else {
		fd = open(cfg->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			err = -errno;
			run_free(run);
			return ut_say(err, "--capture %s: %s; give a file in a writable directory",
				      cfg->file, strerror(-err));
		}
	}
	o.limit = (__u64)cfg->size * 1000000ull;
	o.buffer = cfg->buffer;
	o.dirs = (unsigned int)cfg->dir;
	err = cap_make(e, run, fd, &o, why, sizeof(why));
	if (err) {
		run_free(run);
		return ut_say(err, "--capture %s", why);
	}
	e->capr = run;
	for (__u32 i = 0; i < e->nworkers; i++)
		e->workers[i].cap = ut_cap_ring(e->cap, i);
	ut_cap_info(e->cap, &in);
	if (!e->cfg.quiet && !e->cfg.json)
		ut_say(0, "capture: %s to %s, snaplen %u, %u x %u KiB chunks per worker, %s",
		       cfg->dir == UT_CAP_RX ? "rx" :
		       cfg->dir == UT_CAP_TX ? "tx" :
					       "rx and tx",
		       run->file, cfg->snaplen, in.nchunks, in.chunk_size >> 10,
		       in.uring ? "io_uring writes" : "write()");
	return 0;
}

int eng_capture_start(struct engine *e)
{
	return e->cap ? ut_cap_start(e->cap) : 0;
}

static void say_figures(struct engine *e, const struct eng_cap_run *run,
			const struct ut_cap_stats *st)
{
	char q[8300];

	if (e->cfg.json)
		printf("{\"type\":\"capture\",\"file\":%s,\"files\":%u,\"frames\":%llu,\"bytes\":%llu,\"capture_dropped\":%llu,\"write_lost\":%llu,\"failed\":%s}\n",
		       cli_json_quote(run->file, q, sizeof(q)), st->files,
		       (unsigned long long)st->frames, (unsigned long long)st->bytes,
		       (unsigned long long)st->dropped, (unsigned long long)st->lost,
		       st->failed ? "true" : "false");
	else
		ut_say(0,
		       "capture: %llu frames (%llu bytes) written to %s, capture_dropped %llu%s%s",
		       (unsigned long long)st->frames, (unsigned long long)st->bytes, run->file,
		       (unsigned long long)st->dropped,
		       st->dropped ?
			       " (the capture ring was full: raise --capture-buffer or narrow --capture-rule)" :
			       "",
		       st->failed ? ", stopped by a write error" : "");
}

void eng_capture_stop(struct engine *e)
{
	struct ut_cap_stats st;

	if (!e->cap || !ut_cap_stop(e->cap, &st))
		return;
	say_figures(e, e->capr, &st);
}

void eng_capture_destroy(struct engine *e)
{
	if (!e->cap)
		return;
	eng_capture_stop(e);
	for (__u32 i = 0; i < e->nworkers; i++)
		e->workers[i].cap = NULL;
	ut_cap_destroy(e->cap);
	e->cap = NULL;
	run_free(e->capr);
	e->capr = NULL;
}

/* ---- the control socket's (the control thread alone) ---- */

#define WHY(...) (snprintf(why, len, __VA_ARGS__), -EINVAL)

int eng_capture_live_start(struct engine *e, const char *file, const char *rule, __u32 snaplen,
			   char *why, size_t len)
{
	struct ut_cap_opts o = { .sz = sizeof(o), .buffer = CAP_LIVE_BUFFER, .dirs = UT_CAP_BOTH };
	struct eng_cap_run *run;
	int fd, err;

	if (e->cap)
		return WHY(
			e->capr->live ?
				"a capture to %s runs already: stop it first (action=stop)" :
				"the engine's --capture %s holds the capture: give no file (action=start resumes it, rule=... changes its rule)",
			e->capr->file);
	if (file[0] != '/')
		return WHY(
			"file \"%.200s\" is not an absolute path: give one such as /tmp/x.pcapng (the engine's directory is not yours)",
			file);
	if (strlen(file) >= sizeof(run->file))
		return WHY("file name longer than %zu bytes", sizeof(run->file) - 1);
	if (!snaplen || snaplen > 65535)
		return WHY("snaplen %u: give 1..65535 bytes", snaplen);
	run = calloc(1, sizeof(*run));
	if (!run)
		return WHY("out of memory");
	if (rule && !(run->rule = rule_new(rule, why, len))) {
		free(run);
		return -EINVAL;
	}
	snprintf(run->file, sizeof(run->file), "%s", file);
	if (rule)
		snprintf(run->rule_text, sizeof(run->rule_text), "%s", rule);
	run->snaplen = snaplen;
	run->live = true;
	/* A new file only: never one that exists, nor through a symbolic link. */
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		run_free(run);
		if (err == -EEXIST)
			snprintf(why, len,
				 "%.200s exists: give a new file (one is never overwritten)", file);
		else
			snprintf(why, len, "%.200s: %s; give a new file in a directory that exists",
				 file, strerror(-err));
		return err;
	}
	err = cap_make(e, run, fd, &o, why, len);
	if (!err && (err = ut_cap_start(e->cap))) {
		ut_cap_destroy(e->cap);
		e->cap = NULL;
		snprintf(why, len, "cannot start the capture thread");
	}
	if (err) {
		unlink(file); /* ours: created above */
		run_free(run);
		return err;
	}
	e->capr = run;
	for (__u32 i = 0; i < e->nworkers; i++)
		__atomic_store_n(&e->workers[i].cap, ut_cap_ring(e->cap, i), __ATOMIC_RELEASE);
	ut_say(0, "capture started through the control socket: %s to %s",
	       rule ? rule : "every frame", file);
	return 0;
}

static void rules_reclaim(struct engine *e, struct eng_cap_run *run)
{
	struct eng_cap_rule **pp = &run->retired, *r, *older;

	while ((r = *pp) && !eng_grace_done(e, r->token))
		pp = &r->older;
	*pp = NULL;
	for (; r; r = older) {
		older = r->older;
		free(r);
	}
}

void eng_capture_reclaim(struct engine *e)
{
	if (e->capr)
		rules_reclaim(e, e->capr);
}

int eng_capture_rule_change(struct engine *e, const char *rule, char *why, size_t len)
{
	struct eng_cap_run *run = e->capr;
	struct eng_cap_rule *r, *old;

	if (!e->cap || run->detached)
		return WHY("nothing captures: give file=/PATH to start a capture");
	if (!(r = rule_new(rule, why, len)))
		return -EINVAL;
	old = run->rule;
	ut_cap_rule_set(e->cap, &r->r);
	run->rule = r;
	snprintf(run->rule_text, sizeof(run->rule_text), "%s", rule);
	if (old) { /* freed once no worker can be in a batch that loaded it */
		old->token = eng_grace_start(e);
		old->older = run->retired;
		run->retired = old;
	}
	rules_reclaim(e, run);
	ut_say(0, "capture rule changed through the control socket: %s", rule);
	return 0;
}

int eng_capture_live_stop(struct engine *e, struct ut_cap_stats *st, char *why, size_t len)
{
	struct eng_cap_run *run = e->capr;
	__u64 t;

	if (!e->cap || !run->live)
		return WHY("no capture started here runs");
	if (!run->detached) {
		for (__u32 i = 0; i < e->nworkers; i++)
			__atomic_store_n(&e->workers[i].cap, NULL, __ATOMIC_RELEASE);
		run->detached = true;
	}
	/* No worker may be in a batch on a ring when the rings go. */
	t = eng_grace_start(e);
	if (!eng_grace_wait(e, t, CAP_GRACE_MS))
		return WHY(
			"a worker had no turn in %u ms: the capture is detached, try stop again (it is closed at exit anyway)",
			CAP_GRACE_MS);
	ut_cap_stop(e->cap, st);
	say_figures(e, run, st);
	ut_cap_destroy(e->cap);
	e->cap = NULL;
	run_free(run);
	e->capr = NULL;
	return 0;
}
