// SPDX-License-Identifier: BSD-3-Clause
/*
 * pace: per-flow pacing in the wire, the state DPDK's examples leave out. Ports are
 * paired as in l2fwd (0 <-> 1, MACs untouched: a bump in the wire between two hosts).
 * Every IPv4/IPv6 flow (addresses, protocol, TCP/UDP ports) gets its own token bucket
 * of --flow-rate packets/s and --flow-burst tokens; a packet that finds its bucket
 * empty waits in its flow's queue, its frame *held* across bursts (xp_pkt_hold()), and
 * leaves when the tokens come, in order; a full queue drops and counts. Held frames are
 * a place of their own in the engine's frame ledger, so live audits and the exit proof
 * count them like any other. Other traffic (ARP, multi-buffer chains, a full flow
 * table) passes at once.
 *
 * It is written in the own-loop style (xp_engine_opts.worker_main, a DPDK lcore loop):
 * released frames leave when their time comes, not when the next packet arrives.
 *
 *   cc -O2 -o pace pace.c $(pkg-config --cflags --libs xpile)
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <xpile/engine.h>
#include <xpile/text.h>

#define BURST 64u
#define QLEN 256u /* per flow; a power of two */

struct flow_key {
	__u8 src[16], dst[16];
	__u16 sport, dport;
	__u8 proto, used;
	__u8 pad[2];
};

struct held {
	struct xp_pkt p;
	struct xp_queue *q; /* where it came from: it leaves from its peer */
};

struct flow {
	struct flow_key key;
	__u64 tokens; /* packets x 1e9 */
	__u64 last_ns;
	__u32 head, len; /* its queue */
	__u32 active; /* its index in active[] + 1, 0: not waiting */
	struct held q[QLEN];
};

struct pace_w {
	struct flow *flows;
	__u32 *active, nactive;
	struct xp_pkt out[2 * BURST];
	__u64 now_sent, held_sent, overflow, held_max, flows_seen;
} __attribute__((aligned(64)));

struct pace {
	uint64_t rate, burst; /* packets/s, tokens */
	__u32 nflows; /* per worker; a power of two */
	__u32 qlen;
	struct pace_w w[XP_ENGINE_MAX_CORES];
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The packet's flow key: 0, or -1 when it is not IPv4/IPv6 or is too short. */
static int flow_of(const unsigned char *pkt, __u32 len, struct flow_key *k)
{
	const struct ethhdr *eth = (const void *)pkt;
	const __u8 *l4;
	__u32 l4len;

	memset(k, 0, sizeof(*k));
	if (len >= sizeof(*eth) + sizeof(struct iphdr) && eth->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *ip = (const void *)(eth + 1);

		__u32 hlen = ip->ihl * 4u;

		if (ip->ihl < 5 || len < sizeof(*eth) + hlen)
			return -1;
		memcpy(k->src, &ip->saddr, 4);
		memcpy(k->dst, &ip->daddr, 4);
		k->proto = ip->protocol;
		l4 = (const __u8 *)ip + hlen;
	} else if (len >= sizeof(*eth) + sizeof(struct ipv6hdr) &&
		   eth->h_proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = (const void *)(eth + 1);

		memcpy(k->src, &ip6->saddr, 16);
		memcpy(k->dst, &ip6->daddr, 16);
		k->proto = ip6->nexthdr;
		l4 = (const __u8 *)(ip6 + 1);
	} else {
		return -1;
	}
	l4len = len - (l4 - pkt);
	if ((k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP) && l4len >= 4) {
		memcpy(&k->sport, l4, 2);
		memcpy(&k->dport, l4 + 2, 2);
	}
	k->used = 1;
	return 0;
}

static __u32 flow_hash(const struct flow_key *k)
{
	const __u8 *b = (const __u8 *)k;
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < offsetof(struct flow_key, used); i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return (__u32)(h ^ h >> 32);
}

/* The flow's slot (open addressing, 8 probes), NULL when the table is full there. */
static struct flow *flow_get(struct pace *pc, struct pace_w *pw, const struct flow_key *k,
			     __u64 now)
{
	__u32 h = flow_hash(k), mask = pc->nflows - 1;

	for (__u32 i = 0; i < 8; i++) {
		struct flow *f = &pw->flows[(h + i) & mask];

		if (!f->key.used) {
			f->key = *k;
			f->tokens = pc->burst * 1000000000ull;
			f->last_ns = now;
			pw->flows_seen++;
			return f;
		}
		if (!memcmp(&f->key, k, sizeof(*k)))
			return f;
	}
	return NULL;
}

static void refill(const struct pace *pc, struct flow *f, __u64 now)
{
	__u64 dt = now - f->last_ns, cap = pc->burst * 1000000000ull;

	if (dt > 1000000000ull)
		dt = 1000000000ull; /* a bucket is full after a second anyway; no overflow */
	f->tokens += dt * pc->rate;
	if (f->tokens > cap)
		f->tokens = cap;
	f->last_ns = now;
}

static struct xp_queue *peer(struct xp_worker *w, const struct xp_queue *q)
{
	return xp_worker_find(w, q->port ^ 1u, q->queue);
}

/* Sends what waits in @f that its tokens allow (all of it when @flush), from the
 * newest turn's point of view; returns the packets sent. */
static __u32 release(struct xp_worker *w, struct pace *pc, struct pace_w *pw, struct flow *f,
		     __u64 now, bool flush)
{
	__u32 sent = 0;

	refill(pc, f, now);
	while (f->len && (flush || f->tokens >= 1000000000ull)) {
		struct held *h = &f->q[f->head];
		struct xp_queue *to = peer(w, h->q);

		if (f->tokens >= 1000000000ull)
			f->tokens -= 1000000000ull;
		f->head = (f->head + 1) & (QLEN - 1);
		f->len--;
		xp_pkt_unhold(w, h->q, &h->p, 1);
		if (to)
			xp_tx_burst(w, to, &h->p, 1, h->q);
		else
			xp_pkt_free(w, h->q, &h->p, 1);
		sent++;
	}
	pw->held_sent += sent;
	if (!f->len && f->active) {
		/* Swap-remove from the waiting list. */
		__u32 i = f->active - 1, last = pw->active[--pw->nactive];

		pw->active[i] = last;
		pw->flows[last].active = i + 1;
		f->active = 0;
	}
	return sent;
}

/* One received burst: what its flow's tokens allow goes out now, the rest waits. */
static __u32 on_burst(struct xp_worker *w, struct pace *pc, struct pace_w *pw, struct xp_queue *q,
		      struct xp_pkt *p, __u32 n, __u64 now)
{
	struct xp_queue *to = peer(w, q);
	__u32 nout = 0, nheld = 0;

