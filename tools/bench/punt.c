// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench punt: what the host TAPs' I/O costs per frame, the engine's way against
 * the per-frame syscall, alternating runs.
 * - punt (engine -> host): io_uring WRITE_FIXED from a registered buffer, registered
 *   file and ring fd, one submit per batch of 32 (user/tap.c, per loop turn) against
 *   write() per frame; the stack drops what it gets (no address), as in the prototypes.
 *   A third variant posts no completion for a write that succeeded (measured, not in
 *   the engine: docs/hybrid.md).
 * - inject (host -> engine): the TAP's queue is filled by a packet socket on it, then
 *   drained by read() per frame, by 32 READ_FIXED kept posted (the engine's fallback)
 *   and by one multishot read over a ring of --bufs provided buffers, given back once
 *   per batch of completions (the engine's inject, tools/util/uring_buf.h, user/tap.c).
 * The variants alternate every round (--prefill frames), so a change of load in a run
 * hits them alike; the ring is set up as the engine's TAP ring unless --ring says.
 * The TAP lives in a network namespace of the bench's own (unshare): nothing is left.
 * A second thread sleeps through the runs: the engine is a process of several threads,
 * where read() and write() cost more than in one of one (glibc's cancellation points,
 * the kernel's reference on a shared file table's file), and io_uring's registered
 * files do not.
 */

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/if_tun.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <pthread.h>

#include <liburing.h>

#include "uring_buf.h"
#include "bench.h"
#include "benchutil.h"
#include "punt_thread.h"

#define BATCH 32u
#define SLOT ((size_t)2048)

struct punt_args {
	__u32 runs, pkt, bufs, prefill, cq, read_bufs;
	__u64 frames;
	int dir, only, ring;
	bool single;
};

/* Set from the options once: the buffers (the punt uses BATCH, the inject's ring
 * nslot), the frames queued on the TAP per inject round (its queue holds 2x). */
static __u32 nslot = 256, prefill_n = 4096;

static const struct cli_name dir_names[] = { CLI_NAME("both", 0),
					     CLI_NAME("punt", 1),
					     CLI_NAME("inject", 2),
					     { 0 } };
static const struct cli_name only_names[] = { CLI_NAME("all", 0),
					      CLI_NAME("fixed", 1),
					      CLI_NAME("mshot", 2),
					      { 0 } };
static const struct cli_name ring_names[] = { CLI_NAME("coop", 0),
					      CLI_NAME("plain", 1),
					      CLI_NAME("single", 2),
					      CLI_NAME("defer", 3),
					      { 0 } };

#define OPT(...) CLI_OPT(struct punt_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("runs", NUM, runs, "N", "runs per variant and size (default 7)", .min = 1, .max = 1000),
	OPT("pkt-size", NUM, pkt, "BYTES", "frame size, 60..1514 (default: 64 and 1500)", .min = 60,
	    .max = 1514),
	OPT("frames", NUM, frames, "N", "frames per run (default 300000)", .min = 64,
	    .max = 1ull << 32),
	OPT("dir", ENUM, dir, "both|punt|inject", "which direction to time (default both)",
	    .names = dir_names),
	OPT("bufs", NUM, bufs, "N",
	    "provided buffers in the multishot read's ring, a power of two (default 256)",
	    .min = 32, .max = 8192),
	OPT("prefill", NUM, prefill, "N",
	    "frames queued on the TAP per inject round (default 4096; --frames rounds down to it)",
	    .min = 32, .max = 65536),
	OPT("cq", NUM, cq, "N", "completion queue entries (default 2048)", .min = 64, .max = 65536),
	OPT("single-threaded", FLAG, single, NULL,
	    "time in a process of one thread (by default a second thread sleeps through the "
	    "runs: the engine's workers are threads, and in a process of several glibc's "
	    "read() and write() mark themselves cancellation points and the kernel takes a "
	    "reference on the file per call, which io_uring's registered files do not)"),
	OPT("read-bufs", NUM, read_bufs, "N",
	    "buffers read() cycles through, apart from the io_uring variants' (default: the "
	    "same --bufs); 8192 with --bufs 2048 --prefill 8192 is the prototypes' shape, "
	    "read() into colder memory than the multishot's",
	    .min = 32, .max = 65536),
	OPT("only", ENUM, only, "all|fixed|mshot",
	    "inject: read() and only this io_uring variant (default all; for profiles)",
	    .names = only_names),
	OPT("ring", ENUM, ring, "coop|plain|single|defer",
	    "the ring's task-run set-up: COOP_TASKRUN|TASKRUN_FLAG (default: the engine's TAP "
	    "ring), none, SINGLE_ISSUER, SINGLE_ISSUER|DEFER_TASKRUN",
	    .names = ring_names),
	{ 0 },
};

BENCH_COMMAND(
	bench_punt_cmd, bench_punt, "punt", NULL,
	"host TAP I/O: io_uring against write() and read() per frame", opts,
	.description =
		"Punt: writes --frames Ethernet frames to a TAP in a namespace of its own, "
		"alternating write() per frame, io_uring WRITE_FIXED (registered "
		"buffer, file and ring fd, 32 per submit: the engine's punt) and the "
		"same with RWF_NOWAIT and IOSQE_CQE_SKIP_SUCCESS (no completion but a "
		"failed write's: a lever measured, not taken), and a slow-path thread on "
		"another core that the worker hands each frame to over a ring (the "
		"design not taken: thread_ns is its cost per frame, handoff_ns the "
		"worker's). Inject: "
		"fills the TAP's queue with --prefill frames from a packet socket and "
		"drains it, alternating read() per frame, 32 READ_FIXED kept posted and "
		"one multishot read with a provided-buffer ring of --bufs (the engine's "
		"inject), and batches of 32 READ_FIXED with RWF_NOWAIT in one submit "
		"(measured, not taken), until --frames were read; the variants alternate every "
		"--prefill frames. The process keeps a second thread asleep, as the "
		"engine is never single-threaded (--single-threaded: without it and "
		"without the slow-path thread). Prints per run\n"
		"  punt pkt=B write_ns=X uring_ns=Y skip_ns=Z thread_ns=T handoff_ns=H "
		"ratio=Y/X skip_ratio=Z/X\n"
		"  inject pkt=B read_ns=X fixed_ns=Y mshot_ns=Z batch_ns=W ratio=Z/X "
		"batch_ratio=W/X\n"
		"(wall ns per frame), the medians and how often the multishot read "
		"ended (a full CQ, no buffer left). Needs root (CAP_NET_ADMIN).",
	.examples = "xpile-bench punt --runs 11\nxpile-bench punt --dir inject --pkt-size 1500");

static int tap_open(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd, s;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xpb0");
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr))
		return -errno;
	/* No IPv6: its router and listener messages would land in the queue being timed. */
	s = open("/proc/sys/net/ipv6/conf/xpb0/disable_ipv6", O_WRONLY | O_CLOEXEC);
	if (s >= 0) {
		if (write(s, "1", 1) != 1)
			return -errno;
		close(s);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		return -errno;
	ifr.ifr_qlen = 2 * prefill_n; /* the queue a reader drains: holds a whole round */
	if (ioctl(s, SIOCSIFTXQLEN, &ifr))
		return -errno;
	close(s);
	return fd;
}

