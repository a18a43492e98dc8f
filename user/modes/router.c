// SPDX-License-Identifier: BSD-3-Clause
/*
 * router: the per-packet path and the control thread of --mode router (router.h).
 *
 * Workers: each burst of a socket is classified frame by frame and leaves as at most
 * one TX batch per port, one punt each to the ingress port's TAP, and one free of the
 * dropped. A worker reads the FIB only while it is online in the qsbr: it goes offline
 * when a socket has nothing for it (so an idle or sleeping worker never holds the
 * control thread's grace periods) and quiescent after every burst.
 *
 * Control thread: waits on the mirror's netlink socket and applies what arrives in
 * batches of at most 256 notifications, one commit each (xp_fib_nl_process()); the
 * time from the socket turning readable to the commit is sampled for the exit report
 * (the route-change latency of issue 27).
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/sockios.h>

#include "xpile/fib.h"
#include "xpile/fib_nl.h"
#include "xpile/qsbr.h"

#include "../dom.h"
#include "../engine.h"
#include "../rings.h"
#include "../tap.h"
#include "modes.h"
#include "router.h"
#include "router_xdp.h"

#define RT_NL_BUDGET 256u
#define RT_LAT_MAX 65536u /* latency samples kept (the first ones) */

struct rt_worker {
	__u32 qsbr_id;
	bool online;
	struct eng_q *out[ENG_MAX_PORTS]; /* this worker's socket on each port */
	__u64 forwarded[2]; /* IPv4, IPv6 */
	__u64 count[ENG_RT_NR]; /* punts and drops by reason */
	struct xdp_desc tx[ENG_MAX_PORTS][ENG_MAX_BATCH];
	__u32 ntx[ENG_MAX_PORTS];
	struct xdp_desc drop[ENG_MAX_BATCH];
} __attribute__((aligned(64)));

struct eng_router {
	struct xp_qsbr *qsbr;
	struct xp_fib *fib;
	struct xp_fib_nl *nl;
	struct eng_rt_xdp *xdp; /* the XDP fast path, NULL when off */
	struct rt_worker *w; /* one per engine worker, by id */
	__u32 mtu[ENG_MAX_PORTS];
	pthread_t ctl;
	bool ctl_started;
	volatile int stop;
	int ctl_err;
	__u64 *lat; /* ns, readable -> committed */
	__u32 nlat;
	__u64 lat_max, batches;
	/* Bursts: commits less than RT_BURST_GAP_NS apart. The longest one is what a
	 * table load (ip -batch, a BGP session coming up) took to converge. */
	__u64 burst_t0, burst_last, burst_msgs, burst_max_ns, burst_max_msgs;
	__u64 last_unix_ns; /* CLOCK_REALTIME of the last commit: a load's end, for scripts */
};

#define RT_BURST_GAP_NS 200000000ull
#define RT_CTL_NICE (-10)

static const char *const rt_names[ENG_RT_NR] = {
	[ENG_RT_TTL] = "ttl",
	[ENG_RT_OPTIONS] = "ip_options",
	[ENG_RT_FRAGMENT] = "fragment",
	[ENG_RT_MTU] = "mtu",
	[ENG_RT_NON_IP] = "non_ip",
	[ENG_RT_MULTICAST] = "multicast",
	[ENG_RT_MALFORMED] = "malformed",
	[ENG_RT_NOT_OURS] = "not_ours",
	[ENG_RT_CHAINED] = "multi_buffer",
};

static const char *reason_name(__u32 r)
{
	return r < XP_FIB_R_NR ? xp_fib_reason_name(r) : rt_names[r] ? rt_names[r] : "?";
}

/* What is dropped rather than punted (the rest of the reasons punt). */
static bool is_drop(__u32 r)
{
	return r == XP_FIB_R_BLACKHOLE || r == ENG_RT_MALFORMED || r == ENG_RT_NOT_OURS ||
	       r == ENG_RT_CHAINED || r == ENG_RT_MULTICAST;
}

