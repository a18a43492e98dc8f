/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kubelet's Device Plugin API (kubelet.c): one resource per pool, a device per RX
 * queue, registered again whenever kubelet.sock is created anew. The rest of the
 * agent's hooks into it; its own state is kubelet_types.h.
 */
#ifndef XPILE_AGENT_KUBELET_H
#define XPILE_AGENT_KUBELET_H

#include "agent.h"

/* On when the config has "kubelet" (a failure to reach the kubelet is logged, not
 * fatal): 0, or a negative errno. */
int ag_kubelet_open(struct agent *a);
void ag_kubelet_close(struct agent *a);
/* The tick, a reload: pools and devices brought to the interfaces, health sent. */
void ag_kubelet_tick(struct agent *a);
/* A link changed (watch.c): health now rather than at the tick. */
void ag_kubelet_health(struct agent *a);

#endif /* XPILE_AGENT_KUBELET_H */
