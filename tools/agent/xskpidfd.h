/* SPDX-License-Identifier: BSD-3-Clause */
/* AF_XDP socket counters by pidfd (xskpidfd.c). */
#ifndef XPILE_AGENT_XSKPIDFD_H
#define XPILE_AGENT_XSKPIDFD_H

#include "agent.h"
#include "xskdiag.h"

/* xskpidfd.c: the sockets of the device-plugin clients that are in a served XSKMAP
 * (metrics.xsk_stats "pidfd"); @denied: some could not be read (no CAP_SYS_PTRACE). */
int ag_xsk_pidfd(struct agent *a, struct ag_xsk_stat *out, int max, bool *denied);
/* Remembers the process @pid as a client of @i (given its XSKMAP). */
void ag_xsk_client_add(struct agent *a, struct ag_iface *i, int pid);
void ag_xsk_iface_close(struct agent *a, struct ag_iface *i);
/* The queue AF_XDP socket @fd is bound to (told by the kernel, through a probe run by
 * BPF_PROG_TEST_RUN), or -1 when it is not bound. */
int ag_xsk_bound_queue(struct agent *a, int fd);
/* The queue of @i's XSKMAP holding socket @fd, or -1. */
int ag_xsk_in_map(struct agent *a, struct ag_iface *i, int fd);

#endif /* XPILE_AGENT_XSKPIDFD_H */