/* A packet socket on the TAP: what it sends lands in the TAP's queue for its reader. */
static int host_open(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), one = 1;

	sll.sll_ifindex = (int)if_nametoindex("xpb0");
	if (s < 0 || !sll.sll_ifindex ||
	    setsockopt(s, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&sll, sizeof(sll)))
		return -errno;
	return s;
}

static int prefill(int s, const __u8 *frame, __u32 len)
{
	for (__u32 i = 0; i < prefill_n; i++)
		if (send(s, frame, len, 0) != (ssize_t)len)
			return -errno;
	return 0;
}

static double run_write(int fd, const __u8 *buf, __u32 len, __u64 n)
{
	double t0 = bench_now_ns();

	for (__u64 i = 0; i < n; i++)
		if (write(fd, buf + (i % BATCH) * SLOT, len) != (ssize_t)len)
			return -1;
	return (bench_now_ns() - t0) / (double)n;
}

/*
 * The engine's punt: WRITE_FIXED, one submit per BATCH, then the completions. With
 * @skip, the punt without completions: RWF_NOWAIT keeps every write inline (a write
 * that would wait fails with -EAGAIN instead of going to io-wq or a poll), so each
 * write the submit consumed is done when it returns, and IOSQE_CQE_SKIP_SUCCESS
 * leaves a completion only for a failed one.
 */
