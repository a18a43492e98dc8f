// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile: the AF_XDP engine's command line. Options live in one table (name, argument,
 * help, setter); getopt_long's table and the --help text are both generated from it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "xpile/log.h"

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

struct opt {
	const char *name;
	const char *arg; /* metavar, NULL for a flag */
	const char *help;
	int (*set)(struct eng_config *c, const char *v);
	const char *section;
};

static int bad(const char *opt, const char *v, const char *want)
{
	fprintf(stderr, "xpile: --%s %s: %s (see xpile run --help)\n", opt, v ? v : "", want);
	return -1;
}

static int u32_arg(const char *opt, const char *v, __u32 lo, __u32 hi, __u32 *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || x < lo || x > hi) {
		char want[64];

		snprintf(want, sizeof(want), "expected a number in %u..%u", lo, hi);
		return bad(opt, v, want);
	}
	*out = (__u32)x;
	return 0;
}

static int pow2_arg(const char *opt, const char *v, __u32 *out)
{
	if (u32_arg(opt, v, 64, 1u << 16, out))
		return -1;
	if (*out & (*out - 1))
		return bad(opt, v, "ring sizes are powers of two (64..65536)");
	return 0;
}

/* "0,2,4-7" -> list; false on syntax errors. */
static int list_arg(const char *opt, const char *v, __u32 max_val, __u32 *out, __u32 *n, __u32 cap)
{
	const char *p = v;

	*n = 0;
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			return bad(opt, v, "expected a list like 0,2,4-7");
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || b < a)
				return bad(opt, v, "expected a list like 0,2,4-7");
		}
		if (b > max_val)
			return bad(opt, v, "value out of range");
		for (; a <= b; a++) {
			if (*n == cap)
				return bad(opt, v, "too many entries");
			out[(*n)++] = (__u32)a;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return bad(opt, v, "expected a list like 0,2,4-7");
		p = end;
	}
	return *n ? 0 : bad(opt, v, "empty list");
}

static int mac_arg(const char *opt, const char *v, unsigned char *mac)
{
	unsigned int m[6], i;
	char extra;

	if (sscanf(v, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &extra) != 6)
		return bad(opt, v, "expected a MAC address like 02:00:00:00:00:01");
	for (i = 0; i < 6; i++) {
		if (m[i] > 255)
			return bad(opt, v, "expected a MAC address like 02:00:00:00:00:01");
		mac[i] = (unsigned char)m[i];
	}
	return 0;
}

static int ip_arg(const char *opt, const char *v, __u32 *ip)
{
	if (inet_pton(AF_INET, v, ip) != 1)
		return bad(opt, v, "expected an IPv4 address like 198.18.0.2");
	return 0;
}

static int dbl_arg(const char *opt, const char *v, double lo, double *out)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v || *end || x < lo)
		return bad(opt, v, "expected a number of seconds");
	*out = x;
	return 0;
}

static int set_iface(struct eng_config *c, const char *v)
{
	const char *colon = strchr(v, ':');
	size_t len = colon ? (size_t)(colon - v) : strlen(v);
	__u32 i = c->nports;

	if (c->nports == ENG_MAX_PORTS)
		return bad("iface", v, "too many interfaces");
	if (!len || len >= sizeof(c->ports[0].ifname))
		return bad("iface", v, "expected IFACE or IFACE:QUEUES, e.g. eth0:0-3");
	memcpy(c->ports[i].ifname, v, len);
	c->ports[i].ifname[len] = 0;
	if (colon) {
		if (list_arg("iface", colon + 1, 4095, c->ports[i].queues, &c->ports[i].nqueues,
			     ENG_MAX_QUEUES))
			return -1;
	} else {
		c->ports[i].nqueues = 1;
		c->ports[i].queues[0] = 0;
	}
	c->nports++;
	return 0;
}

