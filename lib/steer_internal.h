/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between lib/steer.c, lib/rules.c, lib/bpffs.c, lib/bpffs_sweep.c, lib/wire.c; not
 * installed. */
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
bool xp_is_bpffs(const char *path);
/* Whether /proc/@pid is a kernel thread (PID 2 is kthreadd in the initial namespaces). */
bool xp_pid_is_kthread(int pid);
/* xp_bpffs_root() without logging: the reason and its fix go to @why. */
int xp_bpffs_find(char *buf, size_t len, bool mount_if_missing, char *why, size_t wlen);
/* The calling thread's network namespace inode: the pin key's number. */
int xp_netns_ino(__u64 *ino);
/* Where plans and engine records live: $XPILE_RUNDIR, else /run/xpile. */
const char *xp_run_dir(void);
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
	XP_M_XSKS,
	XP_M_NR,
};
extern const char *const xp_steer_map_names[XP_M_NR]; /* their pins' names */

struct bpf_object;
struct bpf_map;
/* Map @i of a steer object (xp_cfg is the section XP_CFG_SECTION there), or NULL. */
struct bpf_map *xp_steer_obj_map(const struct bpf_object *bo, int i);

/* A way from one map layout version to another (lib/steer_layout.c). */
struct xp_steer_migration {
	__u32 from, to;
	/* Makes the maps in @fds (pinned) fit @bo's layout, replacing fds it recreates. */
	int (*run)(int *fds, struct bpf_object *bo);
};
const struct xp_steer_migration *xp_steer_migration_find(__u32 from, __u32 to);
/* The layout version an object was built with (section ".rodata.xp_abi"; 1 without). */
__u32 xp_steer_obj_version(const struct bpf_object *bo);
/* 0 when @bo's maps can reuse the pinned @fds: same version and every map's type, key,
 * value, size and flags, or a migration (@migrate) for the pair; else one line, -EPROTO. */
int xp_steer_layout_check(const char *ifname, const int *fds, const struct bpf_object *bo,
			  __u32 running, __u32 next, bool migrate);

/* Writes @rules (sorted, n <= XP_STEER_MAX_RULES) into rule set @set. */
int xp_rules_compile(const int *fds, __u32 set, const struct xp_rule *rules, __u32 n,
		     const struct xp_action *dflt, const struct xp_action *perr);
int xp_rule_check(const struct xp_rule *r, char *err, size_t errlen);

#endif
