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

#define CAP_HDR_MAX (64u << 10)

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
static int write_header(struct engine *e, int fd, __u8 *hdr, size_t *len)
{
	size_t off, k;
	char name[40];
	__u32 i;

	off = pcapng_shb_put(hdr, CAP_HDR_MAX, "xpile " XPILE_VERSION);
	for (i = 0; off && i < e->nq; i++) {
		snprintf(name, sizeof(name), "%s:%u", e->qs[i].port->ifname, e->qs[i].queue);
		k = pcapng_idb_put(hdr + off, CAP_HDR_MAX - off, name, e->cfg.capture->snaplen);
		off = k ? off + k : 0;
	}
	*len = off;
	return off ? ut_write_all(fd, hdr, off) : -ENOSPC;
}

int eng_capture_setup(struct engine *e)
{
	const struct eng_capture_cfg *cfg = e->cfg.capture;
	struct ut_cap_opts o = { .sz = sizeof(o) };
	struct ut_cap_info in;
	__u8 *hdr;
	size_t len = 0;
	int err, fd;

	if (!cfg)
		return 0;
	o.name = strcmp(cfg->file, "-") ? cfg->file : "stdout";
	if (!strcmp(cfg->file, "-")) {
		if (isatty(STDOUT_FILENO))
			return eng_refuse(
				e, -EINVAL,
				"--capture -: stdout is a terminal; pipe it (| tcpdump -r -) or give a file");
		fd = STDOUT_FILENO;
	} else {
		fd = open(cfg->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return ut_say(-errno,
				      "--capture %s: %s; give a file in a writable directory",
				      cfg->file, strerror(errno));
	}
	hdr = malloc(CAP_HDR_MAX);
	err = hdr ? write_header(e, fd, hdr, &len) : -ENOMEM;
	if (err) {
		free(hdr);
		if (fd > STDOUT_FILENO)
			close(fd);
		return ut_say(err, "--capture %s: cannot write the file header: %s", o.name,
			      strerror(-err));
	}
	o.fd = fd;
	o.hdr = hdr;
	o.hdr_len = len;
	o.limit = (__u64)cfg->size * 1000000ull;
	o.nrings = e->nworkers;
	o.snaplen = cfg->snaplen;
	o.buffer = cfg->buffer;
	o.dirs = (unsigned int)cfg->dir;
	o.rule = cfg->rule_set ? &cfg->rule : NULL;
	err = ut_cap_create(&o, &e->cap);
	free(hdr);
	if (err) {
		if (fd > STDOUT_FILENO)
			close(fd);
		return ut_say(
			err, "out of memory for the capture rings (--capture-buffer %u per worker)",
			cfg->buffer);
	}
	for (__u32 i = 0; i < e->nworkers; i++)
		e->workers[i].cap = ut_cap_ring(e->cap, i);
	ut_cap_info(e->cap, &in);
	if (!e->cfg.quiet && !e->cfg.json)
		ut_say(0, "capture: %s to %s, snaplen %u, %u x %u KiB chunks per worker, %s",
		       cfg->dir == UT_CAP_RX ? "rx" :
		       cfg->dir == UT_CAP_TX ? "tx" :
					       "rx and tx",
		       o.name, cfg->snaplen, in.nchunks, in.chunk_size >> 10,
		       in.uring ? "io_uring writes" : "write()");
	return 0;
}

int eng_capture_start(struct engine *e)
{
	return e->cap ? ut_cap_start(e->cap) : 0;
}

void eng_capture_stop(struct engine *e)
{
	const char *name;
	char q[600];
	struct ut_cap_stats st;

	if (!e->cap || !ut_cap_stop(e->cap, &st))
		return;
	name = strcmp(e->cfg.capture->file, "-") ? e->cfg.capture->file : "stdout";
	if (e->cfg.json)
		printf("{\"type\":\"capture\",\"file\":%s,\"files\":%u,\"frames\":%llu,\"bytes\":%llu,\"capture_dropped\":%llu,\"write_lost\":%llu,\"failed\":%s}\n",
		       cli_json_quote(name, q, sizeof(q)), st.files, (unsigned long long)st.frames,
		       (unsigned long long)st.bytes, (unsigned long long)st.dropped,
		       (unsigned long long)st.lost, st.failed ? "true" : "false");
	else
		ut_say(0,
		       "capture: %llu frames (%llu bytes) written to %s, capture_dropped %llu%s%s",
		       (unsigned long long)st.frames, (unsigned long long)st.bytes, name,
		       (unsigned long long)st.dropped,
		       st.dropped ?
			       " (the capture ring was full: raise --capture-buffer or narrow --capture-rule)" :
			       "",
		       st.failed ? ", stopped by a write error" : "");
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
}
