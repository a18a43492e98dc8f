/* SPDX-License-Identifier: BSD-3-Clause */
/* /metrics, /healthz, /readyz (metrics.c). */
#ifndef XPILE_AGENT_METRICS_H
#define XPILE_AGENT_METRICS_H

#include "agent.h"

/* metrics.c: HTTP /metrics, /healthz, /readyz (libmicrohttpd, external loop). */
int ag_metrics_open(struct agent *a);
void ag_metrics_close(struct agent *a); /* stops serving; pending ops cancelled */
void ag_metrics_free(struct agent *a); /* after ut_loop_drain() */

#endif /* XPILE_AGENT_METRICS_H */