/* ---- the per-packet path ---- */

static inline __u32 rt_mix(__u32 h)
{
	/* murmur3's finaliser: every input bit moves the top bits ECMP picks by. */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

static inline __u32 rd32(const __u8 *p)
{
	__u32 v;

	memcpy(&v, p, 4);
	return v;
}

/* The flow's hash: addresses, protocol and, for TCP/UDP/SCTP, the ports. */
static inline __u32 rt_hash(const __u8 *src, const __u8 *dst, __u32 alen, __u8 proto,
			    const __u8 *l4, const __u8 *end)
{
	__u32 h = proto * 0x9e3779b1u;

	for (__u32 i = 0; i < alen; i += 4)
		h = rt_mix(h ^ rd32(src + i)) + rd32(dst + i);
	if ((proto == 6 || proto == 17 || proto == 132) && l4 + 4 <= end)
		h ^= rd32(l4);
	return rt_mix(h);
}

/* The ports' MACs as the frame's new source, the neighbour's as its destination. */
static inline void rt_rewrite(__u8 *p, const struct xp_fib_out *o, const struct engine *e)
{
	memcpy(p, o->mac, 6);
	memcpy(p + 6, e->ports[o->port].mac, 6);
}

/*
 * After the lookup, what both families check before the frame leaves: the route's own
 * verdict, then the hop limit (@ttl, the kernel answers expiry) and the egress MTU
 * (@l3len, the packet's IP length). XP_FIB_R_NONE (0) when it may go.
 */
static inline __u32 rt_fwd_check(const struct eng_router *r, enum xp_fib_verdict verdict,
				 const struct xp_fib_out *o, __u8 ttl, __u32 l3len)
{
	if (verdict != XP_FIB_FWD)
		return o->reason;
	if (ttl <= 1)
		return ENG_RT_TTL;
	if (l3len > r->mtu[o->port])
		return ENG_RT_MTU;
	return XP_FIB_R_NONE;
}

/*
 * One IPv4 packet: FWD (out filled, frame rewritten) or the reason it punts or drops.
 * The header checksum is not verified (a bad one stays bad: the incremental update
 * keeps it wrong, so the next hop drops it).
 */
static inline __u32 rt_ip4(const struct eng_router *r, const struct engine *e, __u8 *p, __u32 len,
			   struct xp_fib_out *o)
{
	__u8 *ip = p + 14;
	__u32 ihl, tot, sum, why;

	if (len < 34 || (ip[0] >> 4) != 4 || (ihl = (ip[0] & 15u) * 4) < 20)
		return ENG_RT_MALFORMED;
	tot = (__u32)ip[2] << 8 | ip[3];
	if (tot < ihl || 14 + tot > len)
		return ENG_RT_MALFORMED;
	if (ihl > 20)
		return ENG_RT_OPTIONS;
	if ((ip[6] & 0x3f) || ip[7]) /* MF or an offset */
		return ENG_RT_FRAGMENT;

	__u32 hash = rt_hash(ip + 12, ip + 16, 4, ip[9], ip + 20, p + len);

	why = rt_fwd_check(r, xp_fib_lookup4(r->fib, ntohl(rd32(ip + 16)), hash, o), o, ip[8], tot);
	if (why)
		return why;
	/* RFC 1624: TTL is the high byte of its word, so the sum grows by 0x0100. */
	ip[8]--;
	sum = ((__u32)ip[10] << 8 | ip[11]) + 0x0100;
	sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (__u8)(sum >> 8);
	ip[11] = (__u8)sum;
	rt_rewrite(p, o, e);
	return XP_FIB_R_NONE;
}

static inline __u32 rt_ip6(const struct eng_router *r, const struct engine *e, __u8 *p, __u32 len,
			   struct xp_fib_out *o)
{
	__u8 *ip = p + 14;
	__u32 plen, why;

	if (len < 54 || (ip[0] >> 4) != 6)
		return ENG_RT_MALFORMED;
	plen = (__u32)ip[4] << 8 | ip[5];
	if (54 + plen > len)
		return ENG_RT_MALFORMED;
	if (ip[6] == 0) /* hop-by-hop options: every router reads them */
		return ENG_RT_OPTIONS;

	__u32 hash = rt_hash(ip + 8, ip + 24, 16, ip[6], ip + 40, p + len);

	why = rt_fwd_check(r, xp_fib_lookup6(r->fib, ip + 24, hash, o), o, ip[7], 40 + plen);
	if (why)
		return why;
	ip[7]--; /* no header checksum in IPv6 */
	rt_rewrite(p, o, e);
	return XP_FIB_R_NONE;
}

static __u32 router_poll(struct eng_worker *w, struct eng_q *q)
{
	struct engine *e = w->e;
	struct eng_router *r = e->router;
	struct rt_worker *rw = &r->w[w->id];
	__u32 n = eng_rx_ring(w, q, w->descs, e->cfg.batch), i, ndrop = 0;

	if (!n) {
		if (rw->online) {
			xp_qsbr_offline(r->qsbr, rw->qsbr_id);
			rw->online = false;
		}
		return 0;
	}
	if (!rw->online) {
		xp_qsbr_online(r->qsbr, rw->qsbr_id);
		rw->online = true;
	}
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = &w->descs[i];
		__u8 *p = eng_data(q->dom, d->addr);
		struct xp_fib_out o = { .port = 0 };
		__u32 why;

		if (d->options & XDP_PKT_CONTD || (i && (d[-1].options & XDP_PKT_CONTD))) {
			why = ENG_RT_CHAINED;
		} else if (d->len < 14) {
			why = ENG_RT_MALFORMED;
		} else if (p[0] & 1) {
			/* ARP requests, ND solicitations, OSPF hellos: the kernel's. */
			eng_tap_copy(w, q, d);
			why = ENG_RT_MULTICAST;
		} else if (memcmp(p, q->port->mac, 6)) {
			why = ENG_RT_NOT_OURS;
		} else if ((p[12] == 0x08 && p[13] == 0x00) || (p[12] == 0x86 && p[13] == 0xdd)) {
			bool v6 = p[12] == 0x86;

			why = v6 ? rt_ip6(r, e, p, d->len, &o) : rt_ip4(r, e, p, d->len, &o);
			if (!why) {
				rw->forwarded[v6]++;
				rw->tx[o.port][rw->ntx[o.port]++] = *d;
				continue;
			}
		} else {
			why = ENG_RT_NON_IP;
		}
		rw->count[why]++;
		if (is_drop(why))
			rw->drop[ndrop++] = *d;
		else
			eng_tap_punt_one(w, q, d); /* up the port it came in on */
	}
	if (ndrop)
		eng_free_descs(q->wd, w->scratch, rw->drop, ndrop);
	for (i = 0; i < e->cfg.nports; i++) {
		if (!rw->ntx[i])
			continue;
		eng_tx(w, rw->out[i], rw->tx[i], rw->ntx[i]);
		rw->ntx[i] = 0;
	}
	xp_qsbr_quiescent(r->qsbr, rw->qsbr_id);
	return n;
}

