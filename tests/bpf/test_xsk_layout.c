// SPDX-License-Identifier: BSD-3-Clause
/*
 * Real AF_XDP over the UMEM layouts: two sockets sharing one UMEM on the two ends of
 * a veth pair (in a namespace of our own), the steer program on both. Every frame of
 * the UMEM sends one packet and receives one packet, in both directions: half the
 * frames transmit from v0 while the other half sit in v1's fill ring, then the roles
 * swap. Each received packet must land in a frame we posted, exactly once, at the
 * layout's data offset, with the exact bytes and length that were sent; each completion
 * must strip back to the frame that sent it.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "xpile/steer.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "xpile/xsk.h"
#include "bpflog.h"
#include "xt.h"

#define NFRAMES 512
#define BATCH 32

static char ns_name[64];
static int ns_ok;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void ns_cleanup(void)
{
	if (ns_ok)
		sh("ip netns del %s 2>/dev/null", ns_name);
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Packet for sequence number seq: IPv4/UDP so the steer program's default (XSK) takes
 * it; length and payload both depend on seq. */
static __u32 pkt_len(__u32 seq, __u32 room)
{
	__u32 len = 60 + (seq * 37) % 1400;

	return len > room ? room : len;
}

static void pkt_fill(__u8 *p, __u32 seq, __u32 len)
{
	__u32 i;

	memset(p, 0, 42);
	memset(p, 0x02, 6);
	p[5] = 0x01;
	memset(p + 6, 0x02, 6);
	p[11] = 0x02;
	p[12] = 0x08; /* IPv4 */
	p[14] = 0x45;
	p[16] = (__u8)((len - 14) >> 8);
	p[17] = (__u8)(len - 14);
	p[22] = 64;
	p[23] = 17; /* UDP */
	p[26] = 198, p[27] = 18, p[28] = 5, p[29] = 1;
	p[30] = 198, p[31] = 18, p[32] = 5, p[33] = 2;
	p[35] = 9, p[37] = 9;
	p[38] = (__u8)((len - 34) >> 8);
	p[39] = (__u8)(len - 34);
	memcpy(p + 42, &seq, 4);
	for (i = 46; i < len; i++)
		p[i] = (__u8)(seq * 131 + i);
}

struct side {
	struct xp_xsk *x;
	struct xp_steer *s;
};

static int kick_until_done(struct side *tx, __u32 n, const __u64 *sent_addr)
{
	__u64 deadline = now_ms() + 3000;
	__u32 done = 0, idx, k, i;

	while (done < n && now_ms() < deadline) {
		xp_xsk_kick_tx(tx->x);
		k = xp_ring_cons_peek(&tx->x->comp, n - done, &idx);
		for (i = 0; i < k; i++) {
			__u64 a = *xp_ring_addr(&tx->x->comp, idx + i);
			int found = 0;
			__u32 j;

			for (j = 0; j < n; j++)
				found |= a == sent_addr[j];
			XT_CHECK(found);
		}
		if (k)
			xp_ring_cons_release(&tx->x->comp);
		done += k;
		if (!k)
			usleep(100);
	}
	return done == n ? 0 : -1;
}

