// SPDX-License-Identifier: BSD-3-Clause
/* txonly (txonly.h): a UDP/IPv4 generator. Public API only (xpile/engine.h,
 * xpile/pkt.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "say.h"
#include "txonly.h"
#include "xpile/engine.h"

#define ETH_HLEN_ 14
#define IP_HLEN_ 20
#define UDP_HLEN_ 8
#define FCS_LEN 4

/* Written by its queue's worker alone: a line each, so workers share none. */
struct tx_queue {
	__u64 budget; /* packets left to send (~0: unlimited) */
	__u16 flow; /* the next flow */
} __attribute__((aligned(64)));

struct tx_worker {
	__u64 next_tx_ns; /* --rate: when the next burst may go */
} __attribute__((aligned(64)));

struct eng_txonly {
	const struct eng_txonly_cfg *c;
	__u32 batch, len; /* packets per burst; bytes of each (without the FCS) */
	__u64 rate_w; /* --rate's share of each worker */
	struct tx_queue q[XP_ENGINE_MAX_PORTS * XP_ENGINE_MAX_QUEUES];
	struct tx_worker w[XP_ENGINE_MAX_CORES];
	__u8 frame[4096]; /* the packet every socket sends, --flows source ports apart */
};

static __u16 ip_csum(const __u8 *p, __u32 len)
{
	__u32 sum = 0, i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Every queue of the worker sent its share: it is done once they all completed. */
static void check_done(const struct eng_txonly *t, struct xp_worker *w)
{
	if (!t->c->count)
		return;
	for (__u32 i = 0; i < xp_worker_nqueues(w); i++)
		if (t->q[xp_worker_queue(w, i)->index].budget)
			return;
	xp_worker_done(w);
}

static __u32 txonly_poll(struct xp_worker *w, struct xp_queue *q, void *arg)
{
	struct eng_txonly *t = arg;
	const struct eng_txonly_cfg *c = t->c;
	struct tx_queue *tq = &t->q[q->index];
	struct tx_worker *tw = &t->w[xp_worker_id(w)];
	struct xp_pkt p[XP_BURST_MAX];
	__u32 n = t->batch, room, i;

	if (!tq->budget || xp_worker_stopping(w)) {
		check_done(t, w);
		return 0;
	}
	if (n > tq->budget)
		n = (__u32)tq->budget;
	if (c->rate) {
		__u64 now = ut_now_ns();

		if (now < tw->next_tx_ns)
			return 0;
		/* Small bursts at low rates: a millisecond's worth at most. */
		if (n > t->rate_w / 1000 + 1)
			n = (__u32)(t->rate_w / 1000 + 1);
		/* Late by more than a few sleeps (a stall): start again from now, not with
		 * a burst that would make up for it. */
		if (tw->next_tx_ns + 4000000 < now)
			tw->next_tx_ns = now;
	}
	room = xp_tx_room(w, q);
	if (n > room)
		n = room;
	n = n ? xp_pkt_alloc(w, q, p, n) : 0;
	for (i = 0; i < n; i++) {
		__u8 *d = xp_pkt_data(q, &p[i]);
		__u16 sport = htons((__u16)(c->src_port + tq->flow));

		memcpy(d, t->frame, t->len);
		memcpy(d + ETH_HLEN_ + IP_HLEN_, &sport, 2);
		p[i].len = t->len;
		if (++tq->flow >= c->flows)
			tq->flow = 0;
	}
	n = n ? xp_tx_burst(w, q, p, n, NULL) : 0;
	/* The time of what went, not of what was asked: a turn that found the TX ring full
	 * (its completions not yet back) spends none of the rate, so the rate is kept. */
	if (c->rate)
		tw->next_tx_ns += n * 1000000000ull / t->rate_w;
	tq->budget -= n;
	return n;
}

struct eng_txonly *eng_mode_txonly(struct xp_engine_opts *o, const struct eng_txonly_cfg *c)
{
	struct eng_txonly *t = calloc(1, sizeof(*t));

	if (!t) {
		ut_say(-ENOMEM, "out of memory");
		return NULL;
	}
	t->c = c;
	t->batch = o->batch ? o->batch : 64;
	if (t->batch > XP_BURST_MAX)
		t->batch = XP_BURST_MAX;
	o->name = "txonly";
	o->on_poll = txonly_poll;
	o->arg = t;
	o->no_rx = true;
	return t;
}

/* The packet: Ethernet, IPv4 with its checksum, UDP without one (legal over IPv4), so
 * that flows differ by the source port alone; a counting pattern after. */
static void build(struct eng_txonly *t, const unsigned char src_mac[6])
{
	const struct eng_txonly_cfg *c = t->c;
	__u8 *p = t->frame, *ip = p + ETH_HLEN_, *udp = ip + IP_HLEN_;
	__u32 len = t->len, i;
	__u16 v;

	memset(p, 0, len);
	memcpy(p, c->dst_mac, 6);
	memcpy(p + 6, src_mac, 6);
	p[12] = 0x08;
	p[13] = 0x00;
	ip[0] = 0x45;
	v = htons(len - ETH_HLEN_);
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = 17; /* UDP */
	memcpy(ip + 12, &c->src_ip, 4);
	memcpy(ip + 16, &c->dst_ip, 4);
	v = htons(ip_csum(ip, IP_HLEN_));
	memcpy(ip + 10, &v, 2);
	v = htons(c->src_port);
	memcpy(udp, &v, 2);
	v = htons(c->dst_port);
	memcpy(udp + 2, &v, 2);
	v = htons(len - ETH_HLEN_ - IP_HLEN_);
	memcpy(udp + 4, &v, 2);
	for (i = ETH_HLEN_ + IP_HLEN_ + UDP_HLEN_; i < len; i++)
		p[i] = (__u8)i;
}

int eng_txonly_prepare(struct eng_txonly *t, struct xp_engine *e)
{
	const struct eng_txonly_cfg *c = t->c;
	const struct xp_queue *q0 = xp_engine_queue(e, 0);
	__u32 nq = xp_engine_nqueues(e), room, mtu, i;
	unsigned char src[6];

	/* --pkt-size counts the 4-byte FCS the NIC adds. */
	for (i = 0; xp_engine_port_name(e, i); i++) {
		const char *ifname = xp_engine_port_name(e, i);

		if (xp_engine_port_mtu(e, i, &mtu) || c->pkt_size - FCS_LEN <= mtu + ETH_HLEN_)
			continue;
		return ut_say(
			-EOPNOTSUPP,
			"--pkt-size %u is a %u-byte frame but %s has MTU %u (frames up to %u bytes, --pkt-size %u): the NIC would drop every one; lower --pkt-size or raise the MTU (ip link set dev %s mtu %u)",
			c->pkt_size, c->pkt_size - FCS_LEN, ifname, mtu, mtu + ETH_HLEN_,
			mtu + ETH_HLEN_ + FCS_LEN, ifname, c->pkt_size - ETH_HLEN_ - FCS_LEN);
	}
	room = xp_pkt_room(q0);
	if (c->pkt_size < 64 || c->pkt_size - FCS_LEN > room)
		return ut_say(
			-EOPNOTSUPP,
			"--pkt-size %u out of range: 64..%u with --frame-size %u (raise --frame-size for bigger packets)",
			c->pkt_size, room + FCS_LEN, q0->frame_size);
	for (i = 0; i < nq; i++)
		t->q[i].budget = c->count ? c->count / nq + (i < c->count % nq) : ~0ull;
	t->rate_w = c->rate / xp_engine_nworkers(e) ? c->rate / xp_engine_nworkers(e) : 1;
	t->len = c->pkt_size - FCS_LEN; /* the NIC appends the FCS */
	if (c->src_mac_set)
		memcpy(src, c->src_mac, 6);
	else
		xp_engine_port_mac(e, 0, src);
	build(t, src);
	return 0;
}

int eng_txonly_finish(const struct eng_txonly *t, struct xp_engine *e)
{
	struct xp_queue_stats st;
	__u64 unsent = 0;
	bool down = false;
	__u32 i;

	if (!t->c->count)
		return 0;
	for (i = 0; i < xp_engine_nqueues(e); i++)
		if (!xp_queue_stats_get(e, xp_engine_queue(e, i), &st))
			unsent += st.tx_posted - st.completed;
	if (!unsent)
		return 0;
	for (i = 0; xp_engine_port_name(e, i); i++)
		down |= xp_engine_port_link(e, i) == 0;
	ut_say(0,
	       "%llu of %llu packets never left (the kernel did not take them%s); stopping with them unsent",
	       (unsigned long long)unsent, (unsigned long long)t->c->count,
	       down ? ": the link is down" : "");
	return -ENETDOWN;
}

void eng_txonly_free(struct eng_txonly *t)
{
	free(t);
}