const struct eng_mode eng_mode_router = {
	.name = "router",
	.needs_rx = true,
	.nports_min = 1,
	.nports_max = ENG_MAX_PORTS,
	.poll = router_poll,
	.setup_late = eng_router_setup,
	.teardown_late = eng_router_free,
	.report = eng_router_report,
};

/* ---- the control thread ---- */

static void *ctl_main(void *arg)
{
	struct eng_router *r = arg;
	struct pollfd pfd[2] = { { .fd = xp_fib_nl_fd(r->nl), .events = POLLIN },
				 { .fd = eng_rt_xdp_nl_fd(r->xdp), .events = POLLIN } };

	/* Ahead of busy threads when a notification wakes it (where allowed): it sleeps
	 * nearly always, and each wake-up is one bounded batch. Without it the wake-up
	 * waited up to 200 ms behind the workers and the generator on a loaded 2-core
	 * machine (tools/bench/router.sh, change). */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), RT_CTL_NICE);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int n = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, 50);
		struct timespec rt;
		__u64 t0, dt;

		/* The flow cache first: the fast path is then on the kernel's new state
		 * within a wake-up of its notification. */
		if (n > 0 && pfd[1].fd >= 0 && pfd[1].revents)
			eng_rt_xdp_changed(r->xdp);
		eng_rt_xdp_refresh(r->xdp, eng_now_ns());
		if (n <= 0 || !pfd[0].revents)
			continue;
		t0 = eng_now_ns();
		n = xp_fib_nl_process(r->nl, RT_NL_BUDGET);
		if (n < 0) {
			r->ctl_err = n;
			ut_say(n, "router: the rtnetlink mirror failed (%s): routes are frozen",
			       strerror(-n));
			break;
		}
		if (!n)
			continue;
		dt = eng_now_ns() - t0;
		if (!r->burst_t0 || t0 - r->burst_last > RT_BURST_GAP_NS) {
			r->burst_t0 = t0;
			r->burst_msgs = 0;
		}
		r->burst_last = t0 + dt;
		clock_gettime(CLOCK_REALTIME, &rt);
		r->last_unix_ns = (__u64)rt.tv_sec * 1000000000ull + (__u64)rt.tv_nsec;
		r->burst_msgs += (__u64)n;
		if (r->burst_last - r->burst_t0 >= r->burst_max_ns) {
			r->burst_max_ns = r->burst_last - r->burst_t0;
			r->burst_max_msgs = r->burst_msgs;
		}
		if (r->nlat < RT_LAT_MAX)
			r->lat[r->nlat++] = dt;
		if (dt > r->lat_max)
			r->lat_max = dt;
		r->batches++;
	}
	return NULL;
}