/* Frames [txf, txf + n) transmit on @tx; frames [rxf, rxf + n) wait in @rx's fill ring. */
static void one_direction(const struct xp_layout *l, void *area, struct side *tx, struct side *rx,
			  __u32 txf, __u32 rxf, __u32 n, __u32 seq0)
{
	__u32 room = l->chunk_size - l->data_off, i, idx, got = 0;
	__u64 addrs[BATCH];
	__u8 seen_frame[NFRAMES] = {}, seen_seq[NFRAMES] = {};
	__u64 deadline;

	XT_REQUIRE(xp_ring_prod_reserve(&rx->x->fill, n, &idx) == n);
	for (i = 0; i < n; i++)
		*xp_ring_addr(&rx->x->fill, idx + i) = xp_layout_frame(l, rxf + i);
	xp_ring_prod_submit(&rx->x->fill);

	for (i = 0; i < n; i += BATCH) {
		__u32 b = n - i < BATCH ? n - i : BATCH, j;

		XT_REQUIRE(xp_ring_prod_reserve(&tx->x->tx, b, &idx) == b);
		for (j = 0; j < b; j++) {
			__u32 seq = seq0 + i + j, len = pkt_len(seq, room);
			__u64 h = xp_layout_frame(l, txf + i + j);
			struct xdp_desc *d = xp_ring_desc(&tx->x->tx, idx + j);

			d->addr = xp_layout_tx_addr(l, h, l->data_off);
			d->len = len;
			d->options = 0;
			addrs[j] = d->addr;
			pkt_fill(xp_layout_ptr(l, area, d->addr), seq, len);
			XT_EQ(xp_layout_handle(l, d->addr), h);
		}
		xp_ring_prod_submit(&tx->x->tx);
		XT_REQUIRE(kick_until_done(tx, b, addrs) == 0);
	}

	deadline = now_ms() + 3000;
	while (got < n && now_ms() < deadline) {
		__u32 k = xp_ring_cons_peek(&rx->x->rx, n, &idx);

		for (i = 0; i < k; i++) {
			const struct xdp_desc *d = xp_ring_desc(&rx->x->rx, idx + i);
			__u64 h = xp_layout_handle(l, d->addr);
			__u8 *p = xp_layout_ptr(l, area, d->addr);
			__u8 want[2048];
			__u32 fi, seq;

			/* The address strips to a frame we posted, and the data sits where the
			 * layout says. */
			XT_REQUIRE(xp_layout_frame_index(l, d->addr, &fi) == 0);
			XT_EQ(xp_layout_frame(l, fi), h);
			XT_CHECK(fi >= rxf && fi < rxf + n);
			XT_CHECK(!seen_frame[fi]++);
			XT_EQ(xp_layout_data(l, d->addr) - h, l->data_off);
			memcpy(&seq, p + 42, 4);
			XT_REQUIRE(seq >= seq0 && seq < seq0 + n);
			XT_CHECK(!seen_seq[seq - seq0]++);
			XT_EQ(d->len, pkt_len(seq, room));
			pkt_fill(want, seq, d->len);
			XT_CHECK(memcmp(p, want, d->len) == 0);
		}
		if (k)
			xp_ring_cons_release(&rx->x->rx);
		got += k;
		if (!k)
			usleep(100);
	}
	XT_EQ(got, n);
}

/* A TX descriptor outside the UMEM is the kernel's to refuse: XDP_STATISTICS counts it
 * and nothing is sent. */
static void invalid_tx(const struct xp_layout *l, struct side *s)
{
	struct xp_xsk_stats st0, st1;
	__u32 idx, k;

	XT_REQUIRE(xp_xsk_stats(s->x, &st0) == 0);
	XT_REQUIRE(xp_ring_prod_reserve(&s->x->tx, 1, &idx) == 1);
	xp_ring_desc(&s->x->tx, idx)->addr = l->area_size + 4096;
	xp_ring_desc(&s->x->tx, idx)->len = 64;
	xp_ring_desc(&s->x->tx, idx)->options = 0;
	xp_ring_prod_submit(&s->x->tx);
	xp_xsk_kick_tx(s->x);
	usleep(10000);
	XT_REQUIRE(xp_xsk_stats(s->x, &st1) == 0);
	XT_EQ(st1.tx_invalid_descs - st0.tx_invalid_descs, 1);
	/* Whether this kernel also completes the refused descriptor (6.18 does), it may
	 * only hand back the address it was given: outside the UMEM, which is why
	 * completions are validated before a frame returns to a pool. */
	if (xp_ring_cons_peek(&s->x->comp, 1, &k) == 1) {
		XT_EQ(*xp_ring_addr(&s->x->comp, k), l->area_size + 4096);
		xp_ring_cons_release(&s->x->comp);
	}
}

