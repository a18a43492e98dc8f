/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --mode router: an IPv4/IPv6 router whose control plane is the kernel of its own
 * network namespace (docs/router.md, "The router"). Every port has a host TAP
 * (--host-tap, made for the ports not named) that holds the port's addresses; the
 * FIB (xpile/fib.h) mirrors that namespace's routes, neighbours and addresses over
 * rtnetlink (xpile/fib_nl.h) on a control thread, and the workers forward what it can
 * serve: lookup, ECMP by flow hash, TTL/hop limit minus one (incremental checksum),
 * MAC rewrite. Everything else is punted up the ingress port's TAP so the kernel does
 * it (own addresses, TTL expiry, no neighbour yet, IP options, fragments, too big for
 * the output port, routes marked for the kernel, ARP and other protocols), counted by
 * reason.
 */
#ifndef XPILE_MODES_ROUTER_H
#define XPILE_MODES_ROUTER_H

#include <stdbool.h>
#include <linux/types.h>

struct engine;

/* What the router counts, beside the FIB's punt and drop reasons (0..XP_FIB_R_NR-1). */
enum eng_rt_reason {
	ENG_RT_TTL = 16, /* TTL / hop limit would expire: the kernel sends time exceeded */
	ENG_RT_OPTIONS, /* IPv4 options, IPv6 hop-by-hop header */
	ENG_RT_FRAGMENT, /* an IPv4 fragment */
	ENG_RT_MTU, /* larger than the output port's MTU: the kernel fragments or says so */
	ENG_RT_NON_IP, /* ARP and every other EtherType */
	ENG_RT_MULTICAST, /* broadcast, multicast frames: a copy went up, the frame freed */
	ENG_RT_MALFORMED, /* dropped: truncated or bad headers (the kernel drops them too) */
	ENG_RT_NOT_OURS, /* dropped: unicast to another MAC */
	ENG_RT_CHAINED, /* dropped: multi-buffer frames */
	ENG_RT_NR,
};

/* The router's options (main.c). */
struct eng_router_cfg {
	__u32 table; /* routing table mirrored; 0 = main */
	__u32 lpm_groups; /* the IPv4 table's groups (1 KiB each); 0 = the FIB's default */
	bool inplace; /* one image: every change live at once (default: batches) */
	int xdp; /* enum eng_rt_xdp_use: the XDP fast path (router_xdp.h) */
};

enum eng_rt_xdp_use { ENG_RT_XDP_ON, ENG_RT_XDP_OFF };

struct eng_router; /* router.c */

/* Set-up stage after the TAPs: the FIB, its mirror and the control thread. */
int eng_router_setup(struct engine *e);
void eng_router_free(struct engine *e);
/* The counters and the control plane's figures, at exit. */
void eng_router_report(struct engine *e);

#endif /* XPILE_MODES_ROUTER_H */
