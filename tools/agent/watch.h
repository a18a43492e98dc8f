/* SPDX-License-Identifier: BSD-3-Clause */
/* Re-attach (watch.c). */
#ifndef XPILE_AGENT_WATCH_H
#define XPILE_AGENT_WATCH_H

#include "agent.h"

/* watch.c: puts the steer program back when it is detached or replaced (the
 * interface's on_replace says whether a foreign program is removed). */
int ag_watch_open(struct agent *a);
void ag_watch_iface(struct agent *a, struct ag_iface *i);
void ag_watch_all(struct agent *a);

#endif /* XPILE_AGENT_WATCH_H */
