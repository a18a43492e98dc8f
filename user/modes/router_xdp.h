/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The router's XDP fast path (router_xdp.c): each port's steer program gets the route
 * action (bpf/route.h) as its default, so what the kernel's FIB and neighbours can
 * forward leaves in XDP, by the kernel's own lookup, before any copy to the engine; the
 * rest reaches the engine's sockets as before and is forwarded, punted or dropped there
 * (router.c). A port is an egress of the fast path only while it takes redirected
 * frames (xp_if_redirect_target(): a veth while its peer has NAPI), re-checked twice a
 * second; routes out of the others are the engine's. --router-xdp off keeps every
 * packet on the engine's path.
 */
#ifndef XPILE_MODES_ROUTER_XDP_H
#define XPILE_MODES_ROUTER_XDP_H

#include <stdbool.h>
#include <linux/types.h>

#include "steer_abi.h"

struct engine;
struct eng_rt_xdp;

/* Fills every own port's route ports and sets its default action to route by table
 * @table (0 or 254: the kernel's rules, main): 0, or -errno after one line. *@out NULL
 * when no port's program is the engine's. */
int eng_rt_xdp_setup(struct engine *e, __u32 table, struct eng_rt_xdp **out);
/* Control thread: re-probes which ports take redirected frames, at most every
 * ENG_RT_XDP_PROBE_NS; a change is said once. */
void eng_rt_xdp_refresh(struct eng_rt_xdp *x, __u64 now_ns);
#define ENG_RT_XDP_PROBE_NS 500000000ull
/* Control thread: the socket that says the kernel changed something a lookup's answer
 * depends on (-1: none, the flow cache is off), and what to call when it is readable:
 * it drains it and drops every flow cache's answers. */
int eng_rt_xdp_nl_fd(const struct eng_rt_xdp *x);
void eng_rt_xdp_changed(struct eng_rt_xdp *x);
/* The fast path's counters summed over ports and CPUs: false when it is off. */
bool eng_rt_xdp_stats(struct eng_rt_xdp *x, struct xp_route_stats *sum);
/* The ports it serves, as "a (egress), b": for the report. */
void eng_rt_xdp_ports(const struct eng_rt_xdp *x, char *buf, size_t len);
void eng_rt_xdp_free(struct eng_rt_xdp *x);

#endif /* XPILE_MODES_ROUTER_XDP_H */
