// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile: the AF_XDP engine's command line, declared as one option table (tools/util/cli.h);
 * the parser, --help and every usage error come from it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "capture.h"
#include "cli.h"
#include "client.h"
#include "ctl.h"
#include "dom.h"
#include "engine.h"
#include "handover.h"
#include "modes/modes.h"
#include "modes/router.h"
#include "modes/txonly.h"
#include "run.h"
#include "top.h"
#include "say.h"
#include "tap.h"
#include "uring_wait.h"
#include "xpile/engine.h"
#include "xpile/log.h"

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

/* What the command line fills: the engine's config, its features' (the engine points
 * at those it is given) and the words that map onto them. */
struct run_args {
	struct eng_config c;
	struct eng_mem_cfg mem;
	struct eng_capture_cfg cap;
	struct eng_tap_cfg tap;
	struct eng_ho_cfg ho;
	struct eng_txonly_cfg tx;
	struct eng_ctl_cfg ctl;
	struct eng_router_cfg rt;
	const char *bpffs; /* --bpffs: exported as XPILE_BPFFS */
	int mode; /* index into modes[] */
	int verbose; /* -v, -vv */
	/* The words as given, for the engine's opts (it parses them again). */
	const char *host_taps[ENG_TAP_MAX], *capture_rule, *punt_rule;
	__u32 nhost_taps;
};

/* The public API's modes fill an opts struct (txonly, with its options, is
 * eng_mode_txonly()); the router is the engine's own (modes.h), created through its
 * internal entry. */
#define MODE_TXONLY 2
static void (*const api_modes[])(struct xp_engine_opts *o) = { eng_mode_rxdrop, NULL,
							       eng_mode_l2fwd, eng_mode_fwd, NULL };
static const struct eng_mode *const internal_modes[] = { NULL, NULL, NULL, NULL, &eng_mode_router };

static const struct cli_name mode_names[] = {
	CLI_NAME("rxdrop", 1), CLI_NAME("txonly", MODE_TXONLY), CLI_NAME("l2fwd", 3),
	CLI_NAME("fwd", 4),    CLI_NAME("router", 5),		{ 0 },
};
static const struct cli_name xsk_names[] = {
	CLI_NAME("auto", XP_XSK_AUTO),
	CLI_NAME("copy", XP_XSK_COPY),
	CLI_NAME("zero-copy", XP_XSK_ZEROCOPY),
	CLI_ALIAS("zc", XP_XSK_ZEROCOPY),
	{ 0 },
};
/* The loader's words, with libxdp's as aliases: one spelling in help, both accepted. */
static const struct cli_name xdp_names[] = {
	CLI_NAME("auto", XP_STEER_MODE_AUTO),	 CLI_NAME("native", XP_STEER_MODE_NATIVE),
	CLI_ALIAS("drv", XP_STEER_MODE_NATIVE),	 CLI_NAME("skb", XP_STEER_MODE_SKB),
	CLI_ALIAS("generic", XP_STEER_MODE_SKB), { 0 },
};
static const struct cli_name layout_names[] = {
	CLI_NAME("interleaved", XP_LAYOUT_INTERLEAVED),
	CLI_NAME("aligned", XP_LAYOUT_ALIGNED),
	{ 0 },
};
static const struct cli_name umem_names[] = {
	CLI_NAME("shared", ENG_UMEM_SHARED),
	CLI_NAME("per-port", ENG_UMEM_PER_PORT),
	{ 0 },
};
static const struct cli_name huge_names[] = {
	CLI_NAME("auto", XP_HUGE_AUTO),	   CLI_NAME("require", XP_HUGE_REQUIRE),
	CLI_ALIAS("yes", XP_HUGE_REQUIRE), CLI_NAME("never", XP_HUGE_NEVER),
	CLI_ALIAS("no", XP_HUGE_NEVER),	   { 0 },
};
static const struct cli_name dir_names[] = {
	CLI_NAME("rx", UT_CAP_RX),
	CLI_NAME("tx", UT_CAP_TX),
	CLI_NAME("both", UT_CAP_BOTH),
	{ 0 },
};
static const struct cli_name tap_read_names[] = {
	CLI_NAME("auto", ENG_TAP_READ_AUTO),
	CLI_NAME("multishot", ENG_TAP_READ_MSHOT),
	CLI_NAME("fixed", ENG_TAP_READ_FIXED),
	{ 0 },
};

static const struct cli_name rt_xdp_names[] = {
	CLI_NAME("on", ENG_RT_XDP_ON),
	CLI_NAME("off", ENG_RT_XDP_OFF),
	{ 0 },
};

static const struct cli_name wait_names[] = {
	CLI_NAME("auto", ENG_WAIT_AUTO),
	CLI_NAME("uring", ENG_WAIT_URING),
	CLI_NAME("poll", ENG_WAIT_POLL),
	{ 0 },
};
static const struct cli_name pool_names[] = {
	CLI_NAME("pile", XP_POOL_PILE),
	CLI_NAME("ring", XP_POOL_RING),
	{ 0 },
};

/* --iface IFACE[:QUEUES], repeated: one port each. */
static int parse_iface(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	struct eng_config *c = &((struct run_args *)cfg)->c;
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	char name[64];
	int nq;

	if (c->nports == ENG_MAX_PORTS) {
		snprintf(why, len, "at most %d interfaces", ENG_MAX_PORTS);
		return -1;
	}
	if (n >= sizeof(name)) {
		snprintf(why, len, "expected IFACE or IFACE:QUEUES, e.g. eth0:0-3");
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)n, v);
	if (cli_check_ifname(name, why, len))
		return -1;
	memcpy(c->ports[c->nports].ifname, name, strlen(name) + 1); /* <= 15 bytes, checked */
	if (colon) {
		nq = cli_parse_list(colon + 1, 0, 4095, true, c->ports[c->nports].queues,
				    ENG_MAX_QUEUES, why, len);
		if (nq < 0)
			return -1;
		c->ports[c->nports].nqueues = (__u32)nq;
	} else {
		c->ports[c->nports].nqueues = 1;
		c->ports[c->nports].queues[0] = 0;
	}
	c->nports++;
	return 0;
}