static double run_uring(struct io_uring *r, __u32 len, __u8 *buf, __u64 n, bool skip)
{
	struct io_uring_cqe *cqe;
	double t0 = bench_now_ns();

	for (__u64 done = 0; done < n; done += BATCH) {
		for (__u32 i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(r);

			io_uring_prep_write_fixed(sqe, 0, buf + i * SLOT, len, 0, 0);
			sqe->flags |= IOSQE_FIXED_FILE;
			if (skip) {
				sqe->rw_flags = RWF_NOWAIT;
				sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
			}
		}
		if (skip) {
			if (io_uring_submit(r) != (int)BATCH || !io_uring_peek_cqe(r, &cqe))
				return -1;
			continue;
		}
		io_uring_submit_and_wait(r, BATCH);
		for (__u32 i = 0; i < BATCH; i++) {
			if (io_uring_wait_cqe(r, &cqe) || cqe->res != (int)len)
				return -1;
			io_uring_cqe_seen(r, cqe);
		}
	}
	return (bench_now_ns() - t0) / (double)n;
}

static __u64 mshot_ends; /* completions without F_MORE: the read armed again */

/* What a round's variants need. */
struct punt_ctx {
	int fd, hs, only;
	struct io_uring *ring;
	struct ut_bufring *b;
	__u8 *buf;
	__u8 *rbuf; /* read()'s own buffers, --read-bufs of them, or buf */
	__u32 nrbuf, rnext;
	struct punt_thread *pt; /* the shared slow-path thread's variant */
	double handoff; /* what its handoff cost the worker, summed over rounds */
};

/* Each inject runner drains @rounds prefilled queues; the prefill is not timed. read()
 * goes on through its buffers from round to round. */
static double run_read(struct punt_ctx *c, __u32 len, __u32 rounds)
{
	double t = 0;

	for (__u32 r = 0; r < rounds; r++) {
		if (prefill(c->hs, c->buf + nslot * SLOT, len))
			return -1;
		double t0 = bench_now_ns();

		for (__u32 i = 0; i < prefill_n; i++) {
			if (read(c->fd, c->rbuf + (size_t)c->rnext * SLOT, SLOT) != (ssize_t)len)
				return -1;
			if (++c->rnext >= c->nrbuf)
				c->rnext = 0;
		}
		t += bench_now_ns() - t0;
	}
	return t / ((double)rounds * prefill_n);
}

/* Waits for @n completions (1 s at most: a lost frame must not hang the bench). */
static int reap_n(struct io_uring *r, struct io_uring_cqe **cqe, __u32 n)
{
	struct __kernel_timespec ts = { .tv_sec = 1 };

	return io_uring_wait_cqes(r, cqe, n, &ts, NULL);
}

static int reap_one(struct io_uring *r, struct io_uring_cqe **cqe)
{
	return reap_n(r, cqe, 1);
}