	if (!to) {
		xp_pkt_free(w, q, p, n);
		return n;
	}
	for (__u32 i = 0; i < n; i++) {
		struct flow_key k;
		struct flow *f = NULL;

		if (xp_pkt_more(&p[i]) || (i && xp_pkt_more(&p[i - 1])) ||
		    flow_of(xp_pkt_data(q, &p[i]), p[i].len, &k) ||
		    !(f = flow_get(pc, pw, &k, now))) {
			pw->out[nout++] = p[i]; /* not paced */
			continue;
		}
		refill(pc, f, now);
		if (!f->len && f->tokens >= 1000000000ull) {
			f->tokens -= 1000000000ull;
			pw->out[nout++] = p[i];
		} else if (f->len < pc->qlen) {
			struct held *h = &f->q[(f->head + f->len++) & (QLEN - 1)];

			h->p = p[i];
			h->q = q;
			xp_pkt_hold(w, q, &p[i], 1);
			nheld++;
			if (!f->active) {
				pw->active[pw->nactive++] = f - pw->flows;
				f->active = pw->nactive;
			}
		} else {
			pw->overflow++;
			xp_pkt_free(w, q, &p[i], 1);
		}
	}
	pw->now_sent += nout;
	if (nout)
		xp_tx_burst(w, to, pw->out, nout, q);
	return n;
}

static int pace_loop(struct xp_worker *w, void *arg)
{
	struct pace *pc = arg;
	struct pace_w *pw = &pc->w[xp_worker_id(w)];
	struct xp_pkt p[BURST];

	while (xp_worker_turn(w)) {
		bool flush = xp_worker_stopping(w);
		__u64 now = now_ns(), held = 0;
		__u32 work = 0;

		for (__u32 i = 0; i < xp_worker_nqueues(w); i++) {
			struct xp_queue *q = xp_worker_queue(w, i);
			__u32 n = xp_rx_burst(w, q, p, BURST);

			if (n)
				work += on_burst(w, pc, pw, q, p, n, now);
			held += xp_worker_held(w, q);
		}
		if (held > pw->held_max)
			pw->held_max = held;
		for (__u32 i = pw->nactive; i-- > 0;)
			work += release(w, pc, pw, &pw->flows[pw->active[i]], now, flush);
		/* Frames waiting for tokens: no sleeping until the next packet. */
		xp_worker_idle(w, work + pw->nactive);
	}
	/* Stopped: whatever still waits goes back (nothing may stay held). */
	while (pw->nactive)
		release(w, pc, pw, &pw->flows[pw->active[pw->nactive - 1]], now_ns(), true);
	return 0;
}

static void pace_init(struct xp_worker *w, void *arg)
{
	struct pace *pc = arg;
	struct pace_w *pw = &pc->w[xp_worker_id(w)];

	pw->flows = calloc(pc->nflows, sizeof(*pw->flows));
	pw->active = calloc(pc->nflows, sizeof(*pw->active));
	if (!pw->flows || !pw->active) {
		fprintf(stderr, "pace: no memory for %u flows; lower --flows\n", pc->nflows);
		exit(1);
	}
}

static void pace_fini(struct xp_worker *w, void *arg)
{
	struct pace_w *pw = &((struct pace *)arg)->w[xp_worker_id(w)];

	free(pw->flows);
	free(pw->active);
	pw->flows = NULL;
	pw->active = NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pace --iface IF --iface IF [OPTIONS]\n"
		"Forwards between port pairs (0 <-> 1, ...), pacing every IP flow to its own rate.\n"
		"  -i, --iface IF         a port (in pairs)\n"
		"  -c, --cores LIST       worker cores (default 0)\n"
		"  -r, --flow-rate PPS    packets per second per flow (default 10000)\n"
		"  -b, --flow-burst N     tokens a flow may save up (default 32)\n"
		"  -q, --queue N          packets a flow may have waiting, 1..256 (default 256)\n"
		"      --flows N          flow slots per worker, a power of two (default 1024)\n"
		"  -d, --duration S       stop after S seconds (default: at SIGINT/SIGTERM)\n"
		"      --json             the engine's lines as JSON on stdout\n"
		"      --ledger-debug     check every frame's owner at once (slower)\n"
		"  -h, --help             this text\n"
		"At exit: pace sent_at_once=N held_then_sent=N overflow=N held_max=N flows=N\n");
}