/* --capture-rule 'udp dport 5555': the rule language without its action. */
static int parse_capture_rule(const struct cli_opt *o, const char *v, void *cfg, char *why,
			      size_t len)
{
	struct eng_capture_cfg *c = &((struct run_args *)cfg)->cap;

	if (eng_capture_rule_parse(v, &c->rule, why, len))
		return -1;
	c->rule_set = true;
	((struct run_args *)cfg)->capture_rule = v;
	return 0;
}

static int parse_host_tap(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	struct run_args *a = cfg;

	if (eng_tap_opt(&a->tap, v, why, len))
		return -1;
	a->host_taps[a->nhost_taps++] = v; /* eng_tap_opt() bounds the count */
	return 0;
}

static int parse_punt(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	struct eng_tap_cfg *c = &((struct run_args *)cfg)->tap;

	if (eng_capture_rule_parse(v, &c->punt_rule, why, len))
		return -1;
	c->punt_rule_set = true;
	((struct run_args *)cfg)->punt_rule = v;
	return 0;
}

/* --uds PATH, repeated: the device-plugin socket of each --iface, in order. */
static int parse_uds(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	struct eng_config *c = &((struct run_args *)cfg)->c;

	if (c->nuds == ENG_MAX_PORTS) {
		snprintf(why, len, "at most %d sockets, one per --iface", ENG_MAX_PORTS);
		return -1;
	}
	if (strlen(v) >= 108) {
		snprintf(why, len, "a Unix socket path has at most 107 bytes");
		return -1;
	}
	c->uds[c->nuds++] = v;
	return 0;
}

/* --handover PATH, --take-over PATH: a Unix socket path. */
static int parse_ho_path(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	struct eng_ho_cfg *c = &((struct run_args *)cfg)->ho;

	if (!*v || strlen(v) >= 108) {
		snprintf(why, len, "a Unix socket path of 1..107 bytes");
		return -1;
	}
	if (!strcmp(o->name, "handover"))
		c->handover = v;
	else
		c->take_over = v;
	return 0;
}