static double run_read_fixed(struct io_uring *r, int s, __u8 *buf, __u32 len, __u32 rounds)
{
	struct io_uring_cqe *cqe;
	double t = 0;

	for (__u32 k = 0; k < rounds; k++) {
		__u32 got = 0, posted = 0;

		if (prefill(s, buf + nslot * SLOT, len))
			return -1;
		double t0 = bench_now_ns();

		while (got < prefill_n) {
			while (posted - got < BATCH && posted < prefill_n) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(r);

				io_uring_prep_read_fixed(sqe, 0, buf + (posted % nslot) * SLOT,
							 SLOT, 0, 0);
				sqe->flags |= IOSQE_FIXED_FILE;
				posted++;
			}
			io_uring_submit(r);
			if (reap_one(r, &cqe) || cqe->res != (int)len)
				return -1;
			io_uring_cqe_seen(r, cqe);
			got++;
		}
		t += bench_now_ns() - t0;
	}
	return t / ((double)rounds * prefill_n);
}

/* Reads the way the punt writes: 32 READ_FIXED with RWF_NOWAIT in one submit, each done
 * inline (a read that finds the queue empty fails with -EAGAIN instead of arming a
 * poll), then their completions: no poll and no task work per frame (measured for
 * docs/hybrid.md; the engine reads with the multishot). */
static double run_read_batch(struct io_uring *r, int s, __u8 *buf, __u32 len, __u32 rounds)
{
	struct io_uring_cqe *cqe;
	double t = 0;

	for (__u32 k = 0; k < rounds; k++) {
		if (prefill(s, buf + nslot * SLOT, len))
			return -1;
		double t0 = bench_now_ns();

		for (__u32 got = 0; got < prefill_n; got += BATCH) {
			for (__u32 i = 0; i < BATCH; i++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(r);

				io_uring_prep_read_fixed(sqe, 0, buf + ((got + i) % nslot) * SLOT,
							 SLOT, 0, 0);
				sqe->rw_flags = RWF_NOWAIT;
				sqe->flags |= IOSQE_FIXED_FILE;
			}
			if (io_uring_submit_and_wait(r, BATCH) != (int)BATCH)
				return -1;
			for (__u32 i = 0; i < BATCH; i++) {
				if (reap_one(r, &cqe) || cqe->res != (int)len)
					return -1;
				io_uring_cqe_seen(r, cqe);
			}
		}
		t += bench_now_ns() - t0;
	}
	return t / ((double)rounds * prefill_n);
}

static double run_mshot(struct io_uring *r, struct ut_bufring *b, int s, __u8 *buf, __u32 len,
			__u32 rounds)
{
	struct io_uring_cqe *cqe;
	__u64 arms = 0;
	double t = 0;

	for (__u32 k = 0; k < rounds; k++) {
		__u32 got = 0, back = 0;
		bool armed = false;

		if (prefill(s, buf + nslot * SLOT, len))
			return -1;
		double t0 = bench_now_ns();

		while (got < prefill_n) {
			unsigned int head, seen = 0;

			if (!armed) {
				ut_prep_read_multishot(io_uring_get_sqe(r), 0, true, b->bgid);
				io_uring_submit(r);
				armed = true;
			}
			/* What is there, or a wait for the first: the kernel runs the reads in task
			 * work and posts them in bulk (a wait for a count of them would hang on a
			 * CQ overflow, whose last completion shows only at the next enter). */
			if (reap_one(r, &cqe))
				return -1;
			/* The buffers given back once per batch, as tap.c's mshot_post(). */
			io_uring_for_each_cqe(r, head, cqe)
			{
				if (!(cqe->flags & IORING_CQE_F_MORE)) {
					armed = false; /* ended (a full CQ, no buffer): again */
					arms++;
				}
				if (cqe->res == -ENOBUFS) {
					seen++;
					continue;
				}
				if (cqe->res != (int)len || !(cqe->flags & IORING_CQE_F_BUFFER))
					return -1;
				__u16 bid = (__u16)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);

				ut_bufring_add(b, buf + (size_t)bid * SLOT, SLOT, bid, (int)back++);
				seen++;
				got++;
			}
			io_uring_cq_advance(r, seen);
			ut_bufring_publish(b, (int)back);
			back = 0;
		}
		t += bench_now_ns() - t0;
		if (armed) { /* stop it, or it takes the next variant's frames */
			struct io_uring_sqe *sqe = io_uring_get_sqe(r);

			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			io_uring_sqe_set_data64(sqe, 1);
			io_uring_submit(r);
			while (armed && !reap_one(r, &cqe)) {
				if (cqe->user_data == 0 && !(cqe->flags & IORING_CQE_F_MORE))
					armed = false;
				io_uring_cqe_seen(r, cqe);
			}
		}
	}
	mshot_ends += arms;
	return t / ((double)rounds * prefill_n);
}