static int set_cores(struct eng_config *c, const char *v)
{
	__u32 tmp[ENG_MAX_WORKERS], i;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (list_arg("cores", v, ncpu > 0 ? (__u32)ncpu - 1 : 0, tmp, &c->ncores, ENG_MAX_WORKERS))
		return -1;
	for (i = 0; i < c->ncores; i++)
		c->cores[i] = (int)tmp[i];
	return 0;
}

static int set_mode(struct eng_config *c, const char *v)
{
	static const struct eng_mode *const modes[] = { &eng_mode_rxdrop, &eng_mode_txonly,
							&eng_mode_l2fwd, &eng_mode_fwd };
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(v, modes[i]->name)) {
			c->mode = modes[i];
			return 0;
		}
	return bad("mode", v, "unsupported mode; use rxdrop, txonly, l2fwd or fwd");
}

static int set_duration(struct eng_config *c, const char *v)
{
	return dbl_arg("duration", v, 0, &c->duration);
}
static int set_interval(struct eng_config *c, const char *v)
{
	if (dbl_arg("interval", v, 0.01, &c->interval))
		return -1;
	return 0;
}
static int set_json(struct eng_config *c, const char *v)
{
	c->json = true;
	return 0;
}
static int set_quiet(struct eng_config *c, const char *v)
{
	c->quiet = true;
	return 0;
}
static int set_verbose(struct eng_config *c, const char *v)
{
	c->verbose = true;
	return 0;
}
static int set_copy(struct eng_config *c, const char *v)
{
	c->xsk_mode = XP_XSK_COPY;
	return 0;
}
static int set_zc(struct eng_config *c, const char *v)
{
	c->xsk_mode = XP_XSK_ZEROCOPY;
	return 0;
}

static int set_xsk_mode(struct eng_config *c, const char *v)
{
	if (!strcmp(v, "auto"))
		c->xsk_mode = XP_XSK_AUTO;
	else if (!strcmp(v, "copy"))
		c->xsk_mode = XP_XSK_COPY;
	else if (!strcmp(v, "zero-copy") || !strcmp(v, "zc"))
		c->xsk_mode = XP_XSK_ZEROCOPY;
	else
		return bad("xsk-mode", v, "use auto, copy or zero-copy");
	return 0;
}

static int set_xdp_mode(struct eng_config *c, const char *v)
{
	if (!strcmp(v, "auto"))
		c->xdp_mode = XP_STEER_MODE_AUTO;
	else if (!strcmp(v, "native") || !strcmp(v, "drv"))
		c->xdp_mode = XP_STEER_MODE_NATIVE;
	else if (!strcmp(v, "skb") || !strcmp(v, "generic"))
		c->xdp_mode = XP_STEER_MODE_SKB;
	else
		return bad("xdp-mode", v, "use auto, native or skb");
	return 0;
}

static int set_layout(struct eng_config *c, const char *v)
{
	if (!strcmp(v, "interleaved"))
		c->layout = XP_LAYOUT_INTERLEAVED;
	else if (!strcmp(v, "aligned"))
		c->layout = XP_LAYOUT_ALIGNED;
	else
		return bad("layout", v, "use interleaved or aligned");
	return 0;
}

static int set_huge(struct eng_config *c, const char *v)
{
	if (!strcmp(v, "auto"))
		c->hugepages = XP_HUGE_AUTO;
	else if (!strcmp(v, "require") || !strcmp(v, "yes"))
		c->hugepages = XP_HUGE_REQUIRE;
	else if (!strcmp(v, "never") || !strcmp(v, "no"))
		c->hugepages = XP_HUGE_NEVER;
	else
		return bad("hugepages", v, "use auto, require or never");
	return 0;
}

static int set_pool(struct eng_config *c, const char *v)
{
	if (!strcmp(v, "pile"))
		c->pool_backend = XP_POOL_PILE;
	else if (!strcmp(v, "ring"))
		c->pool_backend = XP_POOL_RING;
	else
		return bad("pool", v, "use pile or ring");
	return 0;
}

