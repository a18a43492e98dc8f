/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket (ctl.c). */
#ifndef XPILE_AGENT_CTL_H
#define XPILE_AGENT_CTL_H

#include "agent.h"

/* ctl.c: the control socket. */
int ag_ctl_open(struct agent *a);
void ag_ctl_close(struct agent *a);
void ag_ctl_tick(struct agent *a, double now);

#endif /* XPILE_AGENT_CTL_H */
