// SPDX-License-Identifier: BSD-3-Clause
/*
 * l3fwd: DPDK examples/l3fwd's LPM mode (-L) on xpile. Each IPv4 and IPv6 packet is
 * looked up by destination in a longest-prefix table (xpile/lpm.h, DIR-24-8 as DPDK's
 * rte_lpm) whose next hop is an output port; its TTL or hop limit goes down by one
 * (the IPv4 checksum updated incrementally, RFC 1624), its source MAC becomes the
 * port's, its destination MAC that port's --eth-dest (default 02:00:00:00:00:PORT, as
 * DPDK's). Dropped and counted by reason: no route, TTL expired (<= 1 on arrival),
 * bad header or checksum, not IP (ARP included: give the hosts static neighbours).
 * The table: --routes FILE (routes.h: DPDK's cfg format or 'route PREFIX/LEN PORT'),
 * else DPDK's shape, 198.18.P.0/24 and 2001:2:0:P::/64 -> port P. Build:
 *
 *   cc -O2 -o l3fwd l3fwd.c $(pkg-config --cflags --libs xpile)
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <xpile/engine.h>
#include <xpile/log.h>

#include "routes.h"

#define MAX_PORTS XP_ENGINE_MAX_PORTS
#define NOUT (MAX_PORTS + 1) /* the last: dropped */

enum drop { D_NO_ROUTE, D_TTL, D_BAD, D_OTHER, D_N };
static const char *const drop_names[D_N] = { "no_route", "ttl_expired", "bad_header", "not_ip" };

struct l3fwd_w {
	struct xp_queue *tx[MAX_PORTS]; /* this worker's first queue on each port */
	__u64 fwd, drops[D_N];
	struct xp_pkt out[NOUT][XP_BURST_MAX];
} __attribute__((aligned(64)));

struct l3fwd {
	struct routes rt;
	unsigned char dst[MAX_PORTS][6], src[MAX_PORTS][6];
	__u32 nports;
	struct l3fwd_w w[XP_ENGINE_MAX_CORES];
};

static void l3fwd_init(struct xp_worker *w, void *arg)
{
	struct l3fwd_w *lw = &((struct l3fwd *)arg)->w[xp_worker_id(w)];

	for (__u32 i = 0; i < xp_worker_nqueues(w); i++) {
		struct xp_queue *q = xp_worker_queue(w, i);

		if (!lw->tx[q->port])
			lw->tx[q->port] = q;
	}
}