#define OPT(...) CLI_OPT(struct run_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("iface", FUNC, c.ports, "IFACE[:QUEUES]",
	    "Interface and RX queues to serve (QUEUES like 0 or 0-3 or 0,2; default 0). Repeat for more ports; fwd takes two with the same queues.",
	    .section = "Ports and cores", .flags = CLI_F_REPEAT, .parse = parse_iface),
	OPT("cores", LIST, c.cores, "LIST",
	    "Cores for the workers (default 0). Queue j of each port goes to core LIST[j % n], unless `xpile-loader wire` wrote a queue->core plan for the first port, which wins. One pinned worker per core owns its sockets and their rings.",
	    .count_off = offsetof(struct run_args, c.ncores), .cap = ENG_MAX_WORKERS,
	    .flags = CLI_F_CPUS),
	OPT("mode", ENUM, mode, "MODE",
	    "rxdrop | txonly | l2fwd | fwd | router (see MODES). Required.", .names = mode_names),
	OPT("duration", SECONDS, c.duration, "S",
	    "Stop after S seconds, at most a year (default: run until SIGINT/SIGTERM/SIGHUP; txonly with --count stops when done).",
	    .section = "Output", .dmin = 0, .dmax = 365 * 86400.0),
	OPT("interval", SECONDS, c.interval, "S",
	    "Seconds between live stats lines, 0.01..3600 (default 1).", .dmin = 0.01,
	    .dmax = 3600),
	OPT("json", FLAG, c.json, NULL,
	    "Print one JSON object per line on stdout per port/queue instead of text (see OUTPUT)."),
	OPT("quiet", FLAG, c.quiet, NULL,
	    "No live text lines; the summary only (with --json the interval objects stay)."),
	OPT("verbose", COUNT, verbose, NULL,
	    "More detail: -v adds the ring split to audits and the library's info messages, -vv also libbpf's and libxdp's debug output.",
	    .short_name = 'v'),
	OPT("copy", CONST, c.xsk_mode, NULL, "Force copy mode (XDP_COPY); same as --xsk-mode copy.",
	    .section = "AF_XDP sockets", .value = XP_XSK_COPY, .excl = 1),
	OPT("zero-copy", CONST, c.xsk_mode, NULL,
	    "Require zero-copy (XDP_ZEROCOPY); fail if the driver lacks it. Same as --xsk-mode zero-copy.",
	    .value = XP_XSK_ZEROCOPY, .excl = 1),
	OPT("xsk-mode", ENUM, c.xsk_mode, "MODE",
	    "auto | copy | zero-copy (default auto: zero-copy where the driver has it, else copy; the mode of each socket is printed).",
	    .names = xsk_names, .excl = 1),
	OPT("rx-ring", NUM, c.rx_ring, "N",
	    "RX ring entries (a power of two in 64..65536, default 2048).", .min = 64,
	    .max = 1u << 16, .flags = CLI_F_POW2),
	OPT("tx-ring", NUM, c.tx_ring, "N", "TX ring entries (a power of two, default 2048).",
	    .min = 64, .max = 1u << 16, .flags = CLI_F_POW2),
	OPT("fill-ring", NUM, c.fill_ring, "N",
	    "Fill ring entries (a power of two, default 2 x RX).", .min = 64, .max = 1u << 16,
	    .flags = CLI_F_POW2),
	OPT("comp-ring", NUM, c.comp_ring, "N",
	    "Completion ring entries (a power of two, default = TX).", .min = 64, .max = 1u << 16,
	    .flags = CLI_F_POW2),
	OPT("batch", NUM, c.batch, "N",
	    "Descriptors per ring operation (1..256, default 64; at least 32 with multi-buffer, so a batch holds a whole chain). A partial batch is never held back.",
	    .min = 1, .max = ENG_MAX_BATCH),
	OPT("no-need-wakeup", FLAG, c.no_need_wakeup, NULL,
	    "Disable XDP_USE_NEED_WAKEUP (on by default): kick the kernel after every TX batch."),
	OPT("busy-poll", FLAG, c.busy_poll, NULL,
	    "Preferred busy polling: set SO_PREFER_BUSY_POLL, SO_BUSY_POLL and SO_BUSY_POLL_BUDGET on every socket and drive each RX queue's NAPI with recvfrom() on every pass (set napi_defer_hard_irqs and gro_flush_timeout on the interface). Says so once if the kernel gives a queue no NAPI id (veth): then it changes nothing. Without it, busy polling is on by itself where every port defers its IRQs, each queue polled once it shows a NAPI id; the idle policy line says which."),
	OPT("busy-budget", NUM, c.busy_budget, "N",
	    "SO_BUSY_POLL_BUDGET with --busy-poll (1..1024, default 64).", .min = 1, .max = 1024),
	OPT("tx-budget", NUM, c.tx_budget, "N",
	    "Copy mode: descriptors one TX kick may send (XDP_MAX_TX_SKB_BUDGET, kernel 6.15+; 32..TX ring; default: the TX ring where the kernel allows it, else its 32). Fewer sendto() calls per packet.",
	    .min = 32, .max = 1u << 16),
	OPT("multi-buffer", FLAG, c.multi_buffer, NULL,
	    "Bind with XDP_USE_SG so packets larger than a frame arrive as chains (automatic when an interface's MTU exceeds a frame).",
	    .excl = 2),
	OPT("no-multi-buffer", CONST, c.multi_buffer, NULL, "Never use XDP_USE_SG.", .value = 0,
	    .excl = 2),
	OPT("spin", FLAG, c.spin, NULL,
	    "Never sleep when idle (lowest latency, one core at 100%). By default an idle "
	    "worker decides from what waiting costs here (measured at start, --idle-wake-us) "
	    "and the expected gap to the next arrival (from its queues' rate and the idle "
	    "periods it saw): it naps (--idle-nap-us) where a timer wake-up per nap is cheaper "
	    "than a wake-up per arrival (and so cheaper than spinning), else sleeps until "
	    "traffic wakes it (1 ms at most); it spins (up to one wake-up's cost) only where "
	    "no nap pays and the gap is shorter than a wake-up; never spins "
	    "while its core is shared with a busy task such as the queue's NAPI thread (seen "
	    "as the worker waiting for its CPU), which spinning would starve. The start says "
	    "the costs; --json's idle lines say the choice."),
	OPT("idle-wake-us", NUM, c.idle_wake_us, "US",
	    "What a sleep and its wake-up cost a worker, in us of CPU, instead of measuring "
	    "it at start (as xpile-bench wake does: some 20 ms); a timer's wake-up is then "
	    "taken to cost the same. Where no nap pays, the idle policy spins while the "
	    "expected gap to the next arrival is shorter than this, and sleeps otherwise.",
	    .min = 1, .max = 1000000),
	OPT("idle-nap-us", NUM, c.idle_nap_us, "US",
	    "Longest nap of an idle worker, the latency it may add (0..10000, default 200; 0: "
	    "never nap, and spin through gaps shorter than a wake-up instead). Where one "
	    "timer wake-up per nap costs less than one wake-up per arrival, an idle worker "
	    "naps, however short the gap: a timed sleep no arrival interrupts, at most half "
	    "its RX ring's worth of arrivals.",
	    .max = 10000),
	OPT("idle-wait", ENUM, c.idle_wait, "HOW",
	    "How an idle worker sleeps: uring (a one-shot poll per socket armed as it goes "
	    "to sleep, one io_uring_enter for all of them), poll (poll() over its sockets), auto (the "
	    "default: uring where io_uring is allowed, else poll). The start says which.",
	    .names = wait_names),
	OPT("layout", ENUM, mem.layout, "KIND",
	    "interleaved (default: padded stride, unaligned chunks) | aligned (classic power-of-two chunks).",
	    .section = "UMEM and frames", .names = layout_names),
	OPT("umem", ENUM, mem.umem, "HOW",
	    "shared (default: one UMEM for every port) | per-port (a UMEM per port, each carved from the arena of its port's NUMA node, with its own pool and ledger; fwd then copies each frame into the other port's UMEM, counted as tx_copied). --frames is per UMEM.",
	    .names = umem_names),
	OPT("frame-size", SIZE, mem.frame_size, "N",
	    "Bytes per frame: a multiple of 64 in 2048..4096 (default 2048; units k allowed: 4k). Packet room = N - headroom - 256.",
	    .min = 2048, .max = 4096, .multiple = 64),
	OPT("headroom", NUM, mem.headroom, "N",
	    "UMEM headroom before each packet, on top of the kernel's 256 bytes (0..1024, default 0).",
	    .min = 0, .max = 1024),
	OPT("frames", NUM, mem.frames, "N",
	    "Frames in the UMEM, 1..16777216 (default: enough for every fill and TX ring plus the caches). Fewer than the rings hold is allowed: each fill ring then holds at most its share (frames / receiving sockets), so no direction starves; fewer than 2 x --batch per receiving socket is refused.",
	    .min = 1, .max = 1u << 24),
	OPT("m3-seed", NUM, mem.m3_seed, "N",
	    "M3 random dispersal (0, the default, turns it off): the initial fill order shuffles whole containers, and each refill takes every channel's frames from random depths of the dealer's stacks instead of its cache-warm top. Channel evenness is the same either way."),
	OPT("channels", NUM, mem.channels, "N",
	    "Memory channels the interleaved stride is made prime to (1..64; default: probed from EDAC, SMBIOS or dmidecode, else 4; the start-up line says where it looked, the ready line what it resolved).",
	    .min = 1, .max = 64),
	OPT("ranks", NUM, mem.ranks, "N",
	    "Ranks per memory channel (1..16; default: probed, else 1).", .min = 1, .max = 16),
	OPT("hugepages", ENUM, mem.hugepages, "WHEN",
	    "auto (default: 2 MiB pages when enough are reserved) | require (fail otherwise) | never.",
	    .names = huge_names),
	OPT("cache", NUM, mem.cache, "N", "Per-core pile cache size (0..4096, default 256).",
	    .min = 0, .max = XP_CACHE_SIZE_MAX),
	OPT("pool", ENUM, mem.pool_backend, "KIND",
	    "pile (default: per-core stripes of bulks, banks in front of lock-free stacks) | ring (MPMC ring).",
	    .names = pool_names),
	OPT("ledger-debug", FLAG, mem.ledger_debug, NULL,
	    "Check every move against the frame's state byte (kept anyway) and report a bad one where it happens; debug allocator.",
	    .section = "Ledger"),
	OPT("audit", FLAG, c.audit_each_interval, NULL,
	    "Also audit stop-the-world every interval (the live audit runs anyway). SIGUSR1 audits once."),
	OPT("capture", STR, cap.file, "FILE|-",
	    "Write the frames the workers receive and send to FILE as pcapng (one interface "
	    "per port:queue, nanosecond timestamps, direction flags), or with - to stdout "
	    "(xpile run ... --capture - | tcpdump -r -). Workers copy into their own ring "
	    "and never wait for the writer: a frame that finds it full is counted as "
	    "capture_dropped.",
	    .section = "Capture"),
	OPT("capture-rule", FUNC, cap.rule, "RULE",
	    "Capture only the frames matching RULE: the steer rule language without an "
	    "action (e.g. 'udp dport 5555', 'src 198.18.0.0/15 tcp').",
	    .parse = parse_capture_rule),
	OPT("snaplen", NUM, cap.snaplen, "N",
	    "Bytes of each frame captured, 1..65535 (default 65535); the record keeps the "
	    "frame's full length.",
	    .min = 1, .max = 65535),
	OPT("capture-dir", ENUM, cap.dir, "DIR",
	    "rx | tx | both (default both): frames received from the sockets, sent to "
	    "them, or both.",
	    .names = dir_names),
	OPT("capture-size", NUM, cap.size, "MB",
	    "Rotate the capture file at about MB million bytes, like tcpdump -C: FILE, then "
	    "FILE1, FILE2... each a whole pcapng file with its own header (1..1000000; "
	    "a file, not -).",
	    .min = 1, .max = 1000000),
	OPT("capture-buffer", SIZE, cap.buffer, "SIZE",
	    "Capture ring per worker, 128k..1G (default 4M), in chunks of up to 256 KiB "
	    "written as they fill.",
	    .min = 128u << 10, .max = 1u << 30),
	OPT("host-tap", FUNC, tap.taps, "PORT[=NAME]",
	    "Give the host a TAP interface on PORT (default name xp-PORT, the port's MAC and "
	    "MTU, up, removed at exit): frames for the port's MAC go up to it, broadcast and "
	    "multicast as a copy (forwarded too), and what the host sends on it leaves on "
	    "PORT. On io_uring; never stalls a worker (punt_dropped, inject_dropped). Repeat "
	    "for more ports.",
	    .section = "Host interfaces", .flags = CLI_F_REPEAT, .parse = parse_host_tap),
	OPT("punt", FUNC, tap.punt_rule, "RULE",
	    "Frames of a --host-tap port matching RULE (the steer rule language without an "
	    "action, e.g. 'udp dport 5555') go to its TAP too, instead of the mode.",
	    .parse = parse_punt),
	OPT("host-tap-keep", FLAG, tap.tap_keep, NULL,
	    "Leave the TAPs at exit (persistent), with the addresses and routes given to them; "
	    "the next start reuses a TAP of the same name. Without it a TAP is removed at "
	    "exit, even one a previous --host-tap-keep left."),
	OPT("host-tap-read", ENUM, tap.tap_read, "HOW",
	    "How the host's frames are read into UMEM frames: multishot (one multishot read "
	    "over a ring of provided frames, Linux 6.7+), fixed (32 READ_FIXED kept posted), "
	    "auto (the default: multishot where the kernel has it, else fixed).",
	    .names = tap_read_names),
	OPT("attach-existing", FLAG, c.attach_existing, NULL,
	    "Use the steer program and maps `xpile-loader load` pinned; do not load or detach anything.",
	    .section = "XDP program"),
	OPT("xdp-mode", ENUM, c.xdp_mode, "MODE",
	    "auto | native | skb: how the steer program attaches (default auto; drv and generic are accepted for native and skb).",
	    .names = xdp_names),
	OPT("pin-path", STR, c.pin_path, "DIR",
	    "Where the steer program's maps are pinned (default: the loader's per-interface directory)."),
	OPT("bpffs", STR, bpffs, "DIR", CLI_BPFFS_HELP, .env = "XPILE_BPFFS"),
	OPT("uds", FUNC, c.uds, "PATH",
	    "Get the XSKMAP from the AF_XDP device plugin's socket PATH (xpile-agent serves DIR/IFACE/afxdp.sock); load nothing. Needs only CAP_NET_RAW and locked memory for the UMEM (README). One per --iface, in order.",
	    .flags = CLI_F_REPEAT, .parse = parse_uds),
	OPT("force", FLAG, c.force, NULL,
	    "Replace an XDP program on the interface that xpile does not own."),
	OPT("reattach", FLAG, c.reattach, NULL,
	    "When the engine's own steer program is detached while it runs (ip link set dev IF xdp off) attach it again, pin it again when its pins are removed, and serve through xpile's program when `xpile-loader load` put a new one in its place (`ip link set dev IF xdp off; xpile-loader load IF`: while the load runs, the program and its pins are gone, and the engine waits up to 3 s for the new one), instead of stopping with exit status 4. An unload (program and pins gone, nothing loaded in their place within 3 s), a foreign program in its place, or a detached program the engine did not load always stop it."),
	OPT("handover", FUNC, ho.handover, "PATH",
	    "Listen on the Unix socket PATH (mode 0600, same uid only) for a successor started with --take-over PATH: it gets this engine's sockets and UMEM while traffic flows, and this engine exits 0 (docs/engine.md, Handover). A leftover socket file nobody listens on is replaced; a live one is refused.",
	    .section = "Hot handover", .parse = parse_ho_path),
	OPT("take-over", FUNC, ho.take_over, "PATH",
	    "Take the sockets, rings and UMEM of the engine listening on PATH (--handover PATH) instead of creating them: same --mode, --iface list and queues, ring sizes, --frame-size, --headroom, --layout; --cores, --interval, --duration, --json, --batch, --cache and the output and ledger options may differ. Give --handover too to be taken over in turn (the same PATH is fine).",
	    .parse = parse_ho_path),
	OPT("pkt-size", NUM, tx.pkt_size, "N",
	    "txonly: frame size on the wire including the 4-byte FCS (64..frame room + 4, default 64).",
	    .section = "txonly", .min = 64, .max = 4096),
	OPT("count", NUM, tx.count, "K",
	    "txonly: send exactly K packets in all (K >= 1), then stop (default: unlimited).",
	    .min = 1),
	OPT("rate", NUM, tx.rate, "PPS",
	    "txonly: at most PPS packets per second in all (default 0 = unlimited).", .min = 0),
	OPT("flows", NUM, tx.flows, "N",
	    "txonly: UDP source ports src-port .. src-port+N-1, round robin (1..65535, default 1).",
	    .min = 1, .max = 65535),
	OPT("dst-mac", MAC, tx.dst_mac, "MAC",
	    "txonly: destination MAC (default ff:ff:ff:ff:ff:ff)."),
	OPT("src-mac", MAC, tx.src_mac, "MAC", "txonly: source MAC (default: the interface's)."),
	OPT("src-ip", IPV4, tx.src_ip, "IP", "txonly: source IPv4 (default 198.18.0.1)."),
	OPT("dst-ip", IPV4, tx.dst_ip, "IP", "txonly: destination IPv4 (default 198.18.0.2)."),
	OPT("src-port", NUM, tx.src_port, "PORT", "txonly: first UDP source port (default 9).",
	    .min = 1, .max = 65535),
	OPT("dst-port", NUM, tx.dst_port, "PORT", "txonly: UDP destination port (default 9).",
	    .min = 1, .max = 65535),
	OPT("route-table", NUM, rt.table, "N",
	    "router: mirror routing table N (1..4294967295; default 254, main).",
	    .section = "router", .min = 1, .max = 0xffffffffu),
	OPT("fib-groups", NUM, rt.lpm_groups, "N",
	    "router: IPv4 LPM groups of 256 entries (1 KiB each, twice double-buffered): one per "
	    "/24 holding longer prefixes; a full table of 1M routes needs about 50000 (default "
	    "16384).",
	    .min = 1, .max = 1u << 24),
	OPT("router-xdp", ENUM, rt.xdp, "WHEN",
	    "router: on (the default): what the kernel's FIB and neighbours can forward is "
	    "forwarded in the ports' XDP programs (bpf_fib_lookup, redirect), the rest goes "
	    "through the engine; off: every packet goes through the engine.",
	    .names = rt_xdp_names),
	OPT("fib-inplace", FLAG, rt.inplace, NULL,
	    "router: one table image, each route change live at once (default: two images, the "
	    "changes of one notification batch live together)."),
	OPT("name", STR, ctl.name, "ENGINE",
	    "The engine's name: its control socket is /run/xpile/ENGINE.sock, `xpile stats ENGINE` and `xpile top` show it (default: the ports joined by +, and @NS in a named network namespace, e.g. eth0+eth1@blue). Letters, digits and . - _ + @ (not first: .).",
	    .section = "Control socket"),
	OPT("ctl", STR, ctl.path, "PATH",
	    "The control socket's path instead of /run/xpile/NAME.sock ($XPILE_RUNDIR/NAME.sock when set). JSON lines: info, stats, workers, ledger, alloc, log (docs/engine.md). Mode 0600."),
	OPT("no-ctl", FLAG, ctl.off, NULL, "No control socket."),
	OPT("ctl-allow-uid", LIST, ctl.uids, "LIST",
	    "Uids that may use the control socket besides root and the engine's own (SO_PEERCRED).",
	    .count_off = offsetof(struct run_args, ctl.nuids), .cap = ENG_CTL_MAX_IDS,
	    .max = 0xfffffffe),
	OPT("ctl-allow-gid", LIST, ctl.gids, "LIST",
	    "Gids (the peer's primary gid) that may use the control socket.",
	    .count_off = offsetof(struct run_args, ctl.ngids), .cap = ENG_CTL_MAX_IDS,
	    .max = 0xfffffffe),
	{ 0 },
};