static int set_frame(struct eng_config *c, const char *v)
{
	return u32_arg("frame-size", v, 2048, 4096, &c->frame_size);
}
static int set_headroom(struct eng_config *c, const char *v)
{
	return u32_arg("headroom", v, 0, 1024, &c->headroom);
}
static int set_m3_seed(struct eng_config *c, const char *v)
{
	char *end;

	errno = 0;
	c->m3_seed = strtoull(v, &end, 0);
	if (errno || end == v || *end || v[0] == '-')
		return bad("m3-seed", v, "expected a number (0 turns the dispersal off)");
	return 0;
}
static int set_channels(struct eng_config *c, const char *v)
{
	return u32_arg("channels", v, 1, 64, &c->channels);
}
static int set_ranks(struct eng_config *c, const char *v)
{
	return u32_arg("ranks", v, 1, 16, &c->ranks);
}
static int set_frames(struct eng_config *c, const char *v)
{
	return u32_arg("frames", v, 1, 1u << 24, &c->frames);
}
static int set_rx_ring(struct eng_config *c, const char *v)
{
	return pow2_arg("rx-ring", v, &c->rx_ring);
}
static int set_tx_ring(struct eng_config *c, const char *v)
{
	return pow2_arg("tx-ring", v, &c->tx_ring);
}
static int set_fill_ring(struct eng_config *c, const char *v)
{
	return pow2_arg("fill-ring", v, &c->fill_ring);
}
static int set_comp_ring(struct eng_config *c, const char *v)
{
	return pow2_arg("comp-ring", v, &c->comp_ring);
}
static int set_batch(struct eng_config *c, const char *v)
{
	return u32_arg("batch", v, 1, ENG_MAX_BATCH, &c->batch);
}
static int set_cache(struct eng_config *c, const char *v)
{
	return u32_arg("cache", v, 0, XP_CACHE_SIZE_MAX, &c->cache);
}
static int set_no_wakeup(struct eng_config *c, const char *v)
{
	c->no_need_wakeup = true;
	return 0;
}
static int set_busy(struct eng_config *c, const char *v)
{
	c->busy_poll = true;
	return 0;
}
static int set_busy_budget(struct eng_config *c, const char *v)
{
	return u32_arg("busy-budget", v, 1, 1024, &c->busy_budget);
}
static int set_tx_budget(struct eng_config *c, const char *v)
{
	return u32_arg("tx-budget", v, 32, 1u << 16, &c->tx_budget);
}
static int set_mb(struct eng_config *c, const char *v)
{
	c->multi_buffer = c->multi_buffer_set = true;
	return 0;
}
static int set_no_mb(struct eng_config *c, const char *v)
{
	c->multi_buffer = false;
	c->multi_buffer_set = true;
	return 0;
}
static int set_existing(struct eng_config *c, const char *v)
{
	c->attach_existing = true;
	return 0;
}
static int set_force(struct eng_config *c, const char *v)
{
	c->force = true;
	return 0;
}
static int set_pin(struct eng_config *c, const char *v)
{
	c->pin_path = v;
	return 0;
}
static int set_ldebug(struct eng_config *c, const char *v)
{
	c->ledger_debug = true;
	return 0;
}
static int set_audit(struct eng_config *c, const char *v)
{
	c->audit_each_interval = true;
	return 0;
}
static int set_spin(struct eng_config *c, const char *v)
{
	c->spin = true;
	return 0;
}
static int set_pkt(struct eng_config *c, const char *v)
{
	return u32_arg("pkt-size", v, 64, 4096, &c->pkt_size);
}
static int set_flows(struct eng_config *c, const char *v)
{
	return u32_arg("flows", v, 1, 65535, &c->flows);
}

static int set_count(struct eng_config *c, const char *v)
{
	char *end;

	errno = 0;
	c->count = strtoull(v, &end, 0);
	if (errno || end == v || *end || !c->count)
		return bad("count", v, "expected a packet count >= 1");
	return 0;
}

