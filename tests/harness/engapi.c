// SPDX-License-Identifier: BSD-3-Clause
/*
 * The engine API as a user sees it (tests/net/test_engine_api_*.sh): public headers
 * only, linked against libxpile.so. One program, one feature per mode:
 *
 *   engapi burst IFACE SECONDS    run-loop style: count, hold up to 32 frames across
 *                                 bursts, free; prints the counts, the queue's stats
 *                                 and the ledger
 *   engapi own IFACE SECONDS      own-loop style (worker_main): swap the MACs, send back
 *   engapi leak IFACE SECONDS [debug]   a callback that keeps one frame per burst
 *   engapi holdexit IFACE SECONDS a worker_fini that leaves frames held
 *   engapi punt IFACE SECONDS     every packet to the host through the port's TAP
 *   engapi badopts IFACE          the error model: no callback, no such port
 *
 * The last line on stdout is "run=ERR ..." with xp_engine_run()'s return value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xpile/engine.h"
#include "xpile/pkt.h"

#define HOLD 32

struct per_worker {
	__u64 rx, bursts;
	struct xp_pkt held[HOLD];
	struct xp_queue *held_q;
	__u32 nheld, held_max;
} __attribute__((aligned(64)));

static struct per_worker pw[XP_ENGINE_MAX_CORES];

/* Frees last burst's held frames, holds the first of this one, frees the rest. */
static void burst_hold(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p, __u32 n,
		       void *arg)
{
	struct per_worker *s = &pw[xp_worker_id(w)];
	__u32 k = 0;

	s->bursts++;
	for (__u32 i = 0; i < n; i++)
		s->rx += !xp_pkt_more(&p[i]);
	if (s->nheld) {
		xp_pkt_unhold(w, s->held_q, s->held, s->nheld);
		xp_pkt_free(w, s->held_q, s->held, s->nheld);
		s->nheld = 0;
	}
	/* Whole packets only: a chain is held or freed as one. */
	while (k < n && k < HOLD) {
		__u32 j = k;

		while (j < n && xp_pkt_more(&p[j]))
			j++;
		if (j >= HOLD || j >= n)
			break;
		k = j + 1;
	}
	memcpy(s->held, p, k * sizeof(*p));
	s->nheld = k;
	s->held_q = q;
	if (k)
		xp_pkt_hold(w, q, s->held, k);
	if (xp_worker_held(w, q) > s->held_max)
		s->held_max = (__u32)xp_worker_held(w, q);
	xp_pkt_free(w, q, p + k, n - k);
}

static void fini_release(struct xp_worker *w, void *arg)
{
	struct per_worker *s = &pw[xp_worker_id(w)];

	if (s->nheld) {
		xp_pkt_unhold(w, s->held_q, s->held, s->nheld);
		xp_pkt_free(w, s->held_q, s->held, s->nheld);
		s->nheld = 0;
	}
}

/* Own-loop style: a DPDK lcore loop. */
static int own_loop(struct xp_worker *w, void *arg)
{
	struct per_worker *s = &pw[xp_worker_id(w)];
	struct xp_pkt p[64];

	while (xp_worker_turn(w)) {
		__u32 work = 0;

		for (__u32 i = 0; i < xp_worker_nqueues(w); i++) {
			struct xp_queue *q = xp_worker_queue(w, i);
			__u32 n = xp_rx_burst(w, q, p, 64);
			bool head = true;

			for (__u32 k = 0; k < n; k++) {
				if (head && p[k].len >= 12) {
					unsigned char *d = xp_pkt_data(q, &p[k]), t[6];

					memcpy(t, d, 6);
					memcpy(d, d + 6, 6);
					memcpy(d + 6, t, 6);
				}
				head = !xp_pkt_more(&p[k]);
				s->rx += head;
			}
			xp_tx_burst(w, q, p, n, NULL);
			work += n;
		}
		xp_worker_idle(w, work);
	}
	return 0;
}

/* Keeps the first frame of each burst: a leak the ledger must name. */
static void burst_leak(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p, __u32 n,
		       void *arg)
{
	pw[xp_worker_id(w)].rx += n;
	if (n > 1 && !xp_pkt_more(&p[0]))
		xp_pkt_free(w, q, p + 1, n - 1);
	else
		xp_pkt_free(w, q, p, n); /* a chain: nothing kept */
}

/* Everything to the host (the TAP of .host_taps), addressed to the port's MAC (what
 * is addressed to it the engine punts by itself, before the callback). */
