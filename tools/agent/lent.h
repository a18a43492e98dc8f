/* SPDX-License-Identifier: BSD-3-Clause */
/* lent.c: what is known of a netdev lent to a pod (lend.c lends and takes it back). */
#ifndef XPILE_AGENT_LENT_H
#define XPILE_AGENT_LENT_H

#include <stdbool.h>
#include <stddef.h>

#include "agent.h"

/* DIR/NETDEV/lent, the lend record of @name under @dp_dir: 0 or -ENAMETOOLONG. */
int ag_lent_path(const char *dp_dir, const char *name, char *p, size_t len);
/* A lend record for @name under @dp_dir: it may be away from this namespace. */
bool ag_lent_recorded(const char *dp_dir, const char *name);
/* The lent interface still runs our program (our bpf_link is attached). */
bool ag_lent_attached(const struct ag_iface *i);

#endif /* XPILE_AGENT_LENT_H */