static int set_rate(struct eng_config *c, const char *v)
{
	char *end;

	errno = 0;
	c->rate = strtoull(v, &end, 0);
	if (errno || end == v || *end)
		return bad("rate", v, "expected packets per second (0 = unlimited)");
	return 0;
}

static int set_dmac(struct eng_config *c, const char *v)
{
	c->dst_mac_set = true;
	return mac_arg("dst-mac", v, c->dst_mac);
}
static int set_smac(struct eng_config *c, const char *v)
{
	c->src_mac_set = true;
	return mac_arg("src-mac", v, c->src_mac);
}
static int set_sip(struct eng_config *c, const char *v)
{
	return ip_arg("src-ip", v, &c->src_ip);
}
static int set_dip(struct eng_config *c, const char *v)
{
	return ip_arg("dst-ip", v, &c->dst_ip);
}

static int set_sport(struct eng_config *c, const char *v)
{
	__u32 x;

	if (u32_arg("src-port", v, 1, 65535, &x))
		return -1;
	c->src_port = (__u16)x;
	return 0;
}

static int set_dport(struct eng_config *c, const char *v)
{
	__u32 x;

	if (u32_arg("dst-port", v, 1, 65535, &x))
		return -1;
	c->dst_port = (__u16)x;
	return 0;
}

