// SPDX-License-Identifier: BSD-3-Clause
/*
 * l2fwd: DPDK examples/l2fwd on xpile. Ports are paired (0 <-> 1, 2 <-> 3, ...): what
 * arrives on one leaves on the other, with the source MAC set to the output port's and
 * the destination MAC to that port's --eth-dest (default 02:00:00:00:00:PORT, DPDK's
 * MAC updating). Build it against an installed libxpile with nothing but
 *
 *   cc -O2 -o l2fwd l2fwd.c $(pkg-config --cflags --libs xpile)
 *
 * and run it as root: l2fwd --iface eth1 --iface eth2 --cores 1. Ctrl-C stops it; the
 * engine then proves every frame came back (the ledger) and it prints what it did.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpile/engine.h>
#include <xpile/text.h>

#define MAX_PORTS XP_ENGINE_MAX_PORTS

struct l2fwd {
	unsigned char dst[MAX_PORTS][6], src[MAX_PORTS][6];
	bool no_mac_updating;
	/* Per worker, its own cache line: forwarded, and dropped for want of an output
	 * queue on this worker (the peer port's queue is another worker's). */
	struct {
		__u64 fwd, no_peer;
	} __attribute__((aligned(64))) w[XP_ENGINE_MAX_CORES];
};

static void l2fwd_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p, __u32 n,
			void *arg)
{
	struct l2fwd *l = arg;
	__u32 out_port = q->port ^ 1u, id = xp_worker_id(w);
	struct xp_queue *out = xp_worker_find(w, out_port, q->queue);

	if (!out) {
		xp_pkt_free(w, q, p, n);
		l->w[id].no_peer += n;
		return;
	}
	if (!l->no_mac_updating) {
		bool head = true; /* the first buffer of a packet carries its Ethernet header */

		for (__u32 i = 0; i < n; i++) {
			unsigned char *eth = xp_pkt_data(q, &p[i]);

			if (head && p[i].len >= 12) {
				memcpy(eth, l->dst[out_port], 6);
				memcpy(eth + 6, l->src[out_port], 6);
			}
			head = !xp_pkt_more(&p[i]);
		}
	}
	l->w[id].fwd += n;
	xp_tx_burst(w, out, p, n, q);
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
		"Usage: l2fwd --iface IF --iface IF [OPTIONS]\n"
		"Forwards between port pairs (0 <-> 1, 2 <-> 3, ...) as DPDK's examples/l2fwd does.\n"
		"  -i, --iface IF         a port (in pairs; the order numbers them from 0)\n"
		"  -c, --cores LIST       worker cores, e.g. 1 or 2,3 (default 0)\n"
		"      --eth-dest P,MAC   destination MAC of what leaves port P (default 02:00:00:00:00:P)\n"
		"      --no-mac-updating  leave both MACs as they came\n"
		"  -d, --duration S       stop after S seconds (default: at SIGINT/SIGTERM)\n"
		"      --json             the engine's lines as JSON on stdout\n"
		"      --ledger-debug     check every frame's owner at once (slower)\n"
		"  -h, --help             this text\n");
}

static int bad(const char *what, const char *fix)
{
	fprintf(stderr, "l2fwd: %s; %s (see --help)\n", what, fix);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "cores", required_argument, NULL, 'c' },
		{ "eth-dest", required_argument, NULL, 'e' },
		{ "no-mac-updating", no_argument, NULL, 'M' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "ledger-debug", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct l2fwd l;
	struct xp_engine_port ports[MAX_PORTS] = { 0 };
	int cores[XP_ENGINE_MAX_CORES], ncores = 0, c, ret;
	bool have_dst[MAX_PORTS] = { 0 }, json = false, ledger_debug = false;
	unsigned int nports = 0;
	double duration = 0;
	char err[256], *tok, *save;
	struct xp_engine *e;
	__u64 fwd = 0, no_peer = 0;
	__u32 p;

	while ((c = getopt_long(argc, argv, "i:c:d:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (nports == MAX_PORTS)
				return bad("too many --iface", "give at most 8");
			ports[nports++].ifname = optarg;
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
		case 'M':
			l.no_mac_updating = true;
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
	if (nports < 2 || nports % 2)
		return bad("l2fwd forwards between pairs of ports",
			   "give an even number of --iface");

	XP_OPTS(xp_engine_opts, o, .on_burst = l2fwd_burst, .arg = &l, .name = "l2fwd_burst",
		.ports = ports, .nports = nports, .cores = ncores ? cores : NULL, .ncores = ncores,
		.handle_signals = true, .duration = duration, .ledger_debug = ledger_debug,
		.output = json ? XP_ENGINE_OUT_JSON : XP_ENGINE_OUT_QUIET, .errbuf = err,
		.errbuf_len = sizeof(err));
	ret = xp_engine_create(&o, &e);
	if (ret)
		return ret == -EOPNOTSUPP || ret == -EINVAL ? 2 : 1; /* the line is out already */
	for (p = 0; p < nports; p++) {
		unsigned char def[6] = { 0x02, 0, 0, 0, 0, (unsigned char)p };

		if (!have_dst[p])
			memcpy(l.dst[p], def, 6);
		xp_engine_port_mac(e, p, l.src[p]);
	}
	ret = xp_engine_run(e);
	xp_engine_destroy(e);
	for (__u32 i = 0; i < XP_ENGINE_MAX_CORES; i++)
		fwd += l.w[i].fwd, no_peer += l.w[i].no_peer;
	fprintf(json ? stderr : stdout, "l2fwd forwarded=%llu no_peer=%llu\n",
		(unsigned long long)fwd, (unsigned long long)no_peer);
	return ret ? 1 : 0;
}
