// SPDX-License-Identifier: BSD-3-Clause
/* txonly (txonly.h): a UDP/IPv4 generator. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dom.h"
#include "../engine.h"
#include "../path.h"
#include "txonly.h"

#define ETH_HLEN_ 14
#define IP_HLEN_ 20
#define UDP_HLEN_ 8
#define FCS_LEN 4

static __u16 ip_csum(const __u8 *p, __u32 len)
{
	__u32 sum = 0, i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The packet every socket sends, --flows source ports apart. */
struct eng_txonly {
	__u32 len;
	__u8 frame[4096];
};

int eng_txonly_check_port(struct engine *e, const struct eng_port *p, __u32 mtu)
{
	const struct eng_txonly_cfg *c = e->cfg.txonly;

	/* --pkt-size counts the 4-byte FCS the NIC adds. */
	if (c && c->pkt_size - 4 > mtu + 14)
		return eng_refuse(
			e, -EMSGSIZE,
			"--pkt-size %u is a %u-byte frame but %s has MTU %u (frames up to %u bytes, --pkt-size %u): the NIC would drop every one; lower --pkt-size or raise the MTU (ip link set dev %s mtu %u)",
			c->pkt_size, c->pkt_size - 4, p->ifname, mtu, mtu + 14, mtu + 18, p->ifname,
			c->pkt_size - 18);
	return 0;
}

int eng_txonly_setup(struct engine *e)
{
	const struct eng_txonly_cfg *c = e->cfg.txonly;
	__u8 *p, *ip, *udp;
	__u32 len, room, i;
	__u16 v;

	if (!c)
		return 0;
	for (i = 0; i < e->nq; i++) {
		__u64 k = c->count;

		e->qs[i].tx_budget = k ? k / e->nq + (i < k % e->nq) : ~0ull;
	}
	room = e->dom[0].layout.chunk_size - e->dom[0].layout.data_off;
	if (c->pkt_size < 64 || c->pkt_size - FCS_LEN > room)
		return eng_refuse(
			e, -EMSGSIZE,
			"--pkt-size %u out of range: 64..%u with --frame-size %u (raise --frame-size for bigger packets)",
			c->pkt_size, room + FCS_LEN, e->dom[0].layout.chunk_size);
	e->txonly = calloc(1, sizeof(*e->txonly));
	if (!e->txonly)
		return ut_say(-ENOMEM, "out of memory");
	len = c->pkt_size - FCS_LEN; /* the NIC appends the FCS */
	e->txonly->len = len;
	p = e->txonly->frame;
	memset(p, 0, len);
	memcpy(p, c->dst_mac, 6);
	memcpy(p + 6, c->src_mac_set ? c->src_mac : e->ports[0].mac, 6);
	p[12] = 0x08;
	p[13] = 0x00;
	ip = p + ETH_HLEN_;
	ip[0] = 0x45;
	v = htons(len - ETH_HLEN_);
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = 17; /* UDP */
	memcpy(ip + 12, &c->src_ip, 4);
	memcpy(ip + 16, &c->dst_ip, 4);
	v = htons(ip_csum(ip, IP_HLEN_));
	memcpy(ip + 10, &v, 2);
	udp = ip + IP_HLEN_;
	v = htons(c->src_port);
	memcpy(udp, &v, 2);
	v = htons(c->dst_port);
	memcpy(udp + 2, &v, 2);
	v = htons(len - ETH_HLEN_ - IP_HLEN_);
	memcpy(udp + 4, &v, 2);
	/* UDP checksum 0: none (legal over IPv4), so flows differ by port alone. */
	for (i = ETH_HLEN_ + IP_HLEN_ + UDP_HLEN_; i < len; i++)
		p[i] = (__u8)i;
	return 0;
}

void eng_txonly_free(struct engine *e)
{
	free(e->txonly);
	e->txonly = NULL;
}

