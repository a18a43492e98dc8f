// SPDX-License-Identifier: BSD-3-Clause
/*
 * The capture ring (capring.h): per-producer chunk rings and the writer thread's
 * io_uring writes.
 *
 * Why chunks and one async write each: per-frame writes cost the worker ~540 ns
 * (writev) and per-frame io_uring writes 2-3x more; copying into 256 KiB chunks and
 * handing them to io_uring costs the worker ~11 ns per 64-byte frame
 * (docs/hybrid.md, "Capture"). ext4 and tmpfs punt buffered writes to an io-wq
 * thread, so the thread's own cost is one io_uring_enter per round.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "capring.h"
#include "clock.h"
#include "pcapng.h"
#include "say.h"
#include "xpile/features.h"
#include "xpile/xsk.h" /* XDP_PKT_CONTD where the system headers lack it */

#define CAP_CHUNK_MAX (256u << 10)
#define CAP_FLUSH_NS 1000000ull /* an idle producer's chunk waits at most this long */
#define CAP_FILE_INFLIGHT 32u /* writes in flight to a file (each at its own offset) */
#define CAP_SQ_ENTRIES 64u
#define CAP_STOP_NS 2000000000ull /* at the stop, how long the writes may take */

struct ut_cap_ring {
	/* Worker's side. */
	__u64 prod; /* chunks published: release-stored by the worker */
	__u64 cons_seen; /* the worker's last look at cons */
	__u8 *cur; /* chunk being filled; NULL: none */
	__u32 len, frames; /* in cur */
	__u64 first_ns; /* CLOCK_REALTIME of cur's first record */
	__u64 captured, dropped; /* frames: written by the worker, read relaxed */
	unsigned int dirs;
	__u32 snaplen;
	const struct xp_rule *rule; /* NULL: every frame; loaded once per batch (acquire) */
	struct ut_cap *cap;
	__u32 nchunks, chunk_size;
	__u8 *mem;
	__u32 *chunk_len, *chunk_frames; /* set before the chunk is published */
	/* Capture thread's side, on its own line. */
	__u64 cons __attribute__((aligned(64))); /* chunks given back: release-stored */
	__u64 sub; /* next chunk to write */
	__u64 *chunk_off; /* file offset of each chunk in flight */
	__u32 *chunk_done; /* bytes written so far */
	__u8 *chunk_state; /* 0 free/filling, 1 in flight, 2 finished */
};

struct ut_cap {
	const char *name;
	int fd;
	bool regular; /* a file: writes at offsets, several in flight; else one at a time */
	bool uring, fixed;
	struct io_uring ring;
	pthread_t thread;
	bool started;
	int stop; /* main thread: workers gone, every chunk published */
	int failed; /* capture thread: a write failed; workers stop copying */
	int paused; /* ut_cap_pause(): producers copy nothing meanwhile */
	__u64 off; /* next file offset */
	/* Rotation: the header every file starts with, and the files so far. */
	__u8 *hdr;
	__u64 hdr_len, limit;
	__u32 nfiles;
	__u64 fail_off; /* regular file: where the first failed chunk began */
	__u32 inflight;
	__u64 frames, bytes; /* written out */
	__u64 lost; /* frames in chunks a failed write threw away */
	__u32 nrings;
	struct ut_cap_ring **rings;
	__u32 nsubmit; /* SQEs prepared since the last submit */
};

int ut_write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p = (const __u8 *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* The next file of a rotating capture, once the last one's writes have landed (the
 * capture thread): FILE1, FILE2... like tcpdump -C. A failure stops the capture. */
static void rotate(struct ut_cap *c)
{
	char path[4096];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s%u", c->name, c->nfiles);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		err = errno;
	else if (c->fixed && io_uring_register_files_update(&c->ring, 0, &fd, 1) != 1)
		err = EIO;
	if (!err) {
		close(c->fd);
		c->fd = fd;
		c->off = 0; /* a header that does not fit leaves an empty file */
		err = -ut_write_all(fd, c->hdr, c->hdr_len);
	} else if (fd >= 0) {
		close(fd);
	}
	if (err) {
		ut_say(0,
		       "capture: %s: cannot start the next file: %s; capture stopped after %llu frames, the engine goes on",
		       path, strerror(err), (unsigned long long)c->frames);
		c->fail_off = c->off;
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
		return;
	}
	c->nfiles++;
	c->off = c->hdr_len;
}

