/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client side of a JSON-lines control socket (jclient.c): the sockets in a
 * directory, and one request, one reply, with a deadline. `xpile stats`, `xpile ctl`,
 * `xpile top` and the agent's engine metrics ask the engines' sockets with it.
 */
#ifndef XPILE_UTIL_JCLIENT_H
#define XPILE_UTIL_JCLIENT_H

#include <stddef.h>
#include <jansson.h>

#define UT_JL_MAX_SOCKS 64

/* Where the engines' control sockets are: $XPILE_RUNDIR, else /run/xpile. */
const char *ut_run_dir(void);
/* The NAME.sock paths in @dir (NULL: ut_run_dir()), sorted: how many, at most @max. */
int ut_jl_list(const char *dir, char paths[][256], int max);
/* Sends @req to the socket at @path, waits @timeout_ms at most for the reply line: the
 * reply, or NULL with @why set. */
json_t *ut_jl_call(const char *path, json_t *req, int timeout_ms, char *why, size_t len);

#endif /* XPILE_UTIL_JCLIENT_H */