static inline bool ip4_csum_ok(const void *hdr, unsigned int len)
{
	const __u16 *h = hdr;
	__u32 sum = 0;

	for (unsigned int i = 0; i < len / 2; i++)
		sum += h[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* The output port of one packet's head buffer, rewritten in place, or NOUT - 1 with
 * the drop counted. */
static inline __u32 route(struct l3fwd *l, struct l3fwd_w *lw, unsigned char *pkt, __u32 len)
{
	struct ethhdr *eth = (struct ethhdr *)pkt;
	__u32 hop;

	if (len < sizeof(*eth))
		return lw->drops[D_BAD]++, NOUT - 1;
	if (eth->h_proto == htons(ETH_P_IP)) {
		struct iphdr *ip = (struct iphdr *)(eth + 1);
		__u32 check, hlen;

		if (len < sizeof(*eth) + sizeof(*ip) || ip->version != 4 || ip->ihl < 5)
			return lw->drops[D_BAD]++, NOUT - 1;
		hlen = ip->ihl * 4u;
		if (len < sizeof(*eth) + hlen || ntohs(ip->tot_len) < hlen ||
		    len < sizeof(*eth) + ntohs(ip->tot_len) || !ip4_csum_ok(ip, hlen))
			return lw->drops[D_BAD]++, NOUT - 1;
		if (ip->ttl <= 1)
			return lw->drops[D_TTL]++, NOUT - 1;
		hop = xp_lpm_lookup(l->rt.v4, ntohl(ip->daddr));
		if (hop >= l->nports || !lw->tx[hop])
			return lw->drops[D_NO_ROUTE]++, NOUT - 1;
		/* RFC 1624 for a TTL one lower, as the kernel's ip_decrease_ttl(). */
		check = ip->check;
		check += htons(0x0100);
		ip->check = (__u16)(check + (check >= 0xffff));
		ip->ttl--;
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(eth + 1);

		if (len < sizeof(*eth) + sizeof(*ip6) || ip6->version != 6 ||
		    len < sizeof(*eth) + sizeof(*ip6) + ntohs(ip6->payload_len))
			return lw->drops[D_BAD]++, NOUT - 1;
		if (ip6->hop_limit <= 1)
			return lw->drops[D_TTL]++, NOUT - 1;
		hop = xp_lpm6_lookup(l->rt.v6, ip6->daddr.s6_addr);
		if (hop >= l->nports || !lw->tx[hop])
			return lw->drops[D_NO_ROUTE]++, NOUT - 1;
		ip6->hop_limit--;
	} else {
		return lw->drops[D_OTHER]++, NOUT - 1;
	}
	memcpy(eth->h_dest, l->dst[hop], 6);
	memcpy(eth->h_source, l->src[hop], 6);
	return hop;
}

static void l3fwd_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p, __u32 n,
			void *arg)
{
	struct l3fwd *l = arg;
	struct l3fwd_w *lw = &l->w[xp_worker_id(w)];
	__u32 cnt[NOUT] = { 0 };

	for (__u32 i = 0; i < n;) {
		/* A multi-buffer packet is a chain: its head decides for all of it (the
		 * headers are in the first buffer). */
		__u32 o = route(l, lw, xp_pkt_data(q, &p[i]), p[i].len);

		do
			lw->out[o][cnt[o]++] = p[i];
		while (xp_pkt_more(&p[i++]) && i < n);
	}
	for (__u32 o = 0; o < l->nports; o++) {
		if (cnt[o]) {
			lw->fwd += cnt[o];
			xp_tx_burst(w, lw->tx[o], lw->out[o], cnt[o], q);
		}
	}
	if (cnt[NOUT - 1])
		xp_pkt_free(w, q, lw->out[NOUT - 1], cnt[NOUT - 1]);
}

static int parse_mac(const char *s, unsigned char mac[6])
{
	unsigned int b[6];
	char end;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &end) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -EINVAL;
		mac[i] = b[i];
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: l3fwd --iface IF [--iface IF]... [OPTIONS]\n"
		"Routes IPv4 and IPv6 by longest prefix to ports, as DPDK's examples/l3fwd -L does.\n"
		"  -i, --iface IF         a port (the order numbers them from 0)\n"
		"  -c, --cores LIST       worker cores, e.g. 1 or 2,3 (default 0)\n"
		"  -r, --routes FILE      route file: 'route PREFIX/LEN PORT' or DPDK's 'RPREFIX/LEN PORT'\n"
		"                         lines, IPv4 and IPv6 (default 198.18.P.0/24 and\n"
		"                         2001:2:0:P::/64 -> port P)\n"
		"      --eth-dest P,MAC   destination MAC of what leaves port P (default 02:00:00:00:00:P)\n"
		"  -d, --duration S       stop after S seconds (default: at SIGINT/SIGTERM)\n"
		"      --json             the engine's lines as JSON on stdout\n"
		"      --ledger-debug     check every frame's owner at once (slower)\n"
		"  -h, --help             this text\n"
		"At exit it prints: l3fwd forwarded=N no_route=N ttl_expired=N bad_header=N not_ip=N\n");
}