static const struct opt opts[] = {
	{ "iface", "IFACE[:QUEUES]",
	  "Interface and RX queues to serve (QUEUES like 0 or 0-3 or 0,2; default 0). Repeat for more ports; fwd takes two with the same queues.",
	  set_iface, "Ports and cores" },
	{ "cores", "LIST",
	  "Cores for the workers (default 0). Queue j of each port goes to core LIST[j % n], unless `xpile-loader wire` wrote a queue->core plan for the first port, which wins. One pinned worker per core owns its sockets and their rings.",
	  set_cores, NULL },
	{ "mode", "MODE", "rxdrop | txonly | l2fwd | fwd (see MODES). Required.", set_mode, NULL },
	{ "duration", "S",
	  "Stop after S seconds (default: run until SIGINT/SIGTERM; txonly with --count stops when done).",
	  set_duration, "Output" },
	{ "interval", "S", "Seconds between live stats lines (default 1).", set_interval, NULL },
	{ "json", NULL,
	  "Print one JSON object per line on stdout per port/queue instead of text (see OUTPUT).",
	  set_json, NULL },
	{ "quiet", NULL,
	  "No live text lines; the summary only (with --json the interval objects stay).",
	  set_quiet, NULL },
	{ "verbose", NULL, "More detail (library debug messages, ring split in audits).",
	  set_verbose, NULL },
	{ "copy", NULL, "Force copy mode (XDP_COPY).", set_copy, "AF_XDP sockets" },
	{ "zero-copy", NULL, "Require zero-copy (XDP_ZEROCOPY); fail if the driver lacks it.",
	  set_zc, NULL },
	{ "xsk-mode", "MODE",
	  "auto | copy | zero-copy (default auto: zero-copy where the driver has it, else copy; the mode of each socket is printed).",
	  set_xsk_mode, NULL },
	{ "rx-ring", "N", "RX ring entries (power of two, default 2048).", set_rx_ring, NULL },
	{ "tx-ring", "N", "TX ring entries (default 2048).", set_tx_ring, NULL },
	{ "fill-ring", "N", "Fill ring entries (default 2 x RX).", set_fill_ring, NULL },
	{ "comp-ring", "N", "Completion ring entries (default = TX).", set_comp_ring, NULL },
	{ "batch", "N",
	  "Descriptors per ring operation (1..256, default 64; at least 32 with multi-buffer, so a batch holds a whole chain). A partial batch is never held back.",
	  set_batch, NULL },
	{ "no-need-wakeup", NULL,
	  "Disable XDP_USE_NEED_WAKEUP (on by default): kick the kernel after every TX batch.",
	  set_no_wakeup, NULL },
	{ "busy-poll", NULL,
	  "Preferred busy polling: set SO_PREFER_BUSY_POLL, SO_BUSY_POLL and SO_BUSY_POLL_BUDGET on every socket and drive each RX queue's NAPI with recvfrom() on every pass (set napi_defer_hard_irqs and gro_flush_timeout on the interface). Says so once if the kernel gives a queue no NAPI id (veth): then it changes nothing.",
	  set_busy, NULL },
	{ "busy-budget", "N", "SO_BUSY_POLL_BUDGET with --busy-poll (default 64).", set_busy_budget,
	  NULL },
	{ "tx-budget", "N",
	  "Copy mode: descriptors one TX kick may send (XDP_MAX_TX_SKB_BUDGET, kernel 6.15+; 32..TX ring; default: the TX ring where the kernel allows it, else its 32). Fewer sendto() calls per packet.",
	  set_tx_budget, NULL },
	{ "multi-buffer", NULL,
	  "Bind with XDP_USE_SG so packets larger than a frame arrive as chains (automatic when an interface's MTU exceeds a frame).",
	  set_mb, NULL },
	{ "no-multi-buffer", NULL, "Never use XDP_USE_SG.", set_no_mb, NULL },
	{ "spin", NULL,
	  "Never sleep when idle (lowest latency, one core at 100%). By default a worker with no work for ~50 us sleeps in poll() (woken by traffic, 1 ms at most), and sleeps at once while its core is shared with a busy task such as the queue's NAPI thread (seen as the worker waiting for its CPU), which spinning would starve.",
	  set_spin, NULL },
	{ "layout", "KIND",
	  "interleaved (default: padded stride, unaligned chunks) | aligned (classic power-of-two chunks).",
	  set_layout, "UMEM and frames" },
	{ "frame-size", "N",
	  "Bytes per frame, 2048..4096 (default 2048). Packet room = N - headroom - 256.",
	  set_frame, NULL },
	{ "headroom", "N",
	  "UMEM headroom before each packet, on top of the kernel's 256 bytes (default 0).",
	  set_headroom, NULL },
	{ "frames", "N",
	  "Frames in the UMEM (default: enough for every fill and TX ring plus the caches). Fewer than the rings hold is allowed (the fill rings starve, nothing is lost).",
	  set_frames, NULL },
	{ "m3-seed", "N",
	  "M3 random dispersal (0, the default, turns it off): the initial fill order shuffles whole containers, and each refill takes every channel's frames from random depths of the dealer's stacks instead of its cache-warm top. Channel evenness is the same either way.",
	  set_m3_seed, NULL },
	{ "channels", "N",
	  "Memory channels the interleaved stride is made prime to (1..64; default: probed from EDAC, SMBIOS or dmidecode, else 4; the start-up line says where it looked, the ready line what it resolved).",
	  set_channels, NULL },
	{ "ranks", "N", "Ranks per memory channel (1..16; default: probed, else 1).", set_ranks,
	  NULL },
	{ "hugepages", "WHEN",
	  "auto (default: 2 MiB pages when enough are reserved) | require (fail otherwise) | never.",
	  set_huge, NULL },
	{ "cache", "N", "Per-core pile cache size (0..4096, default 256).", set_cache, NULL },
	{ "pool", "KIND", "pile (default: lock-free stack of bulks) | ring (MPMC ring).", set_pool,
	  NULL },
	{ "ledger-debug", NULL,
	  "Track every frame's place (one byte per frame) and check each transition; the allocator runs in debug mode too.",
	  set_ldebug, "Ledger" },
	{ "audit", NULL,
	  "Audit the ledger at every stats interval (stop-the-world, brief). SIGUSR1 audits once.",
	  set_audit, NULL },
	{ "attach-existing", NULL,
	  "Use the steer program and maps `xpile-loader load` pinned; do not load or detach anything.",
	  set_existing, "XDP program" },
	{ "xdp-mode", "MODE", "auto | native | skb: how the steer program attaches (default auto).",
	  set_xdp_mode, NULL },
	{ "pin-path", "DIR",
	  "Where the steer program's maps are pinned (default: the loader's per-interface directory).",
	  set_pin, NULL },
	{ "force", NULL, "Replace an XDP program on the interface that xpile does not own.",
	  set_force, NULL },
	{ "pkt-size", "N",
	  "txonly: frame size on the wire including the 4-byte FCS (64..frame room + 4, default 64).",
	  set_pkt, "txonly" },
	{ "count", "K", "txonly: send exactly K packets in all, then stop (default: unlimited).",
	  set_count, NULL },
	{ "rate", "PPS", "txonly: at most PPS packets per second in all (default 0 = unlimited).",
	  set_rate, NULL },
	{ "flows", "N",
	  "txonly: UDP source ports src-port .. src-port+N-1, round robin (default 1).", set_flows,
	  NULL },
	{ "dst-mac", "MAC", "txonly: destination MAC (default ff:ff:ff:ff:ff:ff).", set_dmac,
	  NULL },
	{ "src-mac", "MAC", "txonly: source MAC (default: the interface's).", set_smac, NULL },
	{ "src-ip", "IP", "txonly: source IPv4 (default 198.18.0.1).", set_sip, NULL },
	{ "dst-ip", "IP", "txonly: destination IPv4 (default 198.18.0.2).", set_dip, NULL },
	{ "src-port", "PORT", "txonly: first UDP source port (default 9).", set_sport, NULL },
	{ "dst-port", "PORT", "txonly: UDP destination port (default 9).", set_dport, NULL },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void wrap(FILE *f, const char *text, int indent, int width)
{
	int col = indent;
	const char *p = text;

	fprintf(f, "%*s", indent, "");
	while (*p) {
		const char *sp = strchr(p, ' ');
		int len = sp ? (int)(sp - p) : (int)strlen(p);

		if (col > indent && col + 1 + len > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, p);
		col += len;
		p += len;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	size_t i;

	fputs("NAME\n"
	      "    xpile - move packets between NIC queues and userspace over AF_XDP, without DPDK\n\n"
	      "SYNOPSIS\n"
	      "    xpile run --iface IFACE[:QUEUES] [--iface ...] --cores LIST --mode MODE [OPTIONS]\n"
	      "    xpile --help | --version\n\n"
	      "DESCRIPTION\n",
	      f);
	wrap(f,
	     "Attaches one AF_XDP socket to each given interface queue and serves them with one pinned worker thread per core. All sockets share one UMEM (XDP_SHARED_UMEM), laid out on a channel-interleaved stride by default, so a frame received on one port leaves on another without a copy. Frames come from the pile allocator: each worker's cache refills its fill rings and takes completed TX frames back in bulk. Unless --attach-existing, xpile loads the steer program on every port (default rule: all traffic on the served queues to the sockets; other queues and a closed socket fall back to the kernel) and removes it at exit.",
	     4, 88);
	fputs("\nMODES\n"
	      "    rxdrop   receive and free\n"
	      "    txonly   generate UDP/IPv4 packets (see txonly options)\n"
	      "    l2fwd    swap the MAC addresses and send back out of the same queue\n"
	      "    fwd      two ports joined as a wire: queue N of one to queue N of the other\n",
	      f);
	for (i = 0; i < NOPTS; i++) {
		char head[64];

		if (opts[i].section)
			fprintf(f, "\nOPTIONS: %s\n", opts[i].section);
		snprintf(head, sizeof(head), "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		fprintf(f, "    %s\n", head);
		wrap(f, opts[i].help, 8, 88);
	}
	fputs("\n    -h, --help     this text          -V, --version   print the version\n", f);
	fputs("\nOUTPUT\n", f);
	wrap(f,
	     "Text: one live line per port/queue on stderr every --interval (packets and bits per second, totals, drops, kernel counters) and an allocator line, then a summary, the allocator figures and the ledger audit. Before traffic: {\"type\":\"socket\",...} per socket (mode chosen) and {\"type\":\"ready\",...}. With --json, stdout gets one object per line: {\"type\":\"interval\"|\"summary\", \"time\", \"port\", \"queue\", \"mode\", \"zerocopy\", \"rx_packets\", \"tx_packets\", \"rx_bytes\", \"tx_bytes\", \"rx_pps\", \"tx_pps\", \"rx_bps\", \"tx_bps\", \"tx_dropped\", \"bad_descs\", \"fill_starved\", \"tx_kicks\", and the kernel's XDP_STATISTICS: \"rx_dropped\", \"rx_invalid_descs\", \"tx_invalid_descs\", \"rx_ring_full\", \"rx_fill_ring_empty_descs\", \"tx_ring_empty_descs\"}, with {\"type\":\"allocator\",\"when\":\"interval\"|\"exit\",...} (pile and cache figures) after each round and {\"type\":\"ledger\",\"ok\":true|false,...} at audits and exit.",
	     4, 88);
	fputs("\nFRAME LEDGER\n", f);
	wrap(f,
	     "Every UMEM frame is always in exactly one place: free (pile or a core's cache), fill (fill ring, kernel, RX ring), app (being processed) or tx (TX ring, kernel, completion ring). At exit the engine stops receiving, drains, closes its sockets, takes every frame back and proves each is in the pile exactly once; SIGUSR1 (or --audit) audits while running. A discrepancy is reported as frames lost or held twice and makes the exit status 3.",
	     4, 88);
	fputs("\nSIGNALS\n"
	      "    SIGINT, SIGTERM  stop: detach the sockets from the steer map (packets fall back to\n"
	      "                     the kernel), drain, audit, return every frame, remove the program\n"
	      "    SIGUSR1          audit the ledger now\n",
	      f);
	fputs("\nENVIRONMENT\n", f);
	wrap(f,
	     "XPILE_BPF_DIR: where steer.o is (default: next to the binary, then the install directory). XPILE_FAULT=lose-frame|free-twice: test hook; at stop every worker loses one frame, or frees one still in a fill ring, so the ledger audit must fail (exit status 3).",
	     4, 88);
	fputs("\nEXIT STATUS\n"
	      "    0 success; 1 set-up error (one line names the cause and the fix); 2 bad usage;\n"
	      "    3 the ledger audit failed\n",
	      f);
	fputs("\nNOTES\n", f);
	wrap(f,
	     "veth hosts: frames forwarded through AF_XDP carry no checksum offload state, so the hosts sending through xpile must compute checksums and segment themselves: `ethtool -K IF tx off tso off gso off` on the hosts' interfaces. Copy mode on veth is the expected mode (veth has no zero-copy). Multi-buffer (MTU above a frame) needs the frags-aware steer program (it is) and kernel >= 6.6.",
	     4, 88);
	fputs("\nEXAMPLES\n"
	      "    xpile run --iface eth0:0-1 --cores 0,1 --mode rxdrop --duration 10\n"
	      "    xpile run --iface veth0 --iface veth1 --cores 1 --mode fwd --json\n"
	      "    xpile run --iface eth0 --mode txonly --count 1000000 --rate 100000 --flows 16 \\\n"
	      "              --dst-mac 02:00:00:00:00:02 --dst-ip 198.18.0.2\n"
	      "    xpile run --iface eth0 --mode l2fwd --layout aligned --headroom 128 --copy\n",
	      f);
}

static void defaults(struct eng_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval = 1;
	c->xsk_mode = XP_XSK_AUTO;
	c->layout = XP_LAYOUT_INTERLEAVED;
	c->frame_size = 2048;
	c->rx_ring = 2048;
	c->tx_ring = 2048;
	c->batch = 64;
	c->cache = 256;
	c->pkt_size = 64;
	c->flows = 1;
	memset(c->dst_mac, 0xff, 6);
	inet_pton(AF_INET, "198.18.0.1", &c->src_ip);
	inet_pton(AF_INET, "198.18.0.2", &c->dst_ip);
	c->src_port = 9;
	c->dst_port = 9;
}

static int parse(int argc, char **argv, struct eng_config *c)
{
	struct option lo[NOPTS + 3];
	size_t i;
	int ch, idx;

	for (i = 0; i < NOPTS; i++) {
		lo[i].name = opts[i].name;
		lo[i].has_arg = opts[i].arg ? required_argument : no_argument;
		lo[i].flag = NULL;
		lo[i].val = 1000 + (int)i;
	}
	lo[NOPTS] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[NOPTS + 1] = (struct option){ "version", no_argument, NULL, 'V' };
	lo[NOPTS + 2] = (struct option){ 0 };
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hV", lo, &idx)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			exit(0);
		}
		if (ch == 'V') {
			printf("xpile %s\n", XPILE_VERSION);
			exit(0);
		}
		if (ch == '?') {
			fprintf(stderr, "xpile: unknown option %s (see xpile run --help)\n",
				argv[optind - 1]);
			return -1;
		}
		if (ch == ':') {
			fprintf(stderr, "xpile: %s needs a value (see xpile run --help)\n",
				argv[optind - 1]);
			return -1;
		}
		if (ch >= 1000 && opts[ch - 1000].set(c, optarg))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "xpile: unexpected argument '%s' (see xpile run --help)\n",
			argv[optind]);
		return -1;
	}
	if (!c->mode) {
		fprintf(stderr,
			"xpile: --mode is required: rxdrop, txonly, l2fwd or fwd (see xpile run --help)\n");
		return -1;
	}
	if (!c->nports) {
		fprintf(stderr,
			"xpile: --iface is required, e.g. --iface eth0:0 (see xpile run --help)\n");
		return -1;
	}
	if (c->headroom + XP_XDP_HEADROOM + 128 > c->frame_size) {
		fprintf(stderr,
			"xpile: --headroom %u leaves too little room in a %u-byte frame; lower it or raise --frame-size\n",
			c->headroom, c->frame_size);
		return -1;
	}
	if (!c->ncores) {
		c->ncores = 1;
		c->cores[0] = 0;
	}
	if (!c->fill_ring)
		c->fill_ring = 2 * c->rx_ring;
	if (!c->comp_ring)
		c->comp_ring = c->tx_ring;
	return 0;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int quiet_xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	static struct engine e; /* large: keep it off the stack */
	sigset_t stop;
	int status;

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("xpile %s\n", XPILE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "run")) {
		fprintf(stderr,
			"xpile: unknown command '%s'; the command is `xpile run` (see xpile --help)\n",
			argv[1]);
		return 2;
	}
	defaults(&e.cfg);
	if (parse(argc - 1, argv + 1, &e.cfg))
		return 2;
	if (getenv("XPILE_FAULT")) {
		const char *f = getenv("XPILE_FAULT");

		e.cfg.fault = !strcmp(f, "lose-frame") ? ENG_FAULT_LOSE :
			      !strcmp(f, "free-twice") ? ENG_FAULT_TWICE :
							 ENG_FAULT_NONE;
	}
	if (e.cfg.verbose) {
		xp_set_log_level(XP_LOG_DEBUG);
	} else {
		/* libbpf/libxdp narrate their fallbacks; the steer library reports what matters. */
		libbpf_set_print(quiet_print);
		libxdp_set_print(quiet_xdp_print);
	}
	/* A closed stdout/stderr pipe (`xpile ... | head`) must not kill the engine before
	 * it detaches its program and returns its frames: writes just fail. */
	signal(SIGPIPE, SIG_IGN);
	/* A stop request during set-up waits for the main loop, which then tears down. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGUSR1);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	if (eng_setup(&e)) {
		eng_teardown(&e);
		return 1;
	}
	status = eng_run(&e);
	eng_teardown(&e);
	return status;
}
