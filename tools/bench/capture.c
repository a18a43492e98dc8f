// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench capture: what --capture costs a worker, through the engine's own capture
 * ring (tools/util/capring.c): batches of 64 frames into a worker's chunk ring, the
 * writer thread writing chunks to a file on io_uring as `xpile run --capture` does. Only
 * batches that captured every frame count (a batch that found the ring full is cheaper,
 * not dearer); the timing harness (two clock reads per batch) is measured and taken out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "benchutil.h"
#include "capring.h"
#include "pcapng.h"

#define BATCH 64u
#define NFRAMES 4096u

struct capture_args {
	const char *file;
	__u32 runs, snaplen, pkt;
	bool cold;
	__u64 frames, rate;
};

#define OPT(...) CLI_OPT(struct capture_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("file", STR, file, "PATH",
	    "capture file (default /tmp/xpile-bench-capture.pcapng, removed as soon as it is open)"),
	OPT("runs", NUM, runs, "N", "runs per frame size (default 5)", .min = 1, .max = 1000),
	OPT("snaplen", NUM, snaplen, "N", "bytes captured per frame, 1..65535 (default 128)",
	    .min = 1, .max = 65535),
	OPT("pkt-size", NUM, pkt, "BYTES",
	    "frame size, 60..1514 (default: 64 and 1500, alternating)", .min = 60, .max = 1514),
	OPT("frames", NUM, frames, "N", "frames per run (default 1000000)", .min = BATCH,
	    .max = 1ull << 32),
	OPT("cold", FLAG, cold, NULL,
	    "leave the frames out of the cache (by default each batch's bytes up to snaplen are "
	    "read before it is timed, as the kernel's copy into the UMEM leaves them)"),
	OPT("rate", NUM, rate, "PPS",
	    "frames per second fed, in bursts of 64 (default 2000000, about what a worker "
	    "moves on this kind of machine; 0: as fast as it goes, the writer then sets the pace)",
	    .max = 1ull << 32),
	{ 0 },
};

BENCH_COMMAND(
	bench_capture_cmd, bench_capture, "capture", NULL,
	"a worker's cost per frame for xpile run --capture", opts,
	.description =
		"Feeds batches of 64 frames to the engine's capture ring (tools/util/capring.c: "
		"copy up to --snaplen into the worker's chunk ring, the capture thread writes "
		"full chunks to the file on io_uring) and prints per run\n"
		"  capture pkt=B snaplen=S worker_ns=X wall_ns=Y captured=N dropped=D\n"
		"X: the median batch's worker ns per frame over the batches that captured "
		"every frame, harness taken out (the issue's target: <= 25 at snaplen 128); "
		"Y: wall ns per frame over the run (the feed's pace, or the writer's with "
		"--rate 0); N: frames in counted batches; D: frames that found the ring full. "
		"A last line gives the medians over the runs.",
	.examples = "xpile-bench capture --runs 7\n"
		    "xpile-bench capture --snaplen 65535 --pkt-size 1500");

struct run_result {
	double worker_ns, wall_ns;
	__u64 captured, dropped;
};

/* The capture file as the engine starts it: a section header and one interface. */
static int open_file(const char *file, __u8 *hdr, size_t *len)
{
	size_t k;
	int fd = strcmp(file, "-") ? open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) :
				     STDOUT_FILENO;

	if (fd < 0)
		return -errno;
	*len = pcapng_shb_put(hdr, 4096, "xpile-bench capture");
	k = *len ? pcapng_idb_put(hdr + *len, 4096 - *len, "bench:0", 65535) : 0;
	*len = k ? *len + k : 0;
	if (!*len || ut_write_all(fd, hdr, *len)) {
		if (fd > STDOUT_FILENO)
			close(fd);
		return -EIO;
	}
	return fd;
}