static int bad(const char *what, const char *fix)
{
	fprintf(stderr, "l3fwd: %s; %s (see --help)\n", what, fix);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "cores", required_argument, NULL, 'c' },
		{ "routes", required_argument, NULL, 'r' },
		{ "eth-dest", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "ledger-debug", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct l3fwd l;
	struct xp_engine_port ports[MAX_PORTS] = { 0 };
	int cores[XP_ENGINE_MAX_CORES], ncores = 0, c, ret;
	bool have_dst[MAX_PORTS] = { 0 }, json = false, ledger_debug = false;
	const char *routes = NULL;
	struct xp_lpm_stats st;
	xp_log_fn prev_log;
	double duration = 0;
	char err[512], *tok, *save;
	struct xp_engine *e;
	__u64 fwd = 0, drops[D_N] = { 0 };
	__u32 p;

	while ((c = getopt_long(argc, argv, "i:c:r:d:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (l.nports == MAX_PORTS)
				return bad("too many --iface", "give at most 8");
			ports[l.nports++].ifname = optarg;
			break;
		case 'c':
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				__u32 v;

				if ((__u32)ncores == XP_ENGINE_MAX_CORES ||
				    xp_parse_u32(tok, 0, 4095, &v))
					return bad("--cores wants a list of CPU numbers",
						   "e.g. --cores 1,2");
				cores[ncores++] = v;
			}
			break;
		case 'r':
			routes = optarg;
			break;
		case 'e':
			tok = strchr(optarg, ',');
			if (!tok)
				return bad("--eth-dest wants P,MAC",
					   "e.g. --eth-dest 1,02:00:00:00:00:01");
			*tok = 0;
			if (xp_parse_u32(optarg, 0, MAX_PORTS - 1, &p) ||
			    parse_mac(tok + 1, l.dst[p]))
				return bad("--eth-dest wants P,MAC with P 0..7",
					   "e.g. --eth-dest 1,02:00:00:00:00:01");
			have_dst[p] = true;
			break;
		case 'd':
			if (xp_parse_double(optarg, 0, 1e9, &duration))
				return bad("--duration wants seconds", "e.g. --duration 10");
			break;
		case 'j':
			json = true;
			break;
		case 'L':
			ledger_debug = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		return bad("unexpected argument", "every option has a dash");
	if (!l.nports)
		return bad("no port", "give --iface IF at least once");

	/* The table before the engine: a bad route file leaves nothing attached. Created
	 * quietly (the library would warn of 4 KiB pages before a route file error's one
	 * line); the page size is told once the routes are in. */
	prev_log = xp_set_log_fn(NULL);
	ret = xp_lpm_create(NULL, &l.rt.v4);
	ret = ret ?: xp_lpm6_create(NULL, &l.rt.v6);
	xp_set_log_fn(prev_log);
	if (ret) {
		fprintf(stderr, "l3fwd: cannot create the route tables: %s; free memory\n",
			strerror(-ret));
		return 1;
	}
	ret = routes ? routes_load(&l.rt, routes, l.nports, err, sizeof(err)) :
		       routes_default(&l.rt, l.nports);
	if (ret) {
		fprintf(stderr, "l3fwd: %s\n", routes ? err : strerror(-ret));
		xp_lpm_destroy(l.rt.v4);
		xp_lpm6_destroy(l.rt.v6);
		return 2;
	}
	xp_lpm_stats(l.rt.v4, &st);
	if (st.page_size < 2u << 20)
		fprintf(stderr,
			"l3fwd: route tables on %u-byte pages (no free 2 MiB hugepages): slower "
			"lookups; reserve some: echo 64 >/proc/sys/vm/nr_hugepages\n",
			st.page_size);

	XP_OPTS(xp_engine_opts, o, .on_burst = l3fwd_burst, .worker_init = l3fwd_init, .arg = &l,
		.name = "l3fwd_burst", .ports = ports, .nports = l.nports,
		.cores = ncores ? cores : NULL, .ncores = ncores, .handle_signals = true,
		.duration = duration, .ledger_debug = ledger_debug,
		.output = json ? XP_ENGINE_OUT_JSON : XP_ENGINE_OUT_QUIET, .errbuf = err,
		.errbuf_len = sizeof(err));
	ret = xp_engine_create(&o, &e);
	if (ret) {
		xp_lpm_destroy(l.rt.v4);
		xp_lpm6_destroy(l.rt.v6);
		return ret == -EOPNOTSUPP || ret == -EINVAL ? 2 : 1; /* the line is out already */
	}
	for (p = 0; p < l.nports; p++) {
		unsigned char def[6] = { 0x02, 0, 0, 0, 0, (unsigned char)p };

		if (!have_dst[p])
			memcpy(l.dst[p], def, 6);
		xp_engine_port_mac(e, p, l.src[p]);
	}
	ret = xp_engine_run(e);
	xp_engine_destroy(e);
	for (__u32 i = 0; i < XP_ENGINE_MAX_CORES; i++) {
		fwd += l.w[i].fwd;
		for (int d = 0; d < D_N; d++)
			drops[d] += l.w[i].drops[d];
	}
	fprintf(json ? stderr : stdout, "l3fwd forwarded=%llu", (unsigned long long)fwd);
	for (int d = 0; d < D_N; d++)
		fprintf(json ? stderr : stdout, " %s=%llu", drop_names[d],
			(unsigned long long)drops[d]);
	fprintf(json ? stderr : stdout, "\n");
	xp_lpm_destroy(l.rt.v4);
	xp_lpm6_destroy(l.rt.v6);
	return ret ? 1 : 0;
}