static void burst_punt(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p, __u32 n,
		       void *arg)
{
	unsigned char mac[6];
	bool head = true;

	xp_engine_port_mac(xp_worker_engine(w), q->port, mac);
	for (__u32 i = 0; i < n; i++) {
		if (head && p[i].len >= 6)
			memcpy(xp_pkt_data(q, &p[i]), mac, 6);
		head = !xp_pkt_more(&p[i]);
	}
	if (xp_pkt_punt(w, q, p, n)) {
		xp_pkt_free(w, q, p, n);
		return;
	}
	for (__u32 i = 0; i < n; i++)
		pw[xp_worker_id(w)].rx += !xp_pkt_more(&p[i]);
}

static void fini_keep(struct xp_worker *w, void *arg)
{
}

static int badopts(const char *ifname)
{
	struct xp_engine_port port = { .ifname = ifname };
	struct xp_engine *e;
	char err[256];
	int rc;

	XP_OPTS(xp_engine_opts, none, .ports = &port, .nports = 1, .errbuf = err,
		.errbuf_len = sizeof(err));
	rc = xp_engine_create(&none, &e);
	printf("nocallback=%d err=%s\n", rc, err);
	if (rc != -EINVAL || !err[0] || e)
		return 1;
	port.ifname = "xp-no-such-if";
	XP_OPTS(xp_engine_opts, noif, .ports = &port, .nports = 1, .on_burst = burst_leak,
		.errbuf = err, .errbuf_len = sizeof(err));
	rc = xp_engine_create(&noif, &e);
	printf("noiface=%d err=%s\n", rc, err);
	if (rc != -ENODEV || !strstr(err, "xp-no-such-if"))
		return 1;
	/* A field this build does not know, set: refused, never ignored. */
	struct {
		struct xp_engine_opts o;
		__u64 future;
	} big = { .o = { .sz = sizeof(big), .ports = &port, .nports = 1 }, .future = 1 };
	rc = xp_engine_create(&big.o, &e);
	printf("unknown_field=%d\n", rc);
	return rc == -EINVAL ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct xp_engine_ledger led;
	struct xp_queue_stats st;
	struct xp_engine *e;
	const char *mode;
	__u64 rx = 0, srx = 0;
	__u32 held_max = 0;
	int rc;

	if (argc < 3)
		return fprintf(stderr, "usage: engapi MODE IFACE [SECONDS [debug]]\n"), 2;
	mode = argv[1];
	if (!strcmp(mode, "badopts"))
		return badopts(argv[2]);
	struct xp_engine_port port = { .ifname = argv[2] };
	XP_OPTS(xp_engine_opts, o, .ports = &port, .nports = 1, .output = XP_ENGINE_OUT_QUIET,
		.duration = argc > 3 ? atof(argv[3]) : 3, .interval = 0.5, .name = mode,
		.rx_ring = 4096, .fill_ring = 4096, .ledger_debug = argc > 4);
	if (!strcmp(mode, "burst")) {
		o.on_burst = burst_hold;
		o.worker_fini = fini_release;
	} else if (!strcmp(mode, "own")) {
		o.worker_main = own_loop;
	} else if (!strcmp(mode, "leak")) {
		o.on_burst = burst_leak;
	} else if (!strcmp(mode, "punt")) {
		o.on_burst = burst_punt;
		o.host_taps = &port.ifname;
		o.nhost_taps = 1;
	} else if (!strcmp(mode, "holdexit")) {
		o.on_burst = burst_hold;
		o.worker_fini = fini_keep;
	} else {
		return fprintf(stderr, "engapi: unknown mode %s\n", mode), 2;
	}
	rc = xp_engine_create(&o, &e);
	if (rc)
		return printf("create=%d\n", rc), 1;
	rc = xp_engine_run(e);
	for (__u32 i = 0; i < xp_engine_nworkers(e); i++) {
		rx += pw[i].rx;
		held_max = pw[i].held_max > held_max ? pw[i].held_max : held_max;
	}
	for (__u32 i = 0; i < xp_engine_nqueues(e); i++)
		if (!xp_queue_stats_get(e, xp_engine_queue(e, i), &st))
			srx += st.rx_packets;
	if (xp_engine_ledger_get(e, 0, &led))
		memset(&led, 0, sizeof(led));
	printf("run=%d rx=%llu stats_rx=%llu held_max=%u ledger_held=%lld leaked=%llu queues=%u umems=%u\n",
	       rc, (unsigned long long)rx, (unsigned long long)srx, held_max, (long long)led.held,
	       (unsigned long long)led.leaked, xp_engine_nqueues(e), xp_engine_numems(e));
	xp_engine_destroy(e);
	return 0;
}
