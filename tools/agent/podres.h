/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podres.c: who holds which queue, from the kubelet's PodResources API (List), for
 * the device-plugin socket's /connect,<pod> and /xsk_socket checks and the metrics'
 * namespace/pod labels.
 */
#ifndef XPILE_AGENT_PODRES_H
#define XPILE_AGENT_PODRES_H

#include <stdbool.h>
#include <stddef.h>

#include "agent.h"

/* Asks List again (the tick; and soon after an Allocate): the answer comes later. */
void ag_podres_refresh(struct agent *a);
void ag_podres_close(struct agent *a);
/* Whether the checks apply: the kubelet side runs (the config has "kubelet" and its
 * directory is there); else the hosts lists do. */
bool ag_podres_on(const struct agent *a);
/* @host (what the client sent in /connect: its hostname, which is its pod's name)
 * holds a device of @i, per the last List. */
bool ag_podres_host_ok(struct agent *a, const struct ag_iface *i, const char *host);
/* ... and queue @q of @i. */
bool ag_podres_queue_ok(struct agent *a, const struct ag_iface *i, const char *host, __u32 q);
/* xpile_queue_allocated{interface,queue,namespace,pod} into @out: the bytes written. */
size_t ag_podres_metrics(struct agent *a, char *out, size_t len);

#endif /* XPILE_AGENT_PODRES_H */
