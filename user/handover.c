// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hot handover of a running engine to a new process (handover.h; the protocol and its
 * failure cases: docs/engine.md, "Handover"). The sockets, their rings and the UMEM
 * survive; only the process changes. Every message is framed and versioned by the
 * library (xpile/handover.h); the payloads below are this engine's, and every UMEM the
 * engine has is one record of an array (ho_doms()), so several UMEMs are one loop.
 *
 * What may differ in the new engine: --cores, --duration, --interval, --json, --quiet,
 * -v, --batch, --cache, --pool, --m3-seed, --ledger-debug, --audit, --spin,
 * --idle-wait, --capture and its options, --handover. Everything the sockets or the
 * UMEM fixed must be the same: --mode, the --iface list and queues, the ring sizes,
 * --frame-size, --headroom, --frames (when given), --layout, --umem, --no-need-wakeup,
 * --multi-buffer, --busy-poll, --busy-budget, --tx-budget, --pin-path, and a --copy or
 * --zero-copy the sockets do not run in; a difference is refused with one line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "handover.h"
#include "handover_proto.h"
#include "handover_serve.h"
#include "handover_take.h"

static const char *const fault_names[] = { "",		"new-hello",  "new-offer", "new-ready",
					   "new-state", "new-refuse", "new-stall", "old-offer",
					   "old-state", "new-ok" };

static int ho_new(struct engine *e)
{
	struct eng_ho *h = calloc(1, sizeof(*h));
	const char *f = getenv("XPILE_HANDOVER_FAULT"), *v = getenv("XPILE_HANDOVER_VERSION");

	if (!h)
		return ut_say(-ENOMEM, "out of memory");
	h->handover = e->cfg.ho->handover;
	h->take_over = e->cfg.ho->take_over;
	h->lfd = h->sfd = h->conn = -1;
	for (__u32 i = 1; f && i < sizeof(fault_names) / sizeof(fault_names[0]); i++)
		if (!strcmp(f, fault_names[i]))
			h->fault = (enum ho_fault)i;
	if (v)
		h->version = (__u16)atoi(v);
	e->ho = h;
	return 0;
}

int eng_ho_setup(struct engine *e)
{
	const struct eng_ho_cfg *c = e->cfg.ho;
	int err;

	if (!c)
		return 0;
	e->take_over = c->take_over != NULL;
	err = ho_new(e);
	/* A successor on the same path binds it once the old engine committed. */
	if (!err && c->handover && !(c->take_over && !strcmp(c->handover, c->take_over)))
		err = ho_listen(e);
	if (!err && c->take_over)
		err = ho_take_offer(e);
	return err;
}

void eng_ho_close(struct engine *e)
{
	struct eng_ho *h = e->ho;

	if (!h)
		return;
	if (h->lfd >= 0) {
		/* A successor may have bound its own socket there: unlink only ours. */
		if (h->lino && xp_ho_path_ino(e->ho->handover) == h->lino)
			unlink(e->ho->handover);
		close(h->lfd);
	}
	if (h->sfd >= 0)
		close(h->sfd);
	if (h->conn >= 0)
		close(h->conn);
	for (__u32 i = 0; i < h->nfds; i++)
		if (!h->fd_used[i])
			close(h->fds[i]);
	free(h);
	e->ho = NULL;
}