static const struct cli_section
	sections
		[] = {
			{ "MODES",
			  "    rxdrop   receive and free\n"
			  "    txonly   generate UDP/IPv4 packets (see the txonly options)\n"
			  "    l2fwd    swap the MAC addresses and send back out of the same queue\n"
			  "    fwd      two ports joined as a wire: queue N of one to queue N of the other\n"
			  "    router   an IPv4/IPv6 router programmed by this namespace's kernel: every\n"
			  "             port gets a host TAP (xp-PORT unless --host-tap names it) to hold\n"
			  "             its addresses; routes, neighbours and addresses are mirrored over\n"
			  "             rtnetlink; what the fast path does not do goes up the TAP\n"
			  "             (docs/router.md)" },
			{ "OUTPUT",
			  "Text: one live line per port/queue on stderr every --interval (packets and bits per second, totals, drops, kernel counters) and allocator and ledger lines, then a summary, the allocator figures and the ledger audit. Before traffic: {\"type\":\"socket\",...} per socket (mode chosen) and {\"type\":\"ready\",...}. With --json, stdout gets one object per line: {\"type\":\"interval\"|\"summary\", \"time\", \"port\", \"queue\", \"mode\", \"zerocopy\", \"rx_packets\", \"tx_packets\", \"rx_bytes\", \"tx_bytes\", \"rx_pps\", \"tx_pps\", \"rx_bps\", \"tx_bps\", \"tx_dropped\", \"bad_descs\", \"fill_starved\", \"tx_kicks\", and the kernel's XDP_STATISTICS: \"rx_dropped\", \"rx_invalid_descs\", \"tx_invalid_descs\", \"rx_ring_full\", \"rx_fill_ring_empty_descs\", \"tx_ring_empty_descs\"}, with {\"type\":\"allocator\",\"when\":\"interval\"|\"exit\",...} after every round and {\"type\":\"ledger\",\"when\":\"live\"|\"audit\"|\"exit\",...} (FRAME LEDGER)." },
			{ "FRAME LEDGER",
			  "Every UMEM frame is in exactly one place, which its state byte names: free (pile or a cache), fill (fill ring, kernel, RX ring), app (being processed) or tx (TX ring, kernel, completion ring). A live audit every --interval checks it against the allocator and the indices of every ring, no pausing; SIGUSR1 (or --audit) audits stop-the-world; at exit all frames are proven back in the pile. Any discrepancy (lost or held twice): status 3." },
			{ "SIGNALS",
			  "    SIGINT, SIGTERM, SIGHUP  stop: detach the sockets from the steer map (packets\n"
			  "                             fall back to the kernel), drain, audit, return every\n"
			  "                             frame, remove the program (SIGHUP does not reload)\n"
			  "    SIGUSR1                  audit the ledger now and keep running\n"
			  "    SIGPIPE                  ignored: a closed output pipe only fails the writes" },
			{ "ENVIRONMENT", "XPILE_BPF_DIR: where steer.o is (default: next to the binary, then the install directory). XPILE_FAULT=lose-frame|free-twice: test hook; once running, each worker loses one frame, or frees one still in a fill ring: the live and exit audits fail (status 3). XPILE_HANDOVER_FAULT=new-hello|new-offer|new-ready|new-state|new-refuse|new-stall|new-ok|old-offer|old-state: test hook; the process dies (SIGKILL) at that step of a handover, or refuses or stalls it. XPILE_HANDOVER_VERSION=N: test hook; offer protocol version N." },
			{ "EXIT STATUS",
			  "0 success; 1 set-up error (one line names the cause and the fix); 2 bad "
			  "usage (one line names the option, the value and what is accepted); 3 the "
			  "ledger audit failed; 4 a port failed while running (interface deleted, "
			  "steer program removed or replaced: an \"event\" line names it)." },
			{ "NOTES",
			  "veth hosts: frames forwarded through AF_XDP carry no checksum offload state, so the hosts sending through xpile must compute checksums and segment themselves: `ethtool -K IF tx off tso off gso off` on the hosts' interfaces. Copy mode on veth is the expected mode (veth has no zero-copy). Multi-buffer (MTU above a frame) needs the frags-aware steer program (it is) and kernel >= 6.6." },
			{ NULL },
		};