/* ---- set-up and tear-down ---- */

static int port_mtu(const char *ifname, __u32 *mtu)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFMTU, &ifr))
		err = -errno;
	else
		*mtu = (__u32)ifr.ifr_mtu;
	close(s);
	return err;
}

static int sysctl_read(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		(void)fclose(f);
	}
	return v;
}

/* Knobs of the namespace's kernel that make the router do less than it could: said
 * once at start, with the fix. */
static void sysctl_check(const struct engine *e, bool xdp)
{
	char path[80];

	if (e->cfg.quiet)
		return;
	for (int v6 = 0; v6 < 2; v6++) {
		int policy;

		(void)snprintf(path, sizeof(path), "/proc/sys/net/ipv%c/conf/all/forwarding",
			       v6 ? '6' : '4');
		if (!sysctl_read(path, 1))
			ut_say(0,
			       "router: %s is 0: what is punted for the kernel to forward (no neighbour yet, options, fragments) is dropped there; sysctl -w net.ipv%c.conf.all.forwarding=1",
			       path, v6 ? '6' : '4');
		(void)snprintf(path, sizeof(path), "/proc/sys/net/ipv%c/fib_multipath_hash_policy",
			       v6 ? '6' : '4');
		policy = sysctl_read(path, 1);
		if (xdp && (policy == 0 || policy == 2))
			ut_say(0,
			       "router: %s is %d: the XDP path spreads ECMP by addresses only, every flow between two hosts on one path; sysctl -w net.ipv%c.fib_multipath_hash_policy=1 for flows",
			       path, policy, v6 ? '6' : '4');
	}
}

