/* SPDX-License-Identifier: BSD-3-Clause */
/* The config applied to the interfaces (iface.c). */
#ifndef XPILE_AGENT_IFACE_H
#define XPILE_AGENT_IFACE_H

#include "agent.h"

/* iface.c: brings the interfaces to @new (adopting what runs there, replacing rule
 * sets that differ, detaching interfaces no longer listed). 0, or -1 with one line in
 * @err; on a failure the interfaces already changed stay changed (logged). */
int ag_apply(struct agent *a, const struct ag_config *new, char *err, size_t len);
/* Checks, before anything changes, that @new can be applied over the running state. */
int ag_apply_check(struct agent *a, const struct ag_config *new, char *err, size_t len);
void ag_ifaces_close(struct agent *a, bool detach);
void ag_ifaces_tick(struct agent *a); /* every second */
/* Serves one interface as @c says (adopt or attach, rules, device-plugin socket). */
int ag_iface_serve(struct agent *a, const struct ag_iface_cfg *c, char *err, size_t len);
/* Detaches and unpins @i, closes its device-plugin socket. */
void ag_iface_detach(struct agent *a, struct ag_iface *i);
struct ag_iface *ag_iface_find(struct agent *a, const char *name);
/* Rules in force on @s, or a negative errno. */
int ag_rules_count(struct xp_steer *s);
bool ag_rules_equal(const struct xp_rule *a, __u32 na, const struct xp_rule *b, __u32 nb);

#endif /* XPILE_AGENT_IFACE_H */
