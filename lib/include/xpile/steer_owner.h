/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who owns the steer program on an interface and whether it is still there: what a
 * running engine watches, what `xpile-loader unload` asks before it removes anything,
 * and a new build put in place of the running one (lib/steer_owner.c).
 *
 *   struct xp_steer_health h;
 *   xp_steer_check(s, &h);               // one netlink query and a stat() when all is well
 *   if (h.prog_gone && !h.pins_gone) xp_steer_reattach(s);
 *
 * xp_steer_close(s, true) detaches the program only while it still runs on the
 * interface, and unpins only pins that still hold it: after a removal and a new `load`
 * the new program and its pins are not @s's to touch.
 */
#ifndef XPILE_STEER_OWNER_H
#define XPILE_STEER_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xpile/steer.h"

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xp_steer_health {
	bool iface_gone; /* the interface was deleted (its program went with it) */
	bool prog_gone; /* no XDP program on the interface */
	bool prog_replaced; /* another program runs there: attached_id, attached_name */
	bool pins_gone; /* our pins were removed (an unload) */
	bool pins_replaced; /* the pins now hold another program (a new load) */
	__u32 attached_id;
	char attached_name[16];
};

struct xp_steer_replace_opts {
	size_t sz; /* sizeof(struct xp_steer_replace_opts); the rule: xpile/opts.h */
	const char *bpf_obj; /* the new build; NULL: xp_bpf_obj_path("steer.o") */
};
#define xp_steer_replace_opts__last_field bpf_obj

/*
 * Replaces the running steer program of @s (opened with attach_existing, or loaded) with
 * a new build, atomically: the new program takes over the pinned maps (XSKMAP, rule
 * sets, counters, config) before it loads, and the kernel swaps it in only if ours still
 * runs (XDP_FLAGS_REPLACE with the old fd). Sockets stay attached, counters continue,
 * the program pin then holds the new one and xp_steer_prog_id() gives its id; another
 * holder's xp_steer_check() follows it. -EPROTO (one line naming what differs) when the
 * new object's map layout version or any pinned map's type, key, value, size or flags
 * differs and no migration exists for the version pair; -EOPNOTSUPP inside libxdp's
 * dispatcher; -EEXIST when another program replaced ours meanwhile. The old program
 * keeps running on any failure.
 */
XP_API int xp_steer_replace_prog(struct xp_steer *s, const struct xp_steer_replace_opts *opts);

/* Cheap enough to call every 100-250 ms from a control thread. */
XP_API int xp_steer_check(struct xp_steer *s, struct xp_steer_health *h);
/* Attach our program again after it was removed (it must be ours: loaded by @s);
 * attached through a bpf_link, through a new link, pinned in place of the old. */
XP_API int xp_steer_reattach(struct xp_steer *s);
/* Pin our program and maps again where they were. */
XP_API int xp_steer_repin(struct xp_steer *s);
/* Mark the program loaded by an engine (true) or by the loader (false). */
XP_API int xp_steer_owner_set(struct xp_steer *s, bool engine);
XP_API bool xp_steer_engine_loaded(struct xp_steer *s);
XP_API __u32 xp_steer_prog_id(const struct xp_steer *s);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_STEER_OWNER_H */