static void ring_free(struct ut_cap_ring *r)
{
	if (!r)
		return;
	free(r->mem);
	free(r->chunk_len);
	free(r->chunk_frames);
	free(r->chunk_off);
	free(r->chunk_done);
	free(r->chunk_state);
	free(r);
}

static struct ut_cap_ring *ring_new(const struct ut_cap_opts *o, struct ut_cap *c)
{
	__u32 min = pcapng_epb_size(o->snaplen), size = o->buffer / 4;
	struct ut_cap_ring *r;

	r = aligned_alloc(64, (sizeof(*r) + 63) & ~(size_t)63);
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	if (size > CAP_CHUNK_MAX)
		size = CAP_CHUNK_MAX;
	if (size < min)
		size = min;
	size = (size + 4095) & ~4095u;
	r->chunk_size = size;
	r->nchunks = o->buffer / size;
	if (r->nchunks < 2)
		r->nchunks = 2;
	r->dirs = o->dirs;
	r->snaplen = o->snaplen;
	r->rule = o->rule;
	r->cap = c;
	r->mem = aligned_alloc(4096, (size_t)r->nchunks * size);
	r->chunk_len = calloc(r->nchunks, sizeof(*r->chunk_len));
	r->chunk_frames = calloc(r->nchunks, sizeof(*r->chunk_frames));
	r->chunk_off = calloc(r->nchunks, sizeof(*r->chunk_off));
	r->chunk_done = calloc(r->nchunks, sizeof(*r->chunk_done));
	r->chunk_state = calloc(r->nchunks, 1);
	if (!r->mem || !r->chunk_len || !r->chunk_frames || !r->chunk_off || !r->chunk_done ||
	    !r->chunk_state) {
		ring_free(r);
		return NULL;
	}
	/* Touched now: a page fault on the worker's path costs more than 30 copies. */
	memset(r->mem, 0, (size_t)r->nchunks * size);
	return r;
}

int ut_cap_create(const struct ut_cap_opts *o, struct ut_cap **out)
{
	struct ut_cap *c = calloc(1, sizeof(*c));
	struct stat st;
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->name = o->name;
	c->fd = o->fd;
	c->regular = !fstat(c->fd, &st) && S_ISREG(st.st_mode);
	c->limit = c->regular ? o->limit : 0;
	c->nfiles = 1;
	c->hdr = malloc(o->hdr_len ? o->hdr_len : 1);
	c->rings = calloc(o->nrings ? o->nrings : 1, sizeof(struct ut_cap_ring *));
	if (!c->hdr || !c->rings) {
		ut_cap_destroy(c);
		return -ENOMEM;
	}
	memcpy(c->hdr, o->hdr, o->hdr_len);
	c->hdr_len = o->hdr_len;
	c->off = o->hdr_len;
	for (__u32 i = 0; i < o->nrings; i++) {
		c->rings[i] = ring_new(o, c);
		if (!c->rings[i]) {
			ut_cap_destroy(c);
			return -ENOMEM;
		}
		c->nrings++;
	}
	err = io_uring_queue_init(CAP_SQ_ENTRIES, &c->ring, 0);
	if (err) {
		char why[256];

		/* io_uring refused (kernel.io_uring_disabled, seccomp): same chunks, write(). */
		ut_say(0, "capture: io_uring refused (%s): writing with write()",
		       xp_uring_refusal(err, "io_uring_setup", why, sizeof(why)));
	} else {
		c->uring = true;
		c->fixed = !io_uring_register_files(&c->ring, &c->fd, 1);
	}
	*out = c;
	return 0;
}

struct ut_cap_ring *ut_cap_ring(struct ut_cap *c, __u32 i)
{
	return i < c->nrings ? c->rings[i] : NULL;
}

void ut_cap_info(const struct ut_cap *c, struct ut_cap_info *in)
{
	in->nchunks = c->nrings ? c->rings[0]->nchunks : 0;
	in->chunk_size = c->nrings ? c->rings[0]->chunk_size : 0;
	in->uring = c->uring;
}

