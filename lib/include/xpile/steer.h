/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering: the XDP program in front of the AF_XDP engine, its rules and its socket
 * slots. Used by xpile-loader, the engine and the tests. Host plumbing is beside it:
 * bpffs, pins and BPF object lookup in xpile/bpffs.h, the wiring plan in xpile/wire.h,
 * feature probes in xpile/features.h; the program's life after open in
 * xpile/steer_owner.h.
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
#include "xpile/api.h"
#include "xpile/opts.h"

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
	/* Attach through a bpf_link (pinned as xp_link beside the maps) instead of netlink:
	 * a netlink detach by someone else (DPDK's net_af_xdp does one when its port
	 * closes) fails with -EBUSY, and the program outlives every process while the
	 * pin stays. Never inside libxdp's dispatcher. */
	bool link;
	__u8 reserved_[3]; /* zero: the tail has no unnamed padding (xpile/opts.h) */
	/* Where the failure's reason goes, as one line (NUL-terminated, cut to fit), instead
	 * of the log hook: the errors and warnings of this call. NULL: the hook. */
	char *errbuf;
	size_t errbuf_sz;
};
#define xp_steer_opts__last_field errbuf_sz

/*
 * Loads, attaches and pins the steer program on @o->ifname, or with
 * @o->attach_existing opens what is pinned there already (-ENOENT when nothing is).
 * *@out is the caller's to xp_steer_close(); the program and pins outlive it unless
 * closed with detach. -EINVAL (no ifname, the opts rule), -ENODEV (no such
 * interface in this namespace), -EPERM (no CAP_BPF/CAP_NET_ADMIN), -EBUSY (another
 * XDP program and no @o->force), -EEXIST (ours runs there already: open it with
 * attach_existing), -ENOENT / -ESTALE (attach_existing: no pins, or pins of a program
 * no longer attached), or libbpf's/libxdp's negative errno; each logged.
 */
XP_API int xp_steer_open(const struct xp_steer_opts *o, struct xp_steer **out);
/* Frees @s (NULL is fine). @detach: also detach the program and remove the pins
 * (what `xpile-loader unload` does); failures then are logged as warnings. */
XP_API void xp_steer_close(struct xp_steer *s, bool detach);
/* Removes pins left behind by a steer that is no longer attached (stale); -EBUSY if
 * the pinned program still runs on @ifname. @pin_path NULL: the default. 0 when
 * there were none. */
XP_API int xp_steer_remove_stale(const char *ifname, const char *pin_path);

/* Routes XSK verdicts of RX queue @queue (< XP_STEER_MAX_QUEUES) to socket @xsk_fd
 * (an AF_XDP socket bound to that queue of this interface; the map takes its own
 * reference). 0, -EINVAL (queue out of range, bad fd) or the map update's -errno. */
XP_API int xp_steer_xsk_set(struct xp_steer *s, __u32 queue, int xsk_fd);
/* Undoes xp_steer_xsk_set(): XSK verdicts of @queue fall back to PASS. 0 also when
 * none was set; -EINVAL for a queue out of range. */
XP_API int xp_steer_xsk_clear(struct xp_steer *s, __u32 queue);
/* Named socket slots (rule action "xsk slot N"), 0 <= slot < XP_STEER_XSK_SLOTS; the
 * same returns as the queue calls above. */
XP_API int xp_steer_slot_set(struct xp_steer *s, __u32 slot, int xsk_fd);
XP_API int xp_steer_slot_clear(struct xp_steer *s, __u32 slot);
/* The XSKMAP's fd (owned by @s: do not close it). */
XP_API int xp_steer_xskmap_fd(const struct xp_steer *s);
/* The steer program itself (e.g. for BPF_PROG_TEST_RUN); owned by @s likewise. */
XP_API int xp_steer_prog_fd(const struct xp_steer *s);
/* The bpf_link the program is attached through (opts.link, or found pinned by
 * attach_existing), owned by @s; -ENOENT when it was attached through netlink. */
XP_API int xp_steer_link_fd(const struct xp_steer *s);

/*
 * Rules. Replace swaps the whole set of @n rules (at most XP_STEER_MAX_RULES,
 * evaluated by prio) atomically (no packet sees a mix) and returns after no packet
 * can still be using the old set. Rules get ids in order; @rules may carry id 0 (a
 * new id is assigned). Writers of one interface are serialised across processes.
 * 0, -EINVAL (a rule that does not check, named in the log), -E2BIG, or -errno.
 */
