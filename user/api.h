/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine library's internal entry (api_engine.c), for the command line alone.
 */
#ifndef XPILE_ENG_API_H
#define XPILE_ENG_API_H

struct eng_mode;
struct xp_engine;
struct xp_engine_opts;
struct eng_router_cfg;

/* xp_engine_create() with an internal mode (the router: not on the public API) and
 * its config: the command line's way to it (main.c). */
int eng_api_create(const struct xp_engine_opts *opts, const struct eng_mode *internal,
		   const struct eng_router_cfg *router, struct xp_engine **out);

#endif /* XPILE_ENG_API_H */
