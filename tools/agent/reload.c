// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's reload: SIGHUP (main.c) and the control socket's "reload" (ctl.c) read
 * the config again, check it against what runs and apply the difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "config.h"
#include "iface.h"
#include "kubelet.h"
#include "reload.h"

int ag_reload(struct agent *a, char *err, size_t len)
{
	struct ag_config *c = calloc(1, sizeof(*c));
	int rc = -1;

	if (!c) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if (ag_config_load(a->cfg_path, c, err, len) || ag_apply_check(a, c, err, len))
		goto out;
	if (ag_apply(a, c, err, len))
		goto out;
	ag_config_free(&a->cfg);
	a->cfg = *c; /* the rules move with it */
	memset(c, 0, sizeof(*c));
	a->generation++;
	ag_kubelet_tick(a); /* pools as the interfaces now are */
	rc = 0;
out:
	a->last_reload_ok = !rc;
	ag_config_free(c);
	free(c);
	return rc;
}
