/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's control socket (ctl.c): a Unix stream socket per engine, by default
 * /run/xpile/NAME.sock (NAME: --name, else the ports joined by '+'), mode 0600, whose
 * peers must be uid 0, the engine's own uid, or in --ctl-allow-uid / --ctl-allow-gid
 * (SO_PEERCRED). It speaks JSON lines (tools/util/lines.h, jline.h: one request
 * object per line, one reply object per request, the agent's protocol core), served by
 * a control thread of its own on the shared event loop (tools/util/loop.h): never by a
 * worker, and never by the main thread, whose loop drives the stats and audits. A
 * request line is at most 4096 bytes, a silent connection goes after 60 s, a peer that
 * does not read its replies loses its connection: no client can stall anything.
 *
 *   {"cmd":"info"}      the engine: name, pid, mode, ports, workers
 *   {"cmd":"stats"}     per port/queue: the engine's counters, the kernel's
 *                       XDP_STATISTICS, rates over the last second; per port the steer
 *                       program's verdicts
 *   {"cmd":"workers"}   per worker: busy/idle cycles, busy %, cycles per packet,
 *                       packets, turns, sleeps, wake-ups, the queues it owns
 *   {"cmd":"ledger"}    per UMEM: the last live audit, where every frame is
 *   {"cmd":"alloc"}     per UMEM: the pile, the caches, the dealer
 *   {"cmd":"log","level":"error"|"info"|"debug"}   what the engine tells on stderr
 *   {"cmd":"capture","action":"start","file":"/P","rule":"udp dport 9"}  a capture
 *                       to a new file (root only); "rule" alone changes the rule in
 *                       force; "stop" closes it (--capture's: pauses it)
 *   {"cmd":"punt","action":"list"|"add"|"del",...} the host TAP's punt rules
 *
 * Replies are {"ok":true,...} or {"ok":false,"error":"one line"} (docs/engine.md).
 */
#ifndef XPILE_ENG_CTL_H
#define XPILE_ENG_CTL_H

#include <stdbool.h>
#include <linux/types.h>

struct engine;

#define ENG_CTL_DIR "/run/xpile"
#define ENG_CTL_MAX_IDS 16

/* The options (main.c; the engine's cfg.ctl points here). */
struct eng_ctl_cfg {
	const char *name; /* --name; NULL: the ports joined by '+' */
	const char *path; /* --ctl PATH; NULL: ENG_CTL_DIR/NAME.sock */
	bool off; /* --no-ctl */
	__u32 uids[ENG_CTL_MAX_IDS], nuids;
	__u32 gids[ENG_CTL_MAX_IDS], ngids;
};

/* Where the engines' sockets are: $XPILE_RUNDIR (as the library's run directory), else
 * ENG_CTL_DIR. Created mode 0700, as the library creates it: a peer that is not root
 * needs a --ctl path in a directory it can reach. */
const char *eng_ctl_dir(void);
/* Binds the socket and starts the control thread, once the engine is ready. A socket
 * that cannot be had is one line and the engine runs without one (it is an
 * observer, not a reason to stop packets); with --ctl or --name given it is refused
 * instead: -errno. */
int eng_ctl_start(struct engine *e);
/* Stops the thread, removes the socket (if it is still ours). */
void eng_ctl_stop(struct engine *e);

#endif /* XPILE_ENG_CTL_H */