/* What the option table cannot say: checked before the engine runs or --parse-only
 * prints. */
static int run_check(const struct cli_cmd *cmd, void *cfg, const struct cli_args *res, char *why,
		     size_t len)
{
	const struct eng_mem_cfg *c = &((struct run_args *)cfg)->mem;

	if (c->layout == XP_LAYOUT_ALIGNED && c->frame_size & (c->frame_size - 1)) {
		snprintf(
			why, len,
			"--layout aligned takes --frame-size 2048 or 4096 (power-of-two chunks), not %u: give one of those, or --layout interleaved",
			c->frame_size);
		return -1;
	}
	return 0;
}

static const struct cli_cmd cmd_run = {
	.name = "run",
	.summary = "serve interface queues with AF_XDP sockets and pinned workers",
	.synopsis = "--iface IFACE[:QUEUES] [--iface ...] --cores LIST --mode MODE [OPTIONS]",
	.description =
		"Attaches one AF_XDP socket to each given interface queue and serves them with one pinned worker thread per core. All sockets share one UMEM (XDP_SHARED_UMEM), laid out on a channel-interleaved stride by default, so a frame received on one port leaves on another without a copy. Frames come from the pile allocator: each worker's cache refills its fill rings and takes completed TX frames back in bulk. Unless --attach-existing, xpile loads the steer program on every port (default rule: all traffic on the served queues to the sockets; other queues and a closed socket fall back to the kernel) and removes it at exit.",
	.opts = opts,
	.sections = sections,
	.examples =
		"xpile run --iface eth0:0-1 --cores 0,1 --mode rxdrop --duration 10\n"
		"xpile run --iface veth0 --iface veth1 --cores 1 --mode fwd --json\n"
		"xpile run --iface eth0 --mode txonly --count 1000000 --rate 100000 --flows 16 \\\n"
		"          --dst-mac 02:00:00:00:00:02 --dst-ip 198.18.0.2\n"
		"xpile run --iface eth0 --mode l2fwd --layout aligned --headroom 128 --copy",
	.min_args = 0,
	.max_args = 0,
	.check = run_check,
};

