/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's engines in the agent's /metrics (engines.c): every control socket under
 * the run directory (user/ctl.h: $XPILE_RUNDIR or /run/xpile, NAME.sock) is asked for
 * its stats, workers, ledger and alloc, and each answer becomes series labelled by
 * engine, port, queue, worker, umem. One scrape target per node, whatever the engines;
 * the agent, root already, reads their 0600 sockets, and the engines stay without an
 * HTTP server (docs/agent.md says why).
 */
#ifndef XPILE_AGENT_ENGINES_H
#define XPILE_AGENT_ENGINES_H

#include <stdio.h>

/* Writes the engines' series to @f (Prometheus text format 0.0.4). */
void ag_engines_metrics(FILE *f);

#endif /* XPILE_AGENT_ENGINES_H */
