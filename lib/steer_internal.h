/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between lib/steer.c, lib/rules.c, lib/bpffs.c, lib/wire.c; not installed. */
#ifndef XPILE_STEER_INTERNAL_H
#define XPILE_STEER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "steer_abi.h"

/* Writes a one-line reason into @err (when given) and returns -EINVAL: the rule and
 * flow text parsers' way to refuse a word. */
__attribute__((format(printf, 3, 4))) int xp_text_fail(char *err, size_t len, const char *fmt, ...);

int xp_mkdir_p(const char *path);
void xp_rmdir_up(const char *path, const char *stop);
/* A --pin-path must be on a bpffs: checks the closest existing ancestor (one line
 * naming it and the fix otherwise) and sets @root, above which nothing is removed. */
int xp_pin_dir_check(const char *pin, char *root, size_t len);

/* Map fds of one rule-set home, in the order of xp_steer_map_names. */
enum xp_steer_map {
	XP_M_CFG,
	XP_M_SETCFG,
	XP_M_SETS,
	XP_M_RULES,
	XP_M_RULE_CNT,
	XP_M_STATS,
	XP_M_XSKS,
	XP_M_NR,
};
extern const char *const xp_steer_map_names[XP_M_NR];

/* Writes @rules (sorted, n <= XP_STEER_MAX_RULES) into rule set @set. */
int xp_rules_compile(const int *fds, __u32 set, const struct xp_rule *rules, __u32 n,
		     const struct xp_action *dflt, const struct xp_action *perr);
int xp_rule_check(const struct xp_rule *r, char *err, size_t errlen);

#endif
