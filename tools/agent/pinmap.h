/* SPDX-License-Identifier: BSD-3-Clause */
/* The pinned-map mode, DIR/NETDEV/bpf/xsks_map in a bpffs of its own (pinmap.c). */
#ifndef XPILE_AGENT_PINMAP_H
#define XPILE_AGENT_PINMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "agent.h"

int ag_pinmap_open(struct agent *a, struct ag_iface *i);
void ag_pinmap_close(struct agent *a, struct ag_iface *i, bool detach);
/* mkdir -p (0755): the kubelet's directory, the pinned map's bpffs mount point (the
 * sockets' directories are sockdir.c's, checked as they are made). */
int ag_mkdir_p(const char *dir);
/* DIR/NETDEV/bpf/xsks_map: what Allocate mounts at /tmp/afxdp_dp/NETDEV/xsks_map. */
int ag_pinmap_file(const struct agent *a, const struct ag_iface *i, char *file, size_t len);

#endif /* XPILE_AGENT_PINMAP_H */