XP_API int xp_steer_rules_replace(struct xp_steer *s, const struct xp_rule *rules, __u32 n);
struct xp_steer_set_opts {
	size_t sz; /* sizeof(struct xp_steer_set_opts); the rule: xpile/opts.h */
	const struct xp_rule *rules; /* the whole new set, as xp_steer_rules_replace() */
	__u32 nrules;
	bool keep_rules; /* the rules in force stay (rules, nrules unused) */
	__u8 reserved_[3]; /* zero */
	const struct xp_action *dflt; /* when no rule matches; NULL: kept */
	const struct xp_action *parse_err; /* on a parse error; NULL: kept */
	char *errbuf; /* the failure's reason as one line instead of the hook; NULL: hook */
	size_t errbuf_sz;
};
#define xp_steer_set_opts__last_field errbuf_sz
/* Rules and default actions together, in one replace (one lock, one compile, one flip):
 * no packet sees the new rules with the old default or the other way round. The
 * returns of xp_steer_rules_replace(). */
XP_API int xp_steer_set(struct xp_steer *s, const struct xp_steer_set_opts *opts);
/* Copies up to @max rules in force to @rules, in evaluation order, with per-rule
 * counters (summed over CPUs) to @counters (NULL to skip); *@n = how many. 0 or -errno. */
XP_API int xp_steer_rules_get(struct xp_steer *s, struct xp_rule *rules,
			      struct xp_counter *counters, __u32 max, __u32 *n);
/* Adds rule @r (its id is ignored) to the set in force, as one replace; *@id (NULL to
 * skip) gets the id it was given. The returns of xp_steer_rules_replace(). */
XP_API int xp_steer_rule_add(struct xp_steer *s, const struct xp_rule *r, __u32 *id);
/* Removes the rule with id @id, as one replace: 0, -ENOENT (no such id; logged), or
 * the returns of xp_steer_rules_replace(). */
XP_API int xp_steer_rule_del(struct xp_steer *s, __u32 id);
/* Sets the action when no rule matches (@dflt) and on a parse error (@parse_err);
 * NULL keeps that one. Rules stay; one replace. */
XP_API int xp_steer_default_set(struct xp_steer *s, const struct xp_action *dflt,
				const struct xp_action *parse_err);
/* Reads the two actions of xp_steer_default_set() (NULL to skip one). 0 or -errno. */
XP_API int xp_steer_default_get(struct xp_steer *s, struct xp_action *dflt,
				struct xp_action *parse_err);

struct xp_steer_stats {
	struct xp_counter verdict[XP_CNT_MAX];
	__u64 parse_err[XP_PERR_MAX];
};
/* Verdict and parse-error counters, summed over CPUs, into @out: 0 or -errno. */
XP_API int xp_steer_stats_read(struct xp_steer *s, struct xp_steer_stats *out);

/*
 * The route action (XP_ACT_ROUTE, bpf/route.h): which devices the kernel's FIB may name
 * and the ports behind them. xp_steer_route_via_set() says that a lookup through (or a
 * route out of) @ifindex, e.g. a port's host TAP, is one through (out of) port
 * @via->ifindex, MAC @via->mac, by table @via->table (0: the kernel's rules). The maps are
 * the loaded program's own, not pinned: a program loaded anew (a replace) starts with no
 * ports and routes nothing until they are set again. 0, -EINVAL (@ifindex 0),
 * -E2BIG (more than XP_ROUTE_VIA_MAX), -ENOENT (a program without the route action),
 * or -errno.
 */
XP_API int xp_steer_route_via_set(struct xp_steer *s, __u32 ifindex,
				  const struct xp_route_via *via);
/* A new fd of the program's xp_route_via (the caller closes it), for a writer that keeps
 * its own (a control thread), or -ENOENT as above. */