/* Variant @v (0 the per-frame syscall) of direction @dir (1 punt, 2 inject): ns per
 * frame over one round of prefill_n frames; 1 for an inject variant --only leaves out. */
static double variant(struct punt_ctx *c, int dir, int v, __u32 pkt)
{
	if (dir == 1 && v == 3) {
		double ho, x = punt_thread_run(c->pt, pkt, nslot, prefill_n, &ho);

		c->handoff += ho;
		return x;
	}
	if (dir == 1)
		return v == 0 ? run_write(c->fd, c->buf, pkt, prefill_n) :
				run_uring(c->ring, pkt, c->buf, prefill_n, v == 2);
	if (v == 0)
		return run_read(c, pkt, 1);
	if (v == 1)
		return c->only != 2 ? run_read_fixed(c->ring, c->hs, c->buf, pkt, 1) : 1;
	if (v == 2)
		return c->only != 1 ? run_mshot(c->ring, c->b, c->hs, c->buf, pkt, 1) : 1;
	return c->only ? 1 : run_read_batch(c->ring, c->hs, c->buf, pkt, 1);
}

/* Round @k of direction @dir: its @n variants in turned order every other round, so a
 * change of the machine's load in a run hits them alike; adds each one's figure to @t. */
static int round_n(struct punt_ctx *c, int dir, int n, __u32 k, __u32 pkt, double *t)
{
	double x[4];

	for (int v0 = 0; v0 < n; v0++) {
		int v = k & 1 ? n - 1 - v0 : v0;

		x[v] = variant(c, dir, v, pkt);
		if (x[v] < 0)
			return -1;
	}
	for (int v = 0; v < n; v++)
		t[v] += x[v];
	return 0;
}

/* @rounds rounds of direction @dir's @n variants at @pkt: each one's mean ns per frame
 * into *fig[v] (0 for a variant past @n). */
static int time_rounds(struct punt_ctx *c, int dir, int n, __u32 rounds, __u32 pkt,
		       double *const fig[4])
{
	double t[4] = { 0 };

	for (__u32 k = 0; k < rounds; k++)
		if (round_n(c, dir, n, k, pkt, t))
			return -1;
	for (int v = 0; v < 4; v++)
		*fig[v] = t[v] / rounds;
	return 0;
}

/* The second thread of a process that must not be single-threaded: it waits on @arg
 * (a pipe's read end) until the bench closes the other end. */
