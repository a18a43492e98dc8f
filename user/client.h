/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commands that ask a running engine (client.c): `xpile stats` and `xpile ctl`, on
 * its control socket (ctl.h, tools/util/jclient.h); `xpile top` (top.h) is built on them.
 */
#ifndef XPILE_ENG_CLIENT_H
#define XPILE_ENG_CLIENT_H

#include <stddef.h>
#include <jansson.h>

#include "cli_types.h"

extern const struct cli_cmd eng_cmd_stats, eng_cmd_ctl;

/* Runs @c (stats or ctl; argv[0] is its name): the exit status. */
int eng_client_main(const struct cli_prog *p, const struct cli_cmd *c, int argc, char **argv);
/* An engine's stats reply with its workers' (client.c): NULL with @why. */
json_t *eng_client_snapshot(const char *path, char *why, size_t len);

#endif /* XPILE_ENG_CLIENT_H */