int eng_router_setup(struct engine *e)
{
	const struct eng_router_cfg *c = e->cfg.router;
	struct eng_router *r;
	__u32 i, j;
	int err;

	if (!c)
		return 0;
	if (e->ndoms != 1)
		return eng_refuse(
			e, -EINVAL,
			"--mode router moves frames between ports and through the TAPs: it needs --umem shared (the default)");
	r = calloc(1, sizeof(*r));
	if (!r)
		return ut_say(-ENOMEM, "out of memory for the router");
	e->router = r;
	r->w = aligned_alloc(64, sizeof(*r->w) * e->nworkers);
	r->lat = calloc(RT_LAT_MAX, sizeof(*r->lat));
	if (!r->w || !r->lat)
		return ut_say(-ENOMEM, "out of memory for the router");
	memset(r->w, 0, sizeof(*r->w) * e->nworkers);
	for (i = 0; i < e->cfg.nports; i++) {
		err = port_mtu(e->ports[i].ifname, &r->mtu[i]);
		if (err)
			return ut_say(err, "router: the MTU of %s: %s", e->ports[i].ifname,
				      strerror(-err));
	}
	/* Every worker sends out of every port: it needs a socket on each. */
	for (i = 0; i < e->nworkers; i++) {
		struct eng_worker *w = &e->workers[i];

		for (j = 0; j < w->nq; j++)
			r->w[w->id].out[w->q[j]->port - e->ports] = w->q[j];
		for (j = 0; j < e->cfg.nports; j++)
			if (!r->w[w->id].out[j])
				return eng_refuse(
					e, -EINVAL,
					"--mode router: core %d serves no queue of %s, so it could not send there; give every --iface the same queues (e.g. IFACE:0-1 on each)",
					w->core, e->ports[j].ifname);
	}
	err = xp_qsbr_create(e->nworkers, &r->qsbr);
	if (err)
		return ut_say(err, "router: qsbr: %s", strerror(-err));
	for (i = 0; i < e->nworkers; i++) {
		err = xp_qsbr_register(r->qsbr, &r->w[i].qsbr_id);
		if (err)
			return ut_say(err, "router: qsbr: %s", strerror(-err));
		xp_qsbr_offline(r->qsbr, r->w[i].qsbr_id); /* online at its first packet */
	}

	XP_OPTS(xp_fib_opts, fo, .qsbr = r->qsbr, .lpm4_groups = c->lpm_groups,
		.inplace = c->inplace, .resolve_gateways = true);
	err = xp_fib_create(&fo, &r->fib);
	if (err)
		return ut_say(err, "router: cannot create the FIB: %s%s", strerror(-err),
			      err == -ENOMEM ? " (lower --fib-groups)" : "");
	/* A route via a port's TAP is a route via the port. */
	for (i = 0; i < e->ntaps; i++) {
		struct eng_tap *t = e->taps[i];
		unsigned int idx = if_nametoindex(e->cfg.tap->taps[i].name);

		(void)t;
		for (j = 0; j < e->cfg.nports; j++)
			if (!strcmp(e->ports[j].ifname, e->cfg.tap->taps[i].port) && idx)
				xp_fib_port_set(r->fib, idx, (int)j);
	}
	XP_OPTS(xp_fib_nl_opts, no, .table = c->table);
	err = xp_fib_nl_open(r->fib, &no, &r->nl);
	if (err)
		return err; /* logged by the library */
	/* --uds: the agent's program, not ours to change. Another table: a direct lookup
	 * of it would not see the local table, and could forward what is for the router
	 * (the engine's FIB knows the addresses apart). */
	if (c->xdp == ENG_RT_XDP_OFF || e->cfg.nuds)
		err = 0;
	else if (c->table && c->table != 254)
		err = ut_say(
			0,
			"router: no XDP fast path with --route-table %u (it looks up the kernel's rules, main): every packet goes through the engine",
			c->table);
	else
		err = eng_rt_xdp_setup(e, 0, &r->xdp);
	if (err)
		return err;
	sysctl_check(e, r->xdp);
	err = pthread_create(&r->ctl, NULL, ctl_main, r);
	if (err)
		return ut_say(-err, "router: cannot start the control thread: %s", strerror(err));
	r->ctl_started = true;
	if (!e->cfg.quiet && !e->cfg.json) {
		struct xp_fib_stats st;

		xp_fib_stats(r->fib, &st);
		ut_say(0,
		       "router: FIB of table %u: %llu IPv4 and %llu IPv6 routes, %llu neighbours, %llu local addresses (%s)",
		       c->table ? c->table : 254, (unsigned long long)st.routes[0],
		       (unsigned long long)st.routes[1], (unsigned long long)st.neighbours,
		       (unsigned long long)st.local_addrs,
		       c->inplace ? "in place" : "double-buffered");
		if (r->xdp) {
			char ports[256];

			eng_rt_xdp_ports(r->xdp, ports, sizeof(ports));
			ut_say(0, "router: XDP fast path (bpf_fib_lookup) on %s", ports);
		}
	}
	return 0;
}