static const struct cli_cmd *const cmds[] = { &cmd_run, &eng_cmd_stats, &eng_cmd_ctl, &eng_cmd_top,
					      NULL };

static const struct cli_prog prog = {
	.name = "xpile",
	.summary = "move packets between NIC queues and userspace over AF_XDP, without DPDK",
	.cmds = cmds,
	.version = XPILE_VERSION,
	.see_also = "xpile-loader(8), xpile-agent(8), xpile-bench(8)",
};

static void defaults(struct run_args *a)
{
	struct eng_config *c = &a->c;

	memset(a, 0, sizeof(*a));
	c->interval = 1;
	c->xsk_mode = XP_XSK_AUTO;
	a->mem.layout = XP_LAYOUT_INTERLEAVED;
	a->mem.frame_size = 2048;
	c->rx_ring = 2048;
	c->tx_ring = 2048;
	c->batch = 64;
	c->idle_nap_us = 200;
	a->mem.cache = 256;
	a->tx.pkt_size = 64;
	a->tx.flows = 1;
	memset(a->tx.dst_mac, 0xff, 6);
	inet_pton(AF_INET, "198.18.0.1", &a->tx.src_ip);
	inet_pton(AF_INET, "198.18.0.2", &a->tx.dst_ip);
	a->tx.src_port = 9;
	a->tx.dst_port = 9;
	a->cap.snaplen = 65535;
	a->cap.dir = UT_CAP_BOTH;
	a->cap.buffer = 4u << 20;
}

