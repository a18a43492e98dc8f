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
 *   engapi done IFACE SECONDS K MAC   an engine with no RX whose poll callback sends K
 *                                 UDP packets to MAC (198.18.2.3 -> 198.18.2.1:9) at
 *                                 16 kpps, then calls xp_worker_done(): run returns
 *                                 long before SECONDS
 *   engapi loghook IFACE SECONDS  rxdrop with a log hook (xp_set_log_fn) that writes
 *                                 "hook[LEVEL]: ..." to stderr; first a create that
 *                                 fails (no such interface), through the hook too
 *
 * The last line on stdout is "run=ERR ..." with xp_engine_run()'s return value.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xpile/engine.h"
#include "xpile/log.h"
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

/* done: K packets, one UDP/IPv4 frame copied, at 16 per millisecond. */
static struct {
	__u64 left, sent, next_ns;
	__u8 frame[64];
	__u32 len;
} snd;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u32 poll_send(struct xp_worker *w, struct xp_queue *q, void *arg)
{
	struct xp_pkt p[16];
	__u32 n = 16, i;

	if (!snd.left || now_ns() < snd.next_ns) {
		if (!snd.left)
			xp_worker_done(w); /* every call after the last packet: idempotent */
		return 0;
	}
	snd.next_ns = now_ns() + 1000000;
	if (n > snd.left)
		n = (__u32)snd.left;
	if (n > xp_tx_room(w, q))
		n = xp_tx_room(w, q);
	n = xp_pkt_alloc(w, q, p, n);
	for (i = 0; i < n; i++) {
		memcpy(xp_pkt_data(q, &p[i]), snd.frame, snd.len);
		p[i].len = snd.len;
	}
	n = xp_tx_burst(w, q, p, n, NULL);
	snd.left -= n;
	snd.sent += n;
	return n;
}

static int parse_mac(const char *s, unsigned char mac[6])
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		      &mac[4], &mac[5]) == 6 ?
		       0 :
		       -EINVAL;
}

/* Ethernet, IPv4 (checksummed: the receiving kernel counts it), UDP to port 9 without
 * a checksum. */
static void build_udp(struct xp_engine *e, const unsigned char dst[6])
{
	__u8 *f = snd.frame, *ip = f + 14;
	__u32 sum = 0, src = htonl(0xc6120203), dip = htonl(0xc6120201);
	__u16 v;

	snd.len = 60;
	memcpy(f, dst, 6);
	xp_engine_port_mac(e, 0, f + 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	v = htons(snd.len - 14);
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dip, 4);
	for (int i = 0; i < 20; i += 2)
		sum += (__u32)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	v = htons((__u16)~sum);
	memcpy(ip + 10, &v, 2);
	v = htons(9);
	memcpy(ip + 20, &v, 2);
	memcpy(ip + 22, &v, 2);
	v = htons(snd.len - 34);
	memcpy(ip + 24, &v, 2);
}

/* loghook: every message of the library and the engine, marked as the hook's. */
static int hook(enum xp_log_level level, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	return fprintf(stderr, "hook[%d]: %s", (int)level, line);
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
	__u64 rx = 0, srx = 0, stx = 0;
	__u32 held_max = 0;
	int rc;

	unsigned char dst[6];
	double t0;

	if (argc < 3)
		return fprintf(stderr, "usage: engapi MODE IFACE [SECONDS [debug | K MAC]]\n"), 2;
	mode = argv[1];
	if (!strcmp(mode, "badopts"))
		return badopts(argv[2]);
	struct xp_engine_port port = { .ifname = argv[2] };
	XP_OPTS(xp_engine_opts, o, .ports = &port, .nports = 1, .output = XP_ENGINE_OUT_QUIET,
		.duration = argc > 3 ? atof(argv[3]) : 3, .interval = 0.5, .name = mode,
		.rx_ring = 4096, .fill_ring = 4096,
		.ledger_debug = argc > 4 && !strcmp(argv[4], "debug"));
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
	} else if (!strcmp(mode, "done")) {
		if (argc < 6 || parse_mac(argv[5], dst))
			return fprintf(stderr, "usage: engapi done IFACE SECONDS K MAC\n"), 2;
		snd.left = strtoull(argv[4], NULL, 10);
		o.on_poll = poll_send;
		o.no_rx = true;
	} else if (!strcmp(mode, "loghook")) {
		struct xp_engine_port none = { .ifname = "xp-no-such-if" };
		struct xp_engine_opts bad = o;

		xp_set_log_fn(hook);
		bad.ports = &none;
		bad.on_burst = burst_leak;
		rc = xp_engine_create(&bad, &e);
		printf("badcreate=%d\n", rc);
		o.on_burst = burst_hold;
		o.worker_fini = fini_release;
	} else {
		return fprintf(stderr, "engapi: unknown mode %s\n", mode), 2;
	}
	rc = xp_engine_create(&o, &e);
	if (rc)
		return printf("create=%d\n", rc), 1;
	if (o.on_poll == poll_send)
		build_udp(e, dst);
	t0 = now_ns() / 1e9;
	rc = xp_engine_run(e);
	t0 = now_ns() / 1e9 - t0;
	for (__u32 i = 0; i < xp_engine_nworkers(e); i++) {
		rx += pw[i].rx;
		held_max = pw[i].held_max > held_max ? pw[i].held_max : held_max;
	}
	for (__u32 i = 0; i < xp_engine_nqueues(e); i++)
		if (!xp_queue_stats_get(e, xp_engine_queue(e, i), &st))
			srx += st.rx_packets, stx += st.tx_packets;
	if (xp_engine_ledger_get(e, 0, &led))
		memset(&led, 0, sizeof(led));
	printf("run=%d rx=%llu stats_rx=%llu held_max=%u ledger_held=%lld leaked=%llu queues=%u umems=%u sent=%llu stats_tx=%llu ran_s=%.2f\n",
	       rc, (unsigned long long)rx, (unsigned long long)srx, held_max, (long long)led.held,
	       (unsigned long long)led.leaked, xp_engine_nqueues(e), xp_engine_numems(e),
	       (unsigned long long)snd.sent, (unsigned long long)stx, t0);
	xp_engine_destroy(e);
	return 0;
}
