/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering: the XDP program in front of the AF_XDP engine, its rules and its socket
 * slots. Used by xpile-loader, the engine and the tests. Host plumbing (bpffs and
 * pins, BPF object lookup, the wiring plan, feature probes) is in xpile/host.h.
 *
 *   struct xp_steer *s;
 *   struct xp_steer_opts o = { .sz = sizeof(o), .ifname = "eth0", .attach_existing = true };
 *   err = xp_steer_open(&o, &s);          // find what `xpile-loader load` set up
 *   err = xp_steer_xsk_set(s, queue, xsk_fd);   // this queue's packets now reach xsk_fd
 *   ...
 *   xp_steer_xsk_clear(s, queue);         // back to the kernel (XSK falls back to PASS)
 *   xp_steer_close(s, false);             // keep the program attached for the loader
 *
 * All functions return 0 or a negative errno and log the cause through xpile/log.h.
 */
#ifndef XPILE_STEER_H
#define XPILE_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "steer_abi.h" /* bpf/steer_abi.h (installed next to this file): rules, counters */
/* Compatibility: these declarations lived here; new code includes xpile/host.h itself. */
#include "xpile/api.h"
#include "xpile/opts.h"
#include "xpile/host.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xp_steer;

enum xp_steer_mode {
	XP_STEER_MODE_AUTO, /* native, else generic (skb) */
	XP_STEER_MODE_NATIVE, /* driver mode */
	XP_STEER_MODE_SKB, /* generic mode */
};

struct xp_steer_opts {
	size_t sz; /* sizeof(struct xp_steer_opts); the rule: xpile/opts.h */
	const char *ifname;
	enum xp_steer_mode mode;
	const char *pin_path; /* NULL: xp_steer_pin_dir() default */
	const char *bpf_obj; /* NULL: xp_bpf_obj_path("steer.o") */
	/* Find the program and maps pinned by `xpile-loader load` (or another
	 * xp_steer_open) instead of loading; fails with -ENOENT when there are none. */
	bool attach_existing;
	/* Replace an XDP program on the interface that is not ours. */
	bool force;
	/* Action when no rule matches, for a fresh load. NULL: XSK of the RX queue
	 * (which is PASS while the queue has no socket). */
	const struct xp_action *default_action;
	/* Multi-buffer frames: 0 auto (the frags-capable program when the MTU does not
	 * fit one page), 1 always, -1 never. The frags program costs ~9 ns more per
	 * packet (it asks the kernel for the frame length). */
	int frags;
	__u32 reserved_; /* zero: the tail has no unnamed padding (xpile/opts.h) */
};
#define xp_steer_opts__last_field frags

XP_API int xp_steer_open(const struct xp_steer_opts *o, struct xp_steer **out);
/* @detach: also detach the program and remove the pins (what `unload` does). */
XP_API void xp_steer_close(struct xp_steer *s, bool detach);
/* Removes pins left behind by a steer that is no longer attached (stale); -EBUSY if
 * the pinned program still runs on @ifname. @pin_path NULL: the default. */
XP_API int xp_steer_remove_stale(const char *ifname, const char *pin_path);

/* Route XSK verdicts of RX queue @queue to socket @xsk_fd (an AF_XDP socket bound to
 * that queue of this interface). Clearing makes them fall back to PASS. */
XP_API int xp_steer_xsk_set(struct xp_steer *s, __u32 queue, int xsk_fd);
XP_API int xp_steer_xsk_clear(struct xp_steer *s, __u32 queue);
/* Named socket slots (rule action "xsk slot N"), 0 <= slot < XP_STEER_XSK_SLOTS. */
XP_API int xp_steer_slot_set(struct xp_steer *s, __u32 slot, int xsk_fd);
XP_API int xp_steer_slot_clear(struct xp_steer *s, __u32 slot);
XP_API int xp_steer_xskmap_fd(const struct xp_steer *s);
/* The steer program itself (e.g. for BPF_PROG_TEST_RUN). */
XP_API int xp_steer_prog_fd(const struct xp_steer *s);

/* Rules. Replace swaps the whole set atomically (no packet sees a mix) and returns
 * after no packet can still be using the old set. Rules get ids in order; @rules may
 * carry id 0 (a new id is assigned). */
XP_API int xp_steer_rules_replace(struct xp_steer *s, const struct xp_rule *rules, __u32 n);
/* Rules in force, in evaluation order, with per-rule counters (NULL to skip). */
XP_API int xp_steer_rules_get(struct xp_steer *s, struct xp_rule *rules,
			      struct xp_counter *counters, __u32 max, __u32 *n);
XP_API int xp_steer_rule_add(struct xp_steer *s, const struct xp_rule *r, __u32 *id);
XP_API int xp_steer_rule_del(struct xp_steer *s, __u32 id);
XP_API int xp_steer_default_set(struct xp_steer *s, const struct xp_action *dflt,
				const struct xp_action *parse_err);
XP_API int xp_steer_default_get(struct xp_steer *s, struct xp_action *dflt,
				struct xp_action *parse_err);

struct xp_steer_stats {
	struct xp_counter verdict[XP_CNT_MAX];
	__u64 parse_err[XP_PERR_MAX];
};
XP_API int xp_steer_stats_read(struct xp_steer *s, struct xp_steer_stats *out);

struct xp_steer_info {
	char ifname[16];
	int ifindex;
	__u32 prog_id;
	enum xp_steer_mode mode; /* NATIVE or SKB as attached */
	bool legacy; /* single program: libxdp's dispatcher unavailable */
	char pin_path[512];
};
XP_API int xp_steer_info_get(const struct xp_steer *s, struct xp_steer_info *out);

/* Rule text <-> struct, e.g. "prio 10 udp dport 4789 action xsk",
 * "src 198.18.0.0/15 action drop". @err gets a one-line reason. */
XP_API int xp_rule_parse(int argc, char **argv, struct xp_rule *out, char *err, size_t errlen);
XP_API int xp_rule_format(const struct xp_rule *r, char *buf, size_t len);
XP_API int xp_action_parse(int argc, char **argv, int *used, struct xp_action *out, char *err,
			   size_t errlen);
XP_API int xp_action_format(const struct xp_action *a, char *buf, size_t len);
/* A rule file: one rule per line, '#' comments; -EINVAL with "line N: ..." in @err. */
XP_API int xp_rules_parse_file(const char *path, struct xp_rule *rules, __u32 max, __u32 *n,
			       char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_STEER_H */
