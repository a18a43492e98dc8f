/* SPDX-License-Identifier: BSD-3-Clause */
/* The reload (reload.c). */
#ifndef XPILE_AGENT_RELOAD_H
#define XPILE_AGENT_RELOAD_H

#include "agent.h"

/* reload.c: SIGHUP and the control socket's reload: parse, check, apply; 0, or -1 with
 * one line in @err (the running state kept). */
int ag_reload(struct agent *a, char *err, size_t len);

#endif /* XPILE_AGENT_RELOAD_H */
