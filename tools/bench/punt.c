// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench punt: what a punt to a host TAP costs per frame, the engine's way
 * (io_uring WRITE_FIXED from a registered buffer, registered file, one submit per batch
 * of 32, as user/tap.c does per loop turn) against write() per frame, alternating runs.
 * The TAP lives in a network namespace of the bench's own (unshare), so nothing is
 * left behind; the stack drops what it gets (no address), as in the prototypes.
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

#include <liburing.h>

#include "bench.h"
#include "benchutil.h"

#define BATCH 32u
#define SLOT ((size_t)2048)

struct punt_args {
	__u32 runs, pkt;
	__u64 frames;
};

#define OPT(...) CLI_OPT(struct punt_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("runs", NUM, runs, "N", "runs per variant and size (default 7)", .min = 1, .max = 1000),
	OPT("pkt-size", NUM, pkt, "BYTES", "frame size, 60..1514 (default: 64 and 1500)", .min = 60,
	    .max = 1514),
	OPT("frames", NUM, frames, "N", "frames per run (default 300000)", .min = BATCH,
	    .max = 1ull << 32),
	{ 0 },
};

const struct bench_cmd bench_punt_cmd = {
	CLI_COMMAND(
		"punt", NULL, "a punt to a host TAP: io_uring WRITE_FIXED vs write()", opts,
		.max_args = 0,
		.description =
			"Writes --frames Ethernet frames to a TAP in a namespace of its own, "
			"alternating write() per frame and io_uring WRITE_FIXED (registered "
			"buffer and file, 32 per submit: the engine's punt), and prints per run\n"
			"  punt pkt=B write_ns=X uring_ns=Y ratio=Y/X\n"
			"(wall ns per frame) and the medians. Needs root (CAP_NET_ADMIN).",
		.examples = "xpile-bench punt --runs 11"),
	bench_punt,
};

static int tap_open(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd, s;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xpb0");
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr))
		return -errno;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		return -errno;
	close(s);
	return fd;
}

static double run_write(int fd, const __u8 *buf, __u32 len, __u64 n)
{
	double t0 = bench_now_ns();

	for (__u64 i = 0; i < n; i++)
		if (write(fd, buf + (i % BATCH) * SLOT, len) != (ssize_t)len)
			return -1;
	return (bench_now_ns() - t0) / (double)n;
}

static double run_uring(struct io_uring *r, __u32 len, __u8 *buf, __u64 n)
{
	struct io_uring_cqe *cqe;
	double t0 = bench_now_ns();
	__u64 done = 0;

	while (done < n) {
		for (__u32 i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(r);

			io_uring_prep_write_fixed(sqe, 0, buf + i * SLOT, len, 0, 0);
			sqe->flags |= IOSQE_FIXED_FILE;
		}
		io_uring_submit_and_wait(r, BATCH);
		for (__u32 i = 0; i < BATCH; i++) {
			if (io_uring_wait_cqe(r, &cqe) || cqe->res != (int)len)
				return -1;
			io_uring_cqe_seen(r, cqe);
		}
		done += BATCH;
	}
	return (bench_now_ns() - t0) / (double)n;
}

int bench_punt(int argc, char **argv)
{
	struct punt_args a = { .runs = 7, .frames = 300000 };
	__u32 sizes[2] = { 64, 1500 }, ns, s, r;
	static double w[2][1000], u[2][1000];
	struct io_uring ring;
	struct iovec iov;
	__u8 *buf;
	int rc = bench_parse(&bench_punt_cmd, argc, argv, &a), fd;

	if (rc != CLI_RUN)
		return rc;
	if (a.pkt)
		sizes[0] = a.pkt;
	ns = a.pkt ? 1 : 2;
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "xpile-bench punt: unshare(CLONE_NEWNET): %s; run as root\n",
			strerror(errno));
		return 1;
	}
	fd = tap_open();
	buf = aligned_alloc(4096, BATCH * SLOT);
	if (fd < 0 || !buf) {
		fprintf(stderr, "xpile-bench punt: TAP: %s\n", strerror(fd < 0 ? -fd : ENOMEM));
		return 1;
	}
	/* Unicast to a MAC nobody has: the TAP's stack drops it early. */
	for (__u32 i = 0; i < BATCH; i++) {
		__u8 *f = buf + i * SLOT;

		memset(f, 0, SLOT);
		static const __u8 eth[14] = { 2, 0, 0, 0, 0, 0x99, 2, 0, 0, 0, 0, 1, 8, 0 };

		memcpy(f, eth, sizeof(eth));
	}
	rc = io_uring_queue_init(2 * BATCH, &ring, 0);
	iov = (struct iovec){ buf, BATCH * SLOT };
	if (rc || io_uring_register_buffers(&ring, &iov, 1) ||
	    io_uring_register_files(&ring, &fd, 1)) {
		fprintf(stderr, "xpile-bench punt: io_uring: %s\n", strerror(rc ? -rc : errno));
		return 1;
	}
	for (r = 0; r < a.runs; r++)
		for (s = 0; s < ns; s++) {
			w[s][r] = run_write(fd, buf, sizes[s], a.frames);
			u[s][r] = run_uring(&ring, sizes[s], buf, a.frames);
			if (w[s][r] < 0 || u[s][r] < 0) {
				fprintf(stderr, "xpile-bench punt: a write failed\n");
				return 1;
			}
			printf("punt pkt=%u write_ns=%.0f uring_ns=%.0f ratio=%.2f\n", sizes[s],
			       w[s][r], u[s][r], u[s][r] / w[s][r]);
			fflush(stdout);
		}
	for (s = 0; s < ns; s++) {
		double ratio[1000];

		for (r = 0; r < a.runs; r++)
			ratio[r] = u[s][r] / w[s][r];
		printf("punt median pkt=%u runs=%u write_ns=%.0f uring_ns=%.0f ratio=%.2f\n",
		       sizes[s], a.runs, bench_median(w[s], a.runs), bench_median(u[s], a.runs),
		       bench_median(ratio, a.runs));
	}
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return 0;
}
