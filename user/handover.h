/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's hot handover (docs/engine.md, "Handover"): `--handover PATH` serves a
 * successor on a Unix socket (handover_serve.h), `--take-over PATH` is that successor
 * (handover_take.h). The library pieces (channel, UMEM and socket records, import) are
 * xpile/handover.h; the engine's protocol over them is handover_proto.h: HELLO (new:
 * version, config) -> OFFER (old: UMEM memfds, socket fds, layout) -> READY (new: all
 * mapped) -> the old engine parks its workers at a batch boundary -> STATE (old:
 * ledger, ring indices) -> OK (new: pool rebuilt and checked) -> COMMIT (old: it will
 * never touch the rings again) -> the new one polls, the old one exits 0. Any failure
 * before COMMIT leaves the old engine running. This header is the set-up stage.
 */
#ifndef XPILE_ENG_HANDOVER_H
#define XPILE_ENG_HANDOVER_H

struct engine;

/* The handover options (main.c; the engine's cfg.ho points here when one is given). */
struct eng_ho_cfg {
	const char *handover; /* --handover PATH: serve a successor there */
	const char *take_over; /* --take-over PATH: take a running engine's sockets */
};

/* Set-up stage, after the domains, before the UMEMs: --take-over connects and takes
 * the offer (UMEMs mapped, layouts and frames adopted, e->take_over set); --handover
 * listens. 0, or -errno after one line. */
int eng_ho_setup(struct engine *e);
/* Tear-down: listener and connection closed, the socket path removed if still ours. */
void eng_ho_close(struct engine *e);

#endif /* XPILE_ENG_HANDOVER_H */