/* Parses argv into @a; returns CLI_RUN or the exit status. */
static int parse(int argc, char **argv, struct run_args *a)
{
	struct eng_config *c = &a->c;
	const struct cli_cmd *cmd;
	struct cli_args res;
	int rc;

	rc = cli_select(&prog, argc, argv, &cmd);
	if (rc != CLI_RUN)
		return rc;
	if (cmd == &eng_cmd_top)
		return eng_top_main(&prog, cmd, argc - 1, argv + 1);
	if (cmd != &cmd_run) /* the commands that ask a running engine (client.h) */
		return eng_client_main(&prog, cmd, argc - 1, argv + 1);
	defaults(a);
	rc = cli_parse(&prog, cmd, argc - 1, argv + 1, a, &res);
	if (rc != CLI_RUN)
		return rc;
	if (!a->mode)
		return cli_usage_error(&prog, cmd,
				       "--mode is required: rxdrop, txonly, l2fwd, fwd or router");

	if (!c->nports)
		return cli_usage_error(&prog, cmd, "--iface is required, e.g. --iface eth0:0");
	if (a->mem.headroom + XP_XDP_HEADROOM + 128 > a->mem.frame_size)
		return cli_usage_error(
			&prog, cmd,
			"--headroom %u leaves too little room in a %u-byte frame; lower it or raise --frame-size",
			a->mem.headroom, a->mem.frame_size);
	if (!a->cap.file) {
		static const char *const needs[] = { "capture-rule", "snaplen", "capture-dir",
						     "capture-buffer", "capture-size" };

		for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
			if (cli_given(&res, needs[i]))
				return cli_usage_error(&prog, cmd, "--%s needs --capture FILE|-",
						       needs[i]);
	} else if (!strcmp(a->cap.file, "-") && a->cap.size) {
		return cli_usage_error(
			&prog, cmd, "--capture-size rotates files: give --capture a file, not -");
	} else if (!strcmp(a->cap.file, "-") && c->json) {
		return cli_usage_error(
			&prog, cmd,
			"--capture - and --json both write to stdout: give --capture a file");
	}
	if (a->ctl.name &&
	    (strlen(a->ctl.name) > 48 || a->ctl.name[0] == '.' ||
	     a->ctl.name[strspn(a->ctl.name, "abcdefghijklmnopqrstuvwxyz"
					     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_+@")]))
		return cli_usage_error(
			&prog, cmd,
			"--name %s: at most 48 letters, digits, '.', '-', '_', '+', '@', not starting with '.'",
			a->ctl.name);
	if (a->ctl.off && (a->ctl.path || a->ctl.nuids || a->ctl.ngids))
		return cli_usage_error(&prog, cmd, "--no-ctl contradicts --ctl and --ctl-allow-*");
	if (a->tap.punt_rule_set && !a->tap.ntaps)
		return cli_usage_error(&prog, cmd, "--punt needs --host-tap PORT");
	if ((cli_given(&res, "host-tap-keep") || cli_given(&res, "host-tap-read")) && !a->tap.ntaps)
		return cli_usage_error(&prog, cmd, "--%s needs --host-tap PORT",
				       cli_given(&res, "host-tap-keep") ? "host-tap-keep" :
									  "host-tap-read");
	if (c->nuds && c->nuds != c->nports)
		return cli_usage_error(
			&prog, cmd,
			"--uds given %u time(s) for %u --iface: give one socket per interface, in order",
			c->nuds, c->nports);
	if (c->nuds && (c->attach_existing || c->force || c->reattach || c->pin_path || a->bpffs ||
			cli_given(&res, "xdp-mode")))
		return cli_usage_error(
			&prog, cmd,
			"--uds uses the agent's program: --attach-existing, --force, --reattach, --pin-path, --bpffs and --xdp-mode do not apply");
	if ((a->ho.handover || a->ho.take_over) &&
	    (!api_modes[a->mode - 1] || c->nuds || a->tap.ntaps))
		return cli_usage_error(
			&prog, cmd,
			"--handover and --take-over serve rxdrop, l2fwd and fwd without --uds or --host-tap");
	if (internal_modes[a->mode - 1] != &eng_mode_router &&
	    (cli_given(&res, "route-table") || cli_given(&res, "fib-groups") ||
	     cli_given(&res, "fib-inplace") || cli_given(&res, "router-xdp")))
		return cli_usage_error(
			&prog, cmd,
			"--route-table, --fib-groups, --fib-inplace and --router-xdp need --mode router");
	if (internal_modes[a->mode - 1] == &eng_mode_router) {
		char why[128];

		if (a->tap.punt_rule_set)
			return cli_usage_error(
				&prog, cmd,
				"--punt does not apply to --mode router: it punts by its lookup (docs/router.md)");
		/* Every port holds its addresses on a TAP: the ones not named get xp-PORT. */
		for (__u32 i = 0; i < c->nports; i++) {
			bool named = false;

			for (__u32 j = 0; j < a->tap.ntaps; j++)
				named |= !strcmp(a->tap.taps[j].port, c->ports[i].ifname);
			if (named)
				continue;
			if (eng_tap_opt(&a->tap, c->ports[i].ifname, why, sizeof(why)))
				return cli_usage_error(&prog, cmd, "--mode router, port %s: %s",
						       c->ports[i].ifname, why);
			a->host_taps[a->nhost_taps++] = c->ports[i].ifname; /* for the opts */
		}
	}
	c->verbose = a->verbose > 0;
	c->multi_buffer_set = cli_given(&res, "multi-buffer") || cli_given(&res, "no-multi-buffer");
	a->tx.dst_mac_set = cli_given(&res, "dst-mac");
	a->tx.src_mac_set = cli_given(&res, "src-mac");
	if (!c->ncores) {
		c->ncores = 1;
		c->cores[0] = 0;
	}
	if (!c->fill_ring)
		c->fill_ring = 2 * c->rx_ring;
	if (!c->comp_ring)
		c->comp_ring = c->tx_ring;
	/* The features given: the engine sees their config, the others stay off (NULL). */
	c->mem = &a->mem;
	c->capture = a->cap.file ? &a->cap : NULL;
	c->tap = a->tap.ntaps ? &a->tap : NULL;
	c->ho = a->ho.handover || a->ho.take_over ? &a->ho : NULL;
	c->router = internal_modes[a->mode - 1] == &eng_mode_router ? &a->rt : NULL;
	return CLI_RUN;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int quiet_xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* The command line as the engine library's opts (xpile/engine.h): every knob. */
static void to_opts(const struct run_args *a, struct xp_engine_opts *o,
		    struct xp_engine_port *ports)
{
	const struct eng_config *c = &a->c;

	for (__u32 i = 0; i < c->nports; i++) {
		ports[i].ifname = c->ports[i].ifname;
		ports[i].queues = c->ports[i].queues;
		ports[i].nqueues = c->ports[i].nqueues;
		ports[i].uds = i < c->nuds ? c->uds[i] : NULL;
	}
	o->ports = ports;
	o->nports = c->nports;
	o->cores = c->cores;
	o->ncores = c->ncores;
	o->handle_signals = true;
	o->duration = c->duration;
	o->interval = c->interval;
	o->output = c->json && c->quiet ? XP_ENGINE_OUT_JSON_QUIET :
		    c->json		? XP_ENGINE_OUT_JSON :
		    c->quiet		? XP_ENGINE_OUT_QUIET :
					  XP_ENGINE_OUT_TEXT;
	o->verbose = a->verbose;
	o->xsk_mode = c->xsk_mode;
	o->xdp_mode = c->xdp_mode;
	o->rx_ring = c->rx_ring;
	o->tx_ring = c->tx_ring;
	o->fill_ring = c->fill_ring;
	o->comp_ring = c->comp_ring;
	o->batch = c->batch;
	o->busy_budget = c->busy_budget;
	o->tx_budget = c->tx_budget;
	o->no_need_wakeup = c->no_need_wakeup;
	o->busy_poll = c->busy_poll;
	o->spin = c->spin;
	o->multi_buffer = !c->multi_buffer_set ? XP_ENGINE_AUTO :
			  c->multi_buffer      ? XP_ENGINE_ON :
						 XP_ENGINE_OFF;
	o->idle_wait = c->idle_wait;
	o->idle_wake_us = c->idle_wake_us;
	o->idle_nap_us = c->idle_nap_us ? (__s32)c->idle_nap_us : -1;
	o->attach_existing = c->attach_existing;
	o->force = c->force;
	o->reattach = c->reattach;
	o->audit = c->audit_each_interval;
	o->pin_path = c->pin_path;
	o->umem = a->mem.umem;
	o->layout = a->mem.layout;
	o->hugepages = a->mem.hugepages;
	o->pool = a->mem.pool_backend;
	o->frame_size = a->mem.frame_size;
	o->headroom = a->mem.headroom;
	o->frames = a->mem.frames;
	o->cache = a->mem.cache ? (__s32)a->mem.cache : -1;
	o->m3_seed = a->mem.m3_seed;
	o->channels = a->mem.channels;
	o->ranks = a->mem.ranks;
	o->ledger_debug = a->mem.ledger_debug;
	o->capture = a->cap.file;
	o->capture_rule = a->capture_rule;
	o->snaplen = a->cap.snaplen;
	o->capture_dir = (__u32)a->cap.dir;
	o->capture_size = a->cap.size;
	o->capture_buffer = a->cap.buffer;
	o->host_taps = a->host_taps;
	o->nhost_taps = a->nhost_taps;
	o->tap_read = a->tap.tap_read;
	o->ctl_name = a->ctl.name;
	o->ctl_path = a->ctl.path;
	o->no_ctl = a->ctl.off;
	o->ctl_uids = a->ctl.uids;
	o->nctl_uids = a->ctl.nuids;
	o->ctl_gids = a->ctl.gids;
	o->nctl_gids = a->ctl.ngids;
	o->punt_rule = a->punt_rule;
	o->tap_keep = a->tap.tap_keep;
	o->handover = a->ho.handover;
	o->take_over = a->ho.take_over;
}

/* The library's errors as the exit statuses the man page lists (engine.h). */
static int exit_status(int err)
{
	switch (err) {
	case 0:
		return 0;
	case -EOPNOTSUPP:
		return ENG_BAD_INPUT;
	case -EUCLEAN:
		return ENG_AUDIT_FAILED;
	case -ENETDOWN:
		return ENG_PORT_FAILED;
	default:
		return ENG_SETUP_FAILED;
	}
}

int main(int argc, char **argv)
{
	static struct run_args a; /* large: keep it off the stack */
	struct xp_engine_port ports[ENG_MAX_PORTS];
	struct eng_txonly *tx = NULL;
	struct xp_engine *e = NULL;
	sigset_t stop;
	int status, err;

	ut_say_prog(prog.name);
	status = parse(argc, argv, &a);
	if (status != CLI_RUN)
		return status;
	XP_OPTS(xp_engine_opts, o);
	to_opts(&a, &o, ports);
	if (api_modes[a.mode - 1])
		api_modes[a.mode - 1](&o);
	if (a.mode == MODE_TXONLY && !(tx = eng_mode_txonly(&o, &a.tx)))
		return ENG_SETUP_FAILED;
	/* -v: our detail and the library's info; -vv: its debug and libbpf's/libxdp's. */
	ut_say_verbose(a.verbose);
	xp_set_log_fn(ut_say_xp);
	if (a.verbose < 2) {
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
	cli_json_begin(); /* a failure with --json: an error object when nothing else came */
	/* The router is still the engine's own: the library's internal entry (api.h). */
	err = internal_modes[a.mode - 1] ?
		      eng_api_create(&o, internal_modes[a.mode - 1], a.c.router, &e) :
		      xp_engine_create(&o, &e);
	if (!err && tx)
		err = eng_txonly_prepare(tx, e);
	if (!err) {
		err = xp_engine_run(e);
		/* What --count promised and never left fails a run (the ledger's failure first). */
		if (tx && (!err || err == -EUCLEAN)) {
			int fin = eng_txonly_finish(tx, e);

			err = err ? err : fin;
		}
	}
	xp_engine_destroy(e);
	eng_txonly_free(tx);
	return cli_json_finish(exit_status(err));
}