static void run_layout(enum xp_layout_kind kind, __u32 headroom)
{
	struct xp_layout_opts lo = { .sz = sizeof(lo),
				     .frame_size = 2048,
				     .headroom = headroom,
				     .nframes = NFRAMES,
				     .kind = kind,
				     .page_size = XP_PAGE_4K };
	struct xp_mem_opts mo = { .sz = sizeof(mo), .hugepages = XP_HUGE_NEVER, .numa_node = -1 };
	struct xp_umem_opts uo = { .sz = sizeof(uo) };
	struct xp_layout l;
	struct xp_mem mem;
	struct xp_umem *u = NULL;
	struct side a = {}, b = {};
	const char *ifn[2] = { "v0", "v1" };
	struct side *sides[2] = { &a, &b };
	int i;

	XT_REQUIRE(xp_layout_compute(&lo, &l) == 0);
	mo.size = l.area_size;
	XT_REQUIRE(xp_mem_alloc(&mo, &mem) == 0);
	uo.area = mem.base;
	uo.size = l.area_size;
	uo.chunk_size = l.chunk_size;
	uo.headroom = l.headroom;
	uo.flags = l.umem_flags;
	XT_REQUIRE(xp_umem_create(&uo, &u) == 0);
	for (i = 0; i < 2; i++) {
		struct xp_xsk_opts xo = { .sz = sizeof(xo),
					  .ifname = ifn[i],
					  .queue = 0,
					  .rx_size = 512,
					  .tx_size = 512,
					  .fill_size = 512,
					  .comp_size = 512,
					  .mode = XP_XSK_COPY };
		struct xp_steer_opts so = { .sz = sizeof(so), .ifname = ifn[i] };

		if (!XT_CHECK(xp_xsk_create(u, &xo, &sides[i]->x) == 0))
			goto out;
		if (!XT_CHECK(xp_steer_open(&so, &sides[i]->s) == 0)) {
			bpflog_dump(stderr, 30); /* a verifier rejection ends with why */
			/* the next cases would only fail on the queue this one held */
			exit(1);
		}
		if (!XT_CHECK(xp_steer_xsk_set(sides[i]->s, 0, sides[i]->x->fd) == 0))
			goto out;
	}
	fprintf(stderr,
		"  layout %s: stride %u, chunk %u, data offset %u, %u frames over %llu bytes\n",
		kind == XP_LAYOUT_ALIGNED ? "aligned" : "interleaved", l.stride, l.chunk_size,
		l.data_off, l.nframes, (unsigned long long)l.area_size);
	/* v0 -> v1 with the first half transmitting, then v1 -> v0 with the second. */
	one_direction(&l, mem.base, &a, &b, 0, NFRAMES / 2, NFRAMES / 2, 0);
	one_direction(&l, mem.base, &b, &a, NFRAMES / 2, 0, NFRAMES / 2, NFRAMES / 2);
	invalid_tx(&l, &a);
out:
	for (i = 0; i < 2; i++) {
		if (sides[i]->s)
			xp_steer_close(sides[i]->s, true);
		xp_xsk_destroy(sides[i]->x);
	}
	XT_EQ(xp_umem_destroy(u), 0);
	xp_mem_free(&mem);
}

static void interleaved(void)
{
	run_layout(XP_LAYOUT_INTERLEAVED, 0);
}

static void interleaved_headroom(void)
{
	run_layout(XP_LAYOUT_INTERLEAVED, 192);
}

static void aligned(void)
{
	run_layout(XP_LAYOUT_ALIGNED, 64);
}

int main(void)
{
	char path[128];
	int fd;

	/* libbpf/libxdp narrate the dispatcher fallback: kept, shown if a load fails */
	bpflog_capture();

	if (geteuid())
		XT_SKIP("needs root (namespaces, XDP, AF_XDP)");
	if (system("command -v ip >/dev/null"))
		XT_SKIP("iproute2 missing: apt-get install iproute2");
	snprintf(ns_name, sizeof(ns_name), "xpL%d", getpid());
	if (sh("ip netns add %s", ns_name))
		XT_SKIP("cannot create a network namespace");
	ns_ok = 1;
	atexit(ns_cleanup);
	if (sh("ip -n %1$s link add v0 type veth peer name v1 && ip -n %1$s link set v0 up && "
	       "ip -n %1$s link set v1 up && ip netns exec %1$s sh -c "
	       "'sysctl -qw net.ipv6.conf.v0.disable_ipv6=1 net.ipv6.conf.v1.disable_ipv6=1'",
	       ns_name)) {
		fprintf(stderr, "FAIL: veth set-up\n");
		return 1;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", ns_name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "FAIL: setns %s\n", path);
		return 1;
	}
	close(fd);
	XT_RUN(interleaved);
	XT_RUN(interleaved_headroom);
	XT_RUN(aligned);
	return xt_done();
}