static int one_run(const struct capture_args *a, __u32 pkt, struct run_result *out)
{
	struct xp_layout_opts lo = { .sz = sizeof(lo),
				     .nframes = NFRAMES,
				     .kind = XP_LAYOUT_ALIGNED };
	struct ut_cap_opts co = { .sz = sizeof(co) };
	struct ut_cap_stats st;
	struct xp_layout l;
	struct ut_cap *cap = NULL;
	struct ut_cap_ring *r;
	struct xdp_desc d[BATCH];
	double t0, t1, start, harness = 1e30, *cost, gap = a->rate ? 1e9 * BATCH / a->rate : 0;
	__u8 sink = 0, hdr[4096], *base;
	__u64 done = 0, counted = 0, drops, i, nb = a->frames / BATCH + 1;
	size_t hlen = 0;
	int err, fd;

	cost = calloc(nb, sizeof(*cost));
	if (!cost)
		return -ENOMEM;
	err = xp_layout_compute(&lo, &l);
	base = err ? NULL : aligned_alloc(4096, l.area_size);
	if (!base) {
		free(cost);
		return err ?: -ENOMEM;
	}
	/* Frames spread over the UMEM, as a ring hands them out, each holding its packet. */
	for (i = 0; i < NFRAMES; i++) {
		__u64 h = xp_layout_frame(&l, (__u32)i);

		memset(xp_layout_ptr(&l, base, h + l.data_off), (int)i, pkt);
	}
	fd = open_file(a->file, hdr, &hlen);
	co.name = a->file;
	co.fd = fd;
	co.hdr = hdr;
	co.hdr_len = hlen;
	co.nrings = 1;
	co.snaplen = a->snaplen;
	co.buffer = 4u << 20;
	co.dirs = UT_CAP_BOTH;
	err = fd < 0 ? fd : ut_cap_create(&co, &cap);
	if (!err && strcmp(a->file, "-"))
		unlink(a->file);
	err = err ?: ut_cap_start(cap);
	if (err) {
		if (!cap && fd > STDOUT_FILENO)
			close(fd);
		ut_cap_destroy(cap);
		free(base);
		free(cost);
		return -EIO;
	}
	r = ut_cap_ring(cap, 0);
	for (i = 0; i < 1000; i++) {
		t0 = bench_now_ns();
		t1 = bench_now_ns();
		if (t1 - t0 < harness)
			harness = t1 - t0;
	}
	start = bench_now_ns();
	while (done < a->frames) {
		for (i = 0; i < BATCH; i++) {
			__u64 h = xp_layout_frame(&l, (__u32)((done + i) % NFRAMES));

			d[i] = (struct xdp_desc){ .addr = h + l.data_off, .len = pkt };
			for (__u32 off = 0; !a->cold && off < pkt && off < a->snaplen; off += 64)
				sink += *(volatile __u8 *)((__u8 *)xp_layout_ptr(&l, base,
										 d[i].addr) +
							   off);
		}
		drops = ut_cap_dropped(r);
		t0 = bench_now_ns();
		ut_cap_batch(r, 0, &l, base, 0, d, BATCH, UT_CAP_RX);
		t1 = bench_now_ns();
		done += BATCH;
		if (ut_cap_dropped(r) == drops)
			cost[counted++] = (t1 - t0 - harness) / BATCH;
		while (gap && bench_now_ns() < start + (double)done / BATCH * gap)
			;
	}
	out->wall_ns = (bench_now_ns() - start) / (double)done;
	/* The median batch: a batch the scheduler interrupted (2 shared cores) is noise. */
	out->worker_ns = counted ? bench_median(cost, (__u32)counted) : 0;
	out->captured = counted * BATCH + (sink & 0);
	free(cost);
	out->dropped = ut_cap_dropped(r);
	ut_cap_stop(cap, &st);
	ut_cap_destroy(cap);
	free(base);
	return 0;
}

int bench_capture(int argc, char **argv)
{
	struct capture_args a = { .file = "/tmp/xpile-bench-capture.pcapng",
				  .runs = 5,
				  .snaplen = 128,
				  .frames = 1000000,
				  .rate = 2000000 };
	__u32 sizes[2] = { 64, 1500 }, ns, r, s;
	double wk[2][1000], wl[2][1000];
	struct run_result res = { 0 };
	int rc = bench_parse(&bench_capture_cmd, argc, argv, &a);

	if (rc != CLI_RUN)
		return rc;
	if (a.pkt)
		sizes[0] = a.pkt;
	ns = a.pkt ? 1 : 2;
	for (r = 0; r < a.runs; r++) {
		for (s = 0; s < ns; s++) {
			rc = one_run(&a, sizes[s], &res);
			if (rc) {
				fprintf(stderr, "xpile-bench capture: run failed: %s\n",
					strerror(-rc));
				return 1;
			}
			wk[s][r] = res.worker_ns;
			wl[s][r] = res.wall_ns;
			printf("capture pkt=%u snaplen=%u worker_ns=%.1f wall_ns=%.1f captured=%llu dropped=%llu\n",
			       sizes[s], a.snaplen, res.worker_ns, res.wall_ns,
			       (unsigned long long)res.captured, (unsigned long long)res.dropped);
			fflush(stdout);
		}
	}
	for (s = 0; s < ns; s++)
		printf("capture median pkt=%u snaplen=%u runs=%u worker_ns=%.1f wall_ns=%.1f\n",
		       sizes[s], a.snaplen, a.runs, bench_median(wk[s], a.runs),
		       bench_median(wl[s], a.runs));
	return 0;
}