/* ---- the worker's side ---- */

static void publish(struct ut_cap_ring *r)
{
	__u32 idx = (__u32)(r->prod % r->nchunks);

	r->chunk_len[idx] = r->len;
	r->chunk_frames[idx] = r->frames;
	__atomic_store_n(&r->prod, r->prod + 1, __ATOMIC_RELEASE);
	r->cur = NULL;
}

static __u8 *reserve(struct ut_cap_ring *r, __u32 need, __u64 now)
{
	if (r->cur) {
		if (r->len + need <= r->chunk_size)
			return r->cur + r->len;
		publish(r);
	}
	if (r->prod - r->cons_seen >= r->nchunks) {
		r->cons_seen = __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
		if (r->prod - r->cons_seen >= r->nchunks)
			return NULL;
	}
	r->cur = r->mem + (size_t)(r->prod % r->nchunks) * r->chunk_size;
	r->len = 0;
	r->frames = 0;
	r->first_ns = now;
	return r->cur;
}

/* One timestamp per batch: a clock read per frame would cost the worker more than the
 * copy (~20 ns). Frames of one batch arrived together anyway. */
void ut_cap_pause(struct ut_cap *c, bool on)
{
	__atomic_store_n(&c->paused, on, __ATOMIC_RELAXED);
}

bool ut_cap_paused(const struct ut_cap *c)
{
	return __atomic_load_n(&c->paused, __ATOMIC_RELAXED);
}

void ut_cap_rule_set(struct ut_cap *c, const struct xp_rule *rule)
{
	for (__u32 i = 0; i < c->nrings; i++)
		__atomic_store_n(&c->rings[i]->rule, rule, __ATOMIC_RELEASE);
}

void ut_cap_batch(struct ut_cap_ring *r, __u32 ifid, const struct xp_layout *l, void *base,
		  __u32 queue, const struct xdp_desc *d, __u32 n, unsigned int dir)
{
	__u32 flags = dir == UT_CAP_RX ? PCAPNG_EPB_DIR_IN : PCAPNG_EPB_DIR_OUT;
	__u32 i, j, k, orig, caplen, off, m, size;
	const struct xp_rule *rule;
	__u64 now;
	__u8 *p;

	if (!(r->dirs & dir) || !n || __atomic_load_n(&r->cap->failed, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&r->cap->paused, __ATOMIC_RELAXED))
		return;
	/* Once per batch: a rule replaced meanwhile is freed only after a grace period. */
	rule = __atomic_load_n(&r->rule, __ATOMIC_ACQUIRE);
	now = ut_realtime_ns();
	for (i = 0; i < n; i = j) {
		orig = 0;
		j = i;
		do
			orig += d[j].len;
		while ((d[j++].options & XDP_PKT_CONTD) && j < n);
		if (rule &&
		    !xp_rule_match(rule, xp_layout_ptr(l, base, d[i].addr), d[i].len, queue))
			continue;
		caplen = orig < r->snaplen ? orig : r->snaplen;
		size = pcapng_epb_size(caplen);
		p = reserve(r, size, now);
		if (!p) {
			r->dropped++;
			continue;
		}
		pcapng_epb_start(p, ifid, now, caplen, orig);
		for (k = i, off = 0; k < j && off < caplen; k++, off += m) {
			m = d[k].len < caplen - off ? d[k].len : caplen - off;
			memcpy(p + 28 + off, xp_layout_ptr(l, base, d[k].addr), m);
		}
		pcapng_epb_finish(p, caplen, flags);
		r->len += size;
		r->frames++;
		r->captured++;
	}
}

__u64 ut_cap_dropped(const struct ut_cap_ring *r)
{
	return r ? __atomic_load_n(&r->dropped, __ATOMIC_RELAXED) : 0;
}

void ut_cap_idle(struct ut_cap_ring *r)
{
	if (r->cur && ut_realtime_ns() - r->first_ns >= CAP_FLUSH_NS)
		publish(r);
}

/* ---- the capture thread ---- */