static void *sleeper_main(void *arg)
{
	char c;

	while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void summary(const char *what, __u32 pkt, __u32 runs, double *base, double *v)
{
	double ratio[1000];

	for (__u32 r = 0; r < runs; r++)
		ratio[r] = v[r] / base[r];
	printf("%s median pkt=%u runs=%u %s_ns=%.0f uring_ns=%.0f ratio=%.2f\n", what, pkt, runs,
	       what[0] == 'p' ? "write" : "read", bench_median(base, runs), bench_median(v, runs),
	       bench_median(ratio, runs));
}

int bench_punt(int argc, char **argv)
{
	struct punt_args a = {
		.runs = 7, .frames = 300000, .bufs = 256, .prefill = 4096, .cq = 2048
	};
	static const unsigned int ring_flags[] = {
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		0,
		IORING_SETUP_SINGLE_ISSUER,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	struct io_uring_params par;
	__u32 sizes[2] = { 64, 1500 }, ns, s, r, rounds;
	static double w[2][1000], u[2][1000], sk[2][1000], th[2][1000], ho[2][1000], rd[2][1000],
		fx[2][1000], ms[2][1000], bt[2][1000];
	struct ut_bufring b;
	struct io_uring ring;
	struct punt_ctx c;
	pthread_t sleeper;
	int sleep_pipe[2];
	struct iovec iov;
	__u8 *buf;
	int rc = bench_parse(&bench_punt_cmd, argc, argv, &a), fd, hs;

	if (rc != CLI_RUN)
		return rc;
	if (a.bufs & (a.bufs - 1)) {
		fprintf(stderr, "xpile-bench punt: --bufs %u: a power of two, please\n", a.bufs);
		return 2;
	}
	nslot = a.bufs;
	prefill_n = a.prefill / BATCH * BATCH;
	if (a.frames < prefill_n)
		a.frames = prefill_n;
	if (a.pkt)
		sizes[0] = a.pkt;
	ns = a.pkt ? 1 : 2;
	rounds = (__u32)(a.frames / prefill_n);
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "xpile-bench punt: unshare(CLONE_NEWNET): %s; run as root\n",
			strerror(errno));
		return 1;
	}
	fd = tap_open();
	hs = fd < 0 ? fd : host_open();
	buf = aligned_alloc(4096, (nslot + 1) * SLOT);
	if (fd < 0 || hs < 0 || !buf) {
		fprintf(stderr, "xpile-bench punt: TAP: %s\n",
			strerror(fd < 0 ? -fd :
				 hs < 0 ? -hs :
					  ENOMEM));
		return 1;
	}
	/* Unicast to a MAC nobody has: the TAP's stack drops it early. The last slot is
	 * what the packet socket sends for the inject. */
	for (__u32 i = 0; i <= nslot; i++) {
		__u8 *f = buf + i * SLOT;
		static const __u8 eth[14] = { 2, 0, 0, 0, 0, 0x99, 2, 0, 0, 0, 0, 1, 8, 0 };

		memset(f, 0, SLOT);
		memcpy(f, eth, sizeof(eth));
	}
	/* By default the engine's TAP ring (tap.c: COOP_TASKRUN, not DEFER_TASKRUN, with
	 * which the prototypes' multishot read lost its gain); --ring for the others. */
	par = (struct io_uring_params){ .flags = ring_flags[a.ring] | IORING_SETUP_CQSIZE,
					.cq_entries = a.cq };
	rc = io_uring_queue_init_params(256, &ring, &par);
	iov = (struct iovec){ buf, (nslot + 1) * SLOT };
	if (rc || io_uring_register_buffers(&ring, &iov, 1) ||
	    io_uring_register_files(&ring, &fd, 1)) {
		fprintf(stderr, "xpile-bench punt: io_uring: %s\n", strerror(rc ? -rc : errno));
		return 1;
	}
	io_uring_register_ring_fd(&ring); /* as tap.c: no fdget per enter; optional */
	rc = ut_bufring_setup(&ring, &b, nslot, 0);
	if (rc) {
		fprintf(stderr, "xpile-bench punt: provided-buffer ring: %s (kernel 5.19+)\n",
			strerror(-rc));
		return 1;
	}
	for (__u32 i = 0; i < nslot; i++)
		ut_bufring_add(&b, buf + i * SLOT, SLOT, (__u16)i, (int)i);
	ut_bufring_publish(&b, (int)nslot);
	c = (struct punt_ctx){ .fd = fd,
			       .hs = hs,
			       .only = a.only,
			       .ring = &ring,
			       .b = &b,
			       .buf = buf,
			       .rbuf = buf,
			       .nrbuf = nslot };
	if (a.read_bufs && a.read_bufs != nslot) {
		c.nrbuf = a.read_bufs;
		c.rbuf = aligned_alloc(4096, (size_t)c.nrbuf * SLOT);
		if (!c.rbuf) {
			fprintf(stderr, "xpile-bench punt: --read-bufs %u: out of memory\n",
				a.read_bufs);
			return 1;
		}
	}
	if (!a.single && (pipe2(sleep_pipe, O_CLOEXEC) ||
			  pthread_create(&sleeper, NULL, sleeper_main, &sleep_pipe[0]))) {
		fprintf(stderr, "xpile-bench punt: a second thread: %s\n", strerror(errno));
		return 1;
	}
	/* Not with --single-threaded: its thread would make the process one of several. */
	rc = a.dir == 2 || a.single ? 0 :
				      punt_thread_start(&c.pt, fd, buf, (nslot + 1) * SLOT, SLOT);
	if (rc) {
		fprintf(stderr, "xpile-bench punt: slow-path thread: %s (needs 2 cores)\n",
			strerror(-rc));
		return 1;
	}
	for (r = 0; r < a.runs; r++)
		for (s = 0; s < ns; s++) {
			if (a.dir != 2) {
				double *const fig[4] = { &w[s][r], &u[s][r], &sk[s][r], &th[s][r] };

				c.handoff = 0;
				if (time_rounds(&c, 1, c.pt ? 4 : 3, rounds, sizes[s], fig)) {
					fprintf(stderr, "xpile-bench punt: a write failed\n");
					return 1;
				}
				ho[s][r] = c.handoff / rounds;
				printf("punt pkt=%u write_ns=%.0f uring_ns=%.0f skip_ns=%.0f thread_ns=%.0f handoff_ns=%.1f ratio=%.2f skip_ratio=%.2f\n",
				       sizes[s], w[s][r], u[s][r], sk[s][r], th[s][r], ho[s][r],
				       u[s][r] / w[s][r], sk[s][r] / w[s][r]);
			}
			if (a.dir != 1) {
				double *const fig[4] = { &rd[s][r], &fx[s][r], &ms[s][r],
							 &bt[s][r] };

				if (time_rounds(&c, 2, 4, rounds, sizes[s], fig)) {
					fprintf(stderr,
						"xpile-bench punt: a read failed or lost a frame\n");
					return 1;
				}
				printf("inject pkt=%u read_ns=%.0f fixed_ns=%.0f mshot_ns=%.0f batch_ns=%.0f ratio=%.2f batch_ratio=%.2f\n",
				       sizes[s], rd[s][r], fx[s][r], ms[s][r], bt[s][r],
				       ms[s][r] / rd[s][r], bt[s][r] / rd[s][r]);
			}
			fflush(stdout);
		}
	for (s = 0; s < ns; s++) {
		if (a.dir != 2) {
			summary("punt", sizes[s], a.runs, w[s], u[s]);
			summary("punt-skip", sizes[s], a.runs, w[s], sk[s]);
			if (c.pt)
				printf("punt-thread median pkt=%u runs=%u thread_ns=%.0f handoff_ns=%.1f uring_ns=%.0f (a slow-path thread's ns per frame, the handoff's to the worker, the worker's own io_uring punt)\n",
				       sizes[s], a.runs, bench_median(th[s], a.runs),
				       bench_median(ho[s], a.runs), bench_median(u[s], a.runs));
		}
		if (a.dir != 1) {
			summary("inject", sizes[s], a.runs, rd[s], ms[s]);
			summary("inject-fixed", sizes[s], a.runs, rd[s], fx[s]);
			if (!a.only)
				summary("inject-batch", sizes[s], a.runs, rd[s], bt[s]);
		}
	}
	if (a.dir != 1 && a.only != 1)
		printf("inject: the multishot read ended (re-armed) %.2f times per %u frames (bufs %u, cq %u)\n",
		       (double)mshot_ends / ((double)a.runs * ns * rounds), prefill_n, nslot, a.cq);
	ut_bufring_free(&ring, &b);
	io_uring_queue_exit(&ring);
	close(hs);
	close(fd);
	punt_thread_stop(c.pt);
	if (!a.single) {
		close(sleep_pipe[1]);
		pthread_join(sleeper, NULL);
		close(sleep_pipe[0]);
	}
	if (c.rbuf != buf)
		free(c.rbuf);
	free(buf);
	return 0;
}
