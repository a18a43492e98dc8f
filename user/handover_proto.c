// SPDX-License-Identifier: BSD-3-Clause
/*
 * What both sides of the handover share (handover_proto.h): the engine's UMEM records,
 * the HELLO of what an engine serves, the fault hook, the lines both print.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dom.h"
#include "handover_proto.h"

__u32 ho_doms(struct engine *e, struct ho_dom *d)
{
	for (__u32 i = 0; i < e->ndoms; i++) {
		struct eng_dom *m = &e->dom[i];

		d[i] = (struct ho_dom){ &m->layout, m->ledger,	      &m->umem, m->mem.fd,
					m->buf.off, m->mem.page_size, m->node };
	}
	return e->ndoms;
}

__u32 ho_dom_of(const struct engine *e, const struct eng_q *q)
{
	(void)e;
	return q->dom->id;
}

void ho_die_at(const struct eng_ho *h, enum ho_fault f)
{
	if (h->fault == f) {
		(void)fflush(NULL);
		(void)raise(SIGKILL);
	}
}

void ho_say(const struct engine *e, const char *json, const char *text)
{
	if (e->cfg.json) {
		fputs(json, stdout);
		fflush(stdout);
	} else if (!e->cfg.quiet) {
		ut_say(0, "%s", text);
	}
}

void ho_hello_fill(const struct engine *e, struct ho_hello *m)
{
	const struct eng_config *c = &e->cfg;

	memset(m, 0, sizeof(*m));
	m->pid = (__u32)getpid();
	snprintf(m->mode, sizeof(m->mode), "%s", c->mode->name);
	m->nports = c->nports;
	for (__u32 i = 0; i < c->nports; i++) {
		memcpy(m->ports[i].ifname, c->ports[i].ifname, sizeof(m->ports[i].ifname));
		m->ports[i].nqueues = c->ports[i].nqueues;
		memcpy(m->ports[i].queues, c->ports[i].queues, sizeof(m->ports[i].queues));
	}
	m->frame_size = c->mem->frame_size;
	m->headroom = c->mem->headroom;
	m->frames = c->mem->frames;
	m->layout = c->mem->layout;
	m->rx_ring = c->rx_ring;
	m->tx_ring = c->tx_ring;
	m->fill_ring = c->fill_ring;
	m->comp_ring = c->comp_ring;
	m->no_need_wakeup = c->no_need_wakeup;
	m->multi_buffer = c->multi_buffer;
	m->multi_buffer_set = c->multi_buffer_set;
	m->busy_poll = c->busy_poll;
	snprintf(m->pin_path, sizeof(m->pin_path), "%s", c->pin_path ? c->pin_path : "");
	m->umem = (__u32)c->mem->umem;
	m->xsk_mode = (__u32)c->xsk_mode;
	m->tx_budget = c->tx_budget;
	m->busy_budget = c->busy_budget;
}

const char *ho_recv_why(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "no answer in time";
	case -ECONNRESET:
		return "it closed the connection (it died or gave up)";
	case -EBADMSG:
		return "not a handover message";
	default:
		return strerror(-err);
	}
}
