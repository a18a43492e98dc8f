// SPDX-License-Identifier: BSD-3-Clause
/*
 * A program on the public packet API (xpile/engine.h, xpile/pkt.h) that breaks the
 * ownership rule on purpose, for tests/net/test_pkt_misuse.sh: it bounces what arrives
 * back out of the port it came in on (an l2fwd of one port), and at the Nth packet
 *
 *   misuse leak IF N [ledger-debug]      leaves one handle neither sent, freed, punted
 *                                        nor held (the callback "misuse_burst" leaks)
 *   misuse double-free IF N [ledger-debug]  frees one handle, then sends it too
 *
 * The engine's ledger must catch each and name the port, queue and callback. Exit
 * status: xp_engine_run()'s verdict, 1 on -EUCLEAN, 0 when nothing was caught.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpile/engine.h>

struct misuse {
	bool leak;
	__u64 at, seen;
	bool done;
};

static void misuse_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p, __u32 n,
			 void *arg)
{
	struct misuse *m = arg;

	if (!m->done && m->seen + n >= m->at) {
		m->done = true;
		m->seen += n;
		if (m->leak) {
			/* The last handle is dropped on the floor. */
			fprintf(stderr, "misuse: leaking one frame of %s queue %u\n",
				xp_engine_port_name(xp_worker_engine(w), q->port), q->queue);
			xp_tx_burst(w, q, p, n - 1, NULL);
			return;
		}
		fprintf(stderr, "misuse: freeing one frame of %s queue %u twice\n",
			xp_engine_port_name(xp_worker_engine(w), q->port), q->queue);
		xp_pkt_free(w, q, p, 1);
		xp_tx_burst(w, q, p + 1, n - 1, NULL);
		xp_pkt_free(w, q, p, 1);
		return;
	}
	m->seen += n;
	xp_tx_burst(w, q, p, n, NULL);
}

int main(int argc, char **argv)
{
	static struct misuse m;
	struct xp_engine_port port = { 0 };
	struct xp_engine *e;
	char err[256];
	int ret;

	if (argc < 4 || (strcmp(argv[1], "leak") && strcmp(argv[1], "double-free"))) {
		fprintf(stderr, "usage: misuse leak|double-free IF N [ledger-debug]\n");
		return 2;
	}
	m.leak = !strcmp(argv[1], "leak");
	m.at = strtoull(argv[3], NULL, 10);
	port.ifname = argv[2];
	XP_OPTS(xp_engine_opts, o, .on_burst = misuse_burst, .arg = &m, .name = "misuse_burst",
		.ports = &port, .nports = 1, .handle_signals = true,
		.ledger_debug = argc > 4 && !strcmp(argv[4], "ledger-debug"),
		.output = XP_ENGINE_OUT_JSON, .interval = 0.2, .errbuf = err,
		.errbuf_len = sizeof(err));
	ret = xp_engine_create(&o, &e);
	if (ret)
		return 2;
	ret = xp_engine_run(e);
	xp_engine_destroy(e);
	fprintf(stderr, "misuse: run returned %d (%s)\n", ret, ret ? strerror(-ret) : "ok");
	return ret ? 1 : 0;
}