static int bad(const char *what, const char *fix)
{
	fprintf(stderr, "pace: %s; %s (see --help)\n", what, fix);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "cores", required_argument, NULL, 'c' },
		{ "flow-rate", required_argument, NULL, 'r' },
		{ "flow-burst", required_argument, NULL, 'b' },
		{ "queue", required_argument, NULL, 'q' },
		{ "flows", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "ledger-debug", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct pace pc = { .rate = 10000, .burst = 32, .nflows = 1024, .qlen = QLEN };
	struct xp_engine_port ports[XP_ENGINE_MAX_PORTS] = { 0 };
	int cores[XP_ENGINE_MAX_CORES], ncores = 0, c, ret;
	bool json = false, ledger_debug = false;
	__u64 sum[5] = { 0 };
	unsigned int nports = 0;
	double duration = 0;
	char err[256], *tok, *save;
	struct xp_engine *e;

	while ((c = getopt_long(argc, argv, "i:c:r:b:q:d:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (nports == XP_ENGINE_MAX_PORTS)
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
		case 'r':
			if (xp_parse_u64(optarg, 1, 10000000, &pc.rate))
				return bad("--flow-rate wants packets/s in 1..10000000",
					   "e.g. --flow-rate 1000");
			break;
		case 'b':
			if (xp_parse_u64(optarg, 1, 1000000, &pc.burst))
				return bad("--flow-burst wants 1..1000000 tokens",
					   "e.g. --flow-burst 8");
			break;
		case 'q':
			if (xp_parse_u32(optarg, 1, QLEN, &pc.qlen))
				return bad("--queue wants 1..256 packets", "e.g. --queue 64");
			break;
		case 'F':
			if (xp_parse_u32(optarg, 8, 1u << 20, &pc.nflows) ||
			    (pc.nflows & (pc.nflows - 1)))
				return bad("--flows wants a power of two in 8..1048576",
					   "e.g. --flows 4096");
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
		return bad("pace forwards between pairs of ports",
			   "give an even number of --iface");

	XP_OPTS(xp_engine_opts, o, .worker_main = pace_loop, .worker_init = pace_init,
		.worker_fini = pace_fini, .arg = &pc, .name = "pace_loop", .ports = ports,
		.nports = nports, .cores = ncores ? cores : NULL, .ncores = ncores,
		.handle_signals = true, .duration = duration, .ledger_debug = ledger_debug,
		.output = json ? XP_ENGINE_OUT_JSON : XP_ENGINE_OUT_QUIET, .errbuf = err,
		.errbuf_len = sizeof(err));
	ret = xp_engine_create(&o, &e);
	if (ret)
		return ret == -EOPNOTSUPP || ret == -EINVAL ? 2 : 1; /* the line is out already */
	ret = xp_engine_run(e);
	xp_engine_destroy(e);
	for (__u32 i = 0; i < XP_ENGINE_MAX_CORES; i++) {
		sum[0] += pc.w[i].now_sent;
		sum[1] += pc.w[i].held_sent;
		sum[2] += pc.w[i].overflow;
		sum[3] = pc.w[i].held_max > sum[3] ? pc.w[i].held_max : sum[3];
		sum[4] += pc.w[i].flows_seen;
	}
	fprintf(json ? stderr : stdout,
		"pace sent_at_once=%llu held_then_sent=%llu overflow=%llu held_max=%llu flows=%llu\n",
		(unsigned long long)sum[0], (unsigned long long)sum[1], (unsigned long long)sum[2],
		(unsigned long long)sum[3], (unsigned long long)sum[4]);
	return ret ? 1 : 0;
}