static void chunk_release(struct ut_cap_ring *r)
{
	__u64 cons = r->cons;

	while (cons < r->sub && r->chunk_state[cons % r->nchunks] == 2) {
		r->chunk_state[cons % r->nchunks] = 0;
		cons++;
	}
	__atomic_store_n(&r->cons, cons, __ATOMIC_RELEASE);
}

static void write_failed(struct ut_cap *c, struct ut_cap_ring *r, __u32 idx, int err)
{
	if (!c->failed && err) {
		ut_say(0,
		       "capture: %s: write failed: %s; capture stopped after %llu frames, the engine goes on%s",
		       c->name, strerror(err), (unsigned long long)c->frames,
		       err == ENOSPC || err == EDQUOT ?
			       " (free space or give --capture another file)" :
		       err == EPIPE ? " (the reader closed the pipe)" :
				      "");
		c->fail_off = r->chunk_off[idx];
		__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
	} else if (err && r->chunk_off[idx] < c->fail_off) {
		c->fail_off = r->chunk_off[idx];
	}
	c->lost += r->chunk_frames[idx];
	r->chunk_state[idx] = 2;
}

static void chunk_written(struct ut_cap *c, struct ut_cap_ring *r, __u32 idx)
{
	c->frames += r->chunk_frames[idx];
	c->bytes += r->chunk_len[idx];
	r->chunk_state[idx] = 2;
}

/* Queues the rest of chunk @idx of ring @ri; without io_uring writes it now. */
static void chunk_write(struct ut_cap *c, __u32 ri, __u32 idx)
{
	struct ut_cap_ring *r = c->rings[ri];
	const __u8 *p = r->mem + (size_t)idx * r->chunk_size + r->chunk_done[idx];
	__u32 left = r->chunk_len[idx] - r->chunk_done[idx];
	__u64 off = r->chunk_off[idx] + r->chunk_done[idx];
	struct io_uring_sqe *sqe;
	ssize_t k;

	if (!c->uring) {
		while (left) {
			k = c->regular ? pwrite(c->fd, p, left, (off_t)off) : write(c->fd, p, left);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				write_failed(c, r, idx, k < 0 ? errno : ENOSPC);
				return;
			}
			p += k;
			off += (__u64)k;
			left -= (__u32)k;
		}
		chunk_written(c, r, idx);
		return;
	}
	sqe = io_uring_get_sqe(&c->ring);
	if (!sqe) {
		io_uring_submit(&c->ring);
		c->nsubmit = 0;
		sqe = io_uring_get_sqe(&c->ring);
	}
	/* A pipe has no offsets: -1 writes at its current position. */
	io_uring_prep_write(sqe, c->fixed ? 0 : c->fd, p, left, c->regular ? off : (__u64)-1);
	if (c->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, (__u64)ri << 32 | idx);
	r->chunk_state[idx] = 1;
	c->inflight++;
	c->nsubmit++;
}

/* Takes every published chunk it may have in flight; a failed capture drops them. */
static bool take_published(struct ut_cap *c)
{
	__u32 max = c->regular ? CAP_FILE_INFLIGHT : 1, ri, idx;
	bool any = false;

	for (ri = 0; ri < c->nrings; ri++) {
		struct ut_cap_ring *r = c->rings[ri];
		__u64 prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);

		while (r->sub < prod && (c->failed || c->inflight < max)) {
			idx = (__u32)(r->sub % r->nchunks);
			if (c->limit && !c->failed && c->off > c->hdr_len &&
			    c->off + r->chunk_len[idx] > c->limit) {
				if (c->inflight)
					break; /* the full file's writes land first */
				rotate(c);
			}
			r->sub++;
			any = true;
			r->chunk_done[idx] = 0;
			r->chunk_off[idx] = c->off;
			if (c->failed) {
				c->lost += r->chunk_frames[idx];
				r->chunk_state[idx] = 2;
				continue;
			}
			c->off += r->chunk_len[idx];
			chunk_write(c, ri, idx);
		}
		chunk_release(r);
	}
	return any;
}

