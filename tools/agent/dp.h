/* SPDX-License-Identifier: BSD-3-Clause */
/* The AF_XDP device plugin's socket (dp.c). */
#ifndef XPILE_AGENT_DP_H
#define XPILE_AGENT_DP_H

#include "agent.h"

/* dp.c: the AF_XDP device plugin's socket of @i (at cfg dp_dir/NAME/afxdp.sock): 0, or
 * -1 with one line in @err. */
int ag_dp_open(struct agent *a, struct ag_iface *i, char *err, size_t len);
/* Its socket file is still the one bound (not removed or replaced by someone). */
bool ag_dp_intact(const struct ag_iface *i);
const char *ag_dp_path(const struct ag_iface *i);
void ag_dp_close(struct agent *a, struct ag_iface *i);
/* Closes connections silent for longer than the bound. */
void ag_dp_tick(struct agent *a, double now);

#endif /* XPILE_AGENT_DP_H */
