/* SPDX-License-Identifier: BSD-3-Clause */
/* lend.c: netdevs lent to pods by xpile-cni (the contract is in lend.c's comment). */
#ifndef XPILE_AGENT_LEND_H
#define XPILE_AGENT_LEND_H

#include <stdbool.h>
#include <jansson.h>

#include "agent.h"

/* The control socket's {"cmd":"lend","iface","netns","container"} and
 * {"cmd":"reclaim","iface"}: the reply object. */
json_t *ag_lend_cmd(struct agent *a, const char *cmd, json_t *req);

#endif /* XPILE_AGENT_LEND_H */