static void reap(struct ut_cap *c)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&c->ring, head, cqe)
	{
		__u32 ri = (__u32)(cqe->user_data >> 32), idx = (__u32)cqe->user_data;
		struct ut_cap_ring *r = c->rings[ri];

		seen++;
		c->inflight--;
		if (cqe->res <= 0) {
			write_failed(c, r, idx, cqe->res < 0 ? -cqe->res : ENOSPC);
			continue;
		}
		r->chunk_done[idx] += (__u32)cqe->res;
		if (c->failed && r->chunk_off[idx] >= c->fail_off)
			write_failed(c, r, idx, 0); /* past the cut: the file ends before it */
		else if (r->chunk_done[idx] < r->chunk_len[idx] && !c->failed)
			chunk_write(c, ri, idx); /* short write: the rest, at once */
		else if (r->chunk_done[idx] < r->chunk_len[idx])
			write_failed(c, r, idx, ENOSPC);
		else
			chunk_written(c, r, idx);
	}
	io_uring_cq_advance(&c->ring, seen);
	for (__u32 ri = 0; ri < c->nrings; ri++)
		chunk_release(c->rings[ri]);
}

static bool all_done(struct ut_cap *c)
{
	for (__u32 ri = 0; ri < c->nrings; ri++)
		if (c->rings[ri]->sub != __atomic_load_n(&c->rings[ri]->prod, __ATOMIC_ACQUIRE))
			return false;
	return !c->inflight;
}

static void *capture_main(void *arg)
{
	struct ut_cap *c = arg;
	struct __kernel_timespec ts = { .tv_nsec = 1000000 };
	struct timespec nap = { .tv_nsec = 500000 };
	struct io_uring_cqe *cqe;

	__u64 deadline = 0;

	for (;;) {
		bool stopping = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);

		/* A reader that stopped reading must not hold the engine's exit. */
		if (stopping && !deadline)
			deadline = ut_now_ns() + CAP_STOP_NS;
		if (deadline && ut_now_ns() > deadline) {
			ut_say(0,
			       "capture: %s: the reader did not take the last chunks within %llu s; %u write(s) abandoned",
			       c->name, CAP_STOP_NS / 1000000000ull, c->inflight);
			break;
		}

		take_published(c);
		if (c->uring && c->nsubmit) {
			io_uring_submit(&c->ring);
			c->nsubmit = 0;
		}
		if (c->uring && c->inflight) {
			io_uring_wait_cqe_timeout(&c->ring, &cqe, &ts);
			reap(c);
		} else if (stopping && all_done(c)) {
			break;
		} else {
			/* Workers never signal (no syscall on their path): look again soon. */
			nanosleep(&nap, NULL);
		}
	}
	return NULL;
}

int ut_cap_start(struct ut_cap *c)
{
	int err = pthread_create(&c->thread, NULL, capture_main, c);

	if (err)
		return ut_say(-err, "cannot start the capture thread");
	c->started = true;
	return 0;
}

int ut_cap_stop(struct ut_cap *c, struct ut_cap_stats *st)
{
	bool was = c->started;
	__u64 dropped = 0;
	__u32 i;

	if (c->started) {
		for (i = 0; i < c->nrings; i++)
			if (c->rings[i]->cur)
				publish(c->rings[i]);
		__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
		pthread_join(c->thread, NULL);
		c->started = false;
		/* Chunks after a failed one may have landed: cut the file back to whole
		 * records. */
		if (c->failed && c->regular && ftruncate(c->fd, (off_t)c->fail_off))
			ut_say(0, "capture: %s: cannot cut the file back after the error: %s",
			       c->name, strerror(errno));
	}
	for (i = 0; i < c->nrings; i++)
		dropped += c->rings[i]->dropped;
	if (st)
		*st = (struct ut_cap_stats){ .frames = c->frames,
					     .bytes = c->bytes,
					     .dropped = dropped,
					     .lost = c->lost,
					     .files = c->nfiles,
					     .failed = c->failed };
	return was;
}

void ut_cap_destroy(struct ut_cap *c)
{
	if (!c)
		return;
	ut_cap_stop(c, NULL);
	if (c->uring)
		io_uring_queue_exit(&c->ring);
	for (__u32 i = 0; i < c->nrings; i++)
		ring_free(c->rings[i]);
	if (c->fd > STDOUT_FILENO)
		close(c->fd);
	free(c->rings);
	free(c->hdr);
	free(c);
}