XP_API int xp_steer_route_via_fd(struct xp_steer *s);
/*
 * A new fd of the program's xp_route_gen (the caller closes it), or -ENOENT as above:
 * the route action's IPv4 flow cache (steer_abi.h, XP_ROUTE_CACHE_SLOTS) is on while
 * its one __u32 is not 0, and an answer kept under one value is dropped once it holds
 * another. Its writer must write a new value after every change of routes, rules,
 * nexthops, neighbours, addresses, links, netconf or xp_route_via it could miss
 * otherwise (the router's control thread listens for them all), and 0 when it stops.
 */
XP_API int xp_steer_route_gen_fd(struct xp_steer *s);
/* Undoes xp_steer_route_via_set(): 0 also when none was set. */
XP_API int xp_steer_route_via_clear(struct xp_steer *s, __u32 ifindex);
/* The route action's counters summed over CPUs (forwarded in XDP, and why not): 0 or -errno. */
XP_API int xp_steer_route_stats_read(struct xp_steer *s, struct xp_route_stats *out);
/* The name of a reason of enum xp_route_miss ("no_neigh", "ttl", ...); "?" if unknown. */
XP_API const char *xp_route_miss_name(__u32 why);

struct xp_steer_info {
	char ifname[16];
	int ifindex;
	__u32 prog_id;
	enum xp_steer_mode mode; /* NATIVE or SKB as attached */
	bool legacy; /* single program: libxdp's dispatcher unavailable */
	char pin_path[512];
};
/* What @s is attached to and pinned where (the host's path, not a /proc/PID/root
 * detour): 0 or -ENAMETOOLONG. */
XP_API int xp_steer_info_get(const struct xp_steer *s, struct xp_steer_info *out);

/*
 * Rule text <-> struct, e.g. "prio 10 udp dport 4789 action xsk",
 * "src 198.18.0.0/15 action drop". The parsers take the words of one rule (or
 * action) in @argv, fill *@out and return 0, or -EINVAL with a one-line reason in
 * @err (@errlen bytes) naming the word and what is accepted.
 */
XP_API int xp_rule_parse(int argc, char **argv, struct xp_rule *out, char *err, size_t errlen);
/* The most words and bytes one rule's text has: more is a mistake (a pasted blob, a
 * binary file), refused rather than split or cut short. */
#define XP_RULE_WORDS_MAX 64
#define XP_RULE_TEXT_MAX 4096
/* Splits @text in place at blanks into at most @max (<= XP_RULE_WORDS_MAX) words in
 * @argv: how many (0 for none), or -E2BIG with "more than N words; a rule has fewer" in
 * @err. The tokeniser every reader of rule text shares. */
XP_API int xp_rule_words(char *text, char **argv, int max, char *err, size_t errlen);
/* xp_rule_parse() of one rule's text, e.g. "udp dport 4789 action xsk": 0, or -EINVAL
 * with a one-line reason in @err (an empty or overlong text, too many words, or what
 * xp_rule_parse() says). */
XP_API int xp_rule_parse_str(const char *text, struct xp_rule *out, char *err, size_t errlen);
/* Writes @r as rule text xp_rule_parse() reads back to @buf: its length, or -ENOSPC
 * when @len is too short (@buf then holds a truncated string). */
XP_API int xp_rule_format(const struct xp_rule *r, char *buf, size_t len);
/* 1 when the frame at @frame (@len bytes, from its Ethernet header) received on RX
 * queue @queue matches @r's fields (its action and prio are ignored), else 0: the steer
 * program's parser and semantics (a frame it cannot parse matches no rule). */
XP_API int xp_rule_match(const struct xp_rule *r, const void *frame, __u32 len, __u32 queue);
/* Parses an action from the start of @argv; *@used = words it took (1..3). */
XP_API int xp_action_parse(int argc, char **argv, int *used, struct xp_action *out, char *err,
			   size_t errlen);
/* Writes @a as action text ("drop", "redirect eth1", "xsk slot 3"...) to @buf: the
 * length snprintf() gives (>= @len when truncated). */
XP_API int xp_action_format(const struct xp_action *a, char *buf, size_t len);
/* Reads a rule file (@path, "-" for stdin): one rule per line, '#' comments, up to
 * @max rules into @rules, *@n = how many. 0, or -EINVAL with "PATH line N: ..." in
 * @err (also for a file that cannot be opened, or more than @max rules). */
XP_API int xp_rules_parse_file(const char *path, struct xp_rule *rules, __u32 max, __u32 *n,
			       char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_STEER_H */