void eng_router_free(struct engine *e)
{
	struct eng_router *r = e->router;

	if (!r)
		return;
	if (r->ctl_started) {
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
		pthread_join(r->ctl, NULL);
	}
	eng_rt_xdp_free(r->xdp);
	xp_fib_nl_close(r->nl);
	xp_fib_destroy(r->fib);
	xp_qsbr_destroy(r->qsbr);
	free(r->lat);
	free(r->w);
	free(r);
	e->router = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The XDP path's misses as "reason N, ..." (JSON: "reason":N,...) into @buf. */
static void xdp_misses(const struct xp_route_stats *xs, bool json, char *buf, size_t cap)
{
	size_t l = 0;

	buf[0] = 0;
	for (__u32 k = 1; k < XP_RM_MAX && l < cap; k++) {
		__u64 n = xs->miss[0][k] + xs->miss[1][k];

		if (!n || !strcmp(xp_route_miss_name(k), "?"))
			continue;
		l += (size_t)snprintf(buf + l, cap - l, json ? "%s\"%s\":%llu" : "%s%s %llu",
				      l ? (json ? "," : ", ") : "", xp_route_miss_name(k),
				      (unsigned long long)n);
	}
}

void eng_router_report(struct engine *e)
{
	struct eng_router *r = e->router;
	__u64 fwd[2] = { 0, 0 }, cnt[ENG_RT_NR] = { 0 }, med = 0, p99 = 0;
	struct xp_fib_nl_stats ns;
	struct xp_fib_stats fs;
	char punts[1024], drops[512], misses[512];
	struct xp_route_stats xs;
	bool xdp_on;
	size_t pl = 0, dl = 0;
	double lpm_mib;
	__u32 i, k;

	if (!r)
		return;
	/* The control thread first: its samples are read below. */
	if (r->ctl_started) {
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
		pthread_join(r->ctl, NULL);
		r->ctl_started = false;
	}
	for (i = 0; i < e->nworkers; i++) {
		fwd[0] += r->w[i].forwarded[0];
		fwd[1] += r->w[i].forwarded[1];
		for (k = 0; k < ENG_RT_NR; k++)
			cnt[k] += r->w[i].count[k];
	}
	punts[0] = drops[0] = 0;
	for (k = 1; k < ENG_RT_NR; k++) {
		const char *fmt = e->cfg.json ? "%s\"%s\":%llu" : "%s%s %llu",
			   *sep = e->cfg.json ? "," : ", ";
		bool drop = is_drop(k) && k != ENG_RT_MULTICAST; /* a copy went up */
		char *b = drop ? drops : punts;
		size_t *l = drop ? &dl : &pl, cap = drop ? sizeof(drops) : sizeof(punts);

		if ((k >= XP_FIB_R_NR && k < ENG_RT_TTL) || (!e->cfg.json && !cnt[k]))
			continue;
		if (*l < cap)
			*l += (size_t)snprintf(b + *l, cap - *l, fmt, *l ? sep : "", reason_name(k),
					       (unsigned long long)cnt[k]);
	}
	if (r->nlat) {
		qsort(r->lat, r->nlat, sizeof(*r->lat), cmp_u64);
		med = r->lat[r->nlat / 2];
		p99 = r->lat[(r->nlat * 99) / 100];
	}
	xdp_on = eng_rt_xdp_stats(r->xdp, &xs);
	xdp_misses(&xs, e->cfg.json, misses, sizeof(misses));
	xp_fib_nl_stats(r->nl, &ns);
	xp_fib_stats(r->fib, &fs);
	lpm_mib = (double)(fs.lpm[0].bytes + fs.lpm[1].bytes) / (1 << 20);
	if (e->cfg.json) {
		printf("{\"type\":\"router\",\"forwarded\":%llu,\"forwarded_ipv6\":%llu,\"xdp\":%s,\"xdp_forwarded\":%llu,\"xdp_forwarded_ipv6\":%llu,\"xdp_cached\":%llu,\"xdp_not_forwarded\":{%s},\"engine_forwarded\":%llu,\"punted\":{%s},\"dropped\":{%s},\"notifications\":%llu,\"lost\":%llu,\"resyncs\":%llu,\"commits\":%llu,\"apply_us_median\":%.1f,\"apply_us_p99\":%.1f,\"apply_us_max\":%.1f,\"routes4\":%llu,\"routes6\":%llu,\"neighbours\":%llu,\"unsupported\":%llu,\"burst_ms\":%.1f,\"burst_notifications\":%llu,\"lpm_mib\":%.1f,\"last_change_unix_ms\":%llu}\n",
		       (unsigned long long)(fwd[0] + fwd[1] + xs.fwd[0] + xs.fwd[1]),
		       (unsigned long long)(fwd[1] + xs.fwd[1]), xdp_on ? "true" : "false",
		       (unsigned long long)(xs.fwd[0] + xs.fwd[1]), (unsigned long long)xs.fwd[1],
		       (unsigned long long)(xs.cached[0] + xs.cached[1]), misses,
		       (unsigned long long)(fwd[0] + fwd[1]), punts, drops,
		       (unsigned long long)ns.msgs, (unsigned long long)ns.enobufs,
		       (unsigned long long)ns.resyncs, (unsigned long long)r->batches, med / 1e3,
		       p99 / 1e3, r->lat_max / 1e3, (unsigned long long)fs.routes[0],
		       (unsigned long long)fs.routes[1], (unsigned long long)fs.neighbours,
		       (unsigned long long)(fs.by_reason[XP_FIB_R_UNSUPPORTED]),
		       r->burst_max_ns / 1e6, (unsigned long long)r->burst_max_msgs, lpm_mib,
		       (unsigned long long)(r->last_unix_ns / 1000000));
		return;
	}
	ut_say(0,
	       "router: forwarded %llu (IPv6 %llu; in XDP %llu, %llu of them by the flow cache; by the engine %llu); punted: %s; dropped: %s",
	       (unsigned long long)(fwd[0] + fwd[1] + xs.fwd[0] + xs.fwd[1]),
	       (unsigned long long)(fwd[1] + xs.fwd[1]),
	       (unsigned long long)(xs.fwd[0] + xs.fwd[1]),
	       (unsigned long long)(xs.cached[0] + xs.cached[1]),
	       (unsigned long long)(fwd[0] + fwd[1]), pl ? punts : "none", dl ? drops : "none");
	if (xdp_on)
		ut_say(0, "router: not forwarded in XDP (went on to the engine): %s",
		       misses[0] ? misses : "none");
	ut_say(0,
	       "router: %llu notifications (%llu lost, %llu resyncs) in %llu commits; readable to committed: median %.1f us, p99 %.1f us, max %.1f us",
	       (unsigned long long)ns.msgs, (unsigned long long)ns.enobufs,
	       (unsigned long long)ns.resyncs, (unsigned long long)r->batches, med / 1e3, p99 / 1e3,
	       r->lat_max / 1e3);
	ut_say(0,
	       "router: FIB %llu IPv4 and %llu IPv6 routes, %llu neighbours, LPM tables %.1f MiB; longest burst of changes %llu notifications in %.1f ms",
	       (unsigned long long)fs.routes[0], (unsigned long long)fs.routes[1],
	       (unsigned long long)fs.neighbours, lpm_mib, (unsigned long long)r->burst_max_msgs,
	       r->burst_max_ns / 1e6);
}