__u32 eng_txonly_frame_len(const struct engine *e)
{
	return e->txonly ? e->txonly->len : 0;
}

static __u64 tx_unsent(const struct engine *e)
{
	__u64 n = 0;

	for (__u32 i = 0; i < e->nq; i++)
		n += e->qs[i].c.tx_posted - e->qs[i].c.completed;
	return n;
}

/* --count promises packets on the wire: what the kernel never took is a failure. */
void eng_txonly_finish(struct engine *e)
{
	const struct eng_txonly_cfg *c = e->cfg.txonly;
	bool down = false;

	if (!c || !c->count || !tx_unsent(e))
		return;
	for (__u32 i = 0; i < e->cfg.nports; i++)
		down |= !e->ports[i].link_up;
	ut_say(0,
	       "%llu of %llu packets never left (the kernel did not take them%s); stopping with them unsent",
	       (unsigned long long)tx_unsent(e), (unsigned long long)c->count,
	       down ? ": the link is down" : "");
	e->fault_status = ENG_PORT_FAILED;
}

static void check_done(struct eng_worker *w)
{
	__u32 i;

	if (!w->e->cfg.txonly->count)
		return;
	for (i = 0; i < w->nq; i++)
		if (w->q[i]->tx_budget || w->q[i]->tx_inflight)
			return;
	w->done = true;
}

static __u32 txonly_poll(struct eng_worker *w, struct eng_q *q)
{
	struct engine *e = w->e;
	const struct eng_txonly_cfg *c = e->cfg.txonly;
	const struct eng_txonly *t = e->txonly;
	__u32 n = e->cfg.batch, i, off = q->dom->layout.data_off;
	__u64 now = 0;

	if (!q->tx_budget || e->stop) {
		check_done(w);
		return 0;
	}
	if (n > q->tx_budget)
		n = (__u32)q->tx_budget;
	if (c->rate) {
		__u64 rate_w = c->rate / e->nworkers ? c->rate / e->nworkers : 1;

		now = eng_now_ns();
		if (now < w->next_tx_ns)
			return 0;
		/* Small bursts at low rates: a millisecond's worth at most. */
		if (n > rate_w / 1000 + 1)
			n = (__u32)(rate_w / 1000 + 1);
		if (w->next_tx_ns + 1000000 < now)
			w->next_tx_ns = now;
		w->next_tx_ns += n * 1000000000ull / rate_w;
	}
	n = xp_ring_prod_free(&q->xsk->tx, n) < n ? xp_ring_prod_free(&q->xsk->tx, n) : n;
	while (n && xp_deal_get(q->wd->deal, w->scratch, n))
		n /= 2;
	if (!n) {
		q->c.fill_starved++;
		return 0;
	}
	xp_ledger_move(q->wd->acct, XP_PLACE_FREE, XP_PLACE_APP, w->scratch, n);
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = &w->descs[i];
		__u8 *p;
		__u16 sport = htons((__u16)(c->src_port + q->flow));

		d->addr = xp_layout_tx_addr(&q->dom->layout, w->scratch[i], off);
		d->len = t->len;
		d->options = 0;
		p = eng_data(q->dom, d->addr);
		memcpy(p, t->frame, t->len);
		memcpy(p + ETH_HLEN_ + IP_HLEN_, &sport, 2);
		if (++q->flow >= c->flows)
			q->flow = 0;
	}
	n = eng_tx(w, q, w->descs, n);
	q->tx_budget -= n;
	return n;
}

const struct eng_mode eng_mode_txonly = {
	.name = "txonly",
	.needs_rx = false,
	.nports_min = 1,
	.nports_max = ENG_MAX_PORTS,
	.poll = txonly_poll,
	.check_port = eng_txonly_check_port,
	.setup = eng_txonly_setup,
	.teardown = eng_txonly_free,
	.finish = eng_txonly_finish,
	.frame_len = eng_txonly_frame_len,
};
