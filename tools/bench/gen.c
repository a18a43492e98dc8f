// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench gen: a traffic source that costs the sending core little, so that a
 * receiver on another core, not the sender, sets the rate. It runs bpf/gen_tx.bpf.c
 * with BPF_PROG_TEST_RUN in live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES, kernel
 * 5.18+): the kernel recycles one page-pool frame per packet, the program returns
 * XDP_TX, and the veth hands the frame to its peer as an xdp_frame. The same frame
 * every time (one UDP/IPv4 flow), as testpmd's txonly sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "inet_csum.h"
#include "bench.h"
#include "benchutil.h"
#include "bpflog.h"
#include "xpile/bpffs.h"
#include "xpile/steer.h"

#define CMD "xpile-bench gen"

struct gen_args {
	const char *iface;
	unsigned char dmac[6], smac[6];
	bool have_dmac;
	__u32 size, seconds, batch;
	__u32 src_ip, dst_ip; /* network order */
	__u64 count;
};

#define OPT(...) CLI_OPT(struct gen_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("iface", IFNAME, iface, "IF", "interface to send on (required)"),
	OPT("dst-mac", MAC, dmac, "MAC", "destination MAC, aa:bb:cc:dd:ee:ff (required)"),
	OPT("src-ip", IPV4, src_ip, "IP", "source IPv4 (default 198.18.0.1)"),
	OPT("dst-ip", IPV4, dst_ip, "IP", "destination IPv4 (default 198.18.0.2)"),
	OPT("pkt-size", NUM, size, "BYTES", "frame size without FCS, 60..1514 (default 64)",
	    .min = 60, .max = 1514),
	OPT("seconds", NUM, seconds, "S", "stop after S seconds (default 10)", .min = 1,
	    .max = 86400),
	OPT("count", NUM, count, "N", "stop after exactly N packets (0: no limit, the default)",
	    .max = UINT32_MAX),
	OPT("batch", NUM, batch, "N", "frames per kernel batch, 1..256 (default 64)", .min = 1,
	    .max = 256),
	{ 0 },
};

BENCH_COMMAND(
	bench_gen_cmd, bench_gen, "gen", "--iface IF --dst-mac MAC [OPTIONS]",
	"XDP live-frames traffic source (the engine bench's --gen xdp)", opts,
	.sections =
		(const struct cli_section[]){
			{ "SIGNALS", "SIGINT or SIGTERM stop it early with the same final line "
				     "(the interrupted call's frames are not counted)." },
			{ NULL } },
	.description =
		"Sends one UDP/IPv4 flow (198.18.0.1:9 -> 198.18.0.2:9 unless --src-ip/--dst-ip say, "
		"source MAC = IF's) out of "
		"IF as fast as the kernel takes it, with an XDP program run by BPF_PROG_TEST_RUN "
		"in live-frames mode: no socket, no skb, a frame recycled from a page pool per "
		"packet. On a veth the peer receives the frames as xdp_frames, so the peer needs "
		"an XDP program (or it drops them). Run it in IF's network namespace (ip netns "
		"exec). Counts what it handed to the program; whatever the peer could not take "
		"is dropped there, so measure at the receiver. Prints one line at the end:\n"
		"  gen iface=IF packets=N seconds=S mpps=X\n"
		"\n"
		"Needs root and a kernel with BPF_F_TEST_XDP_LIVE_FRAMES (5.18+).",
	.examples = "ip netns exec NS xpile-bench gen --iface g0 --dst-mac 02:00:00:00:00:02 "
		    "--seconds 5");

static int parse_args(int argc, char **argv, struct gen_args *a)
{
	struct cli_args res;
	int rc;

	memset(a, 0, sizeof(*a));
	a->size = 64;
	a->seconds = 10;
	a->batch = 64;
	inet_pton(AF_INET, "198.18.0.1", &a->src_ip);
	inet_pton(AF_INET, "198.18.0.2", &a->dst_ip);
	rc = cli_parse(&bench_prog, &bench_gen_cmd.cli, argc, argv, a, &res);
	if (rc != CLI_RUN)
		return rc;
	a->have_dmac = cli_given(&res, "dst-mac");
	if (!a->iface || !a->have_dmac)
		return cli_usage_error(&bench_prog, &bench_gen_cmd.cli,
				       "--iface and --dst-mac are required");
	return CLI_RUN;
}

/* Ethernet + IPv4 + UDP to port 9, zero payload, @size bytes in all. */
static void build_frame(const struct gen_args *a, __u8 *f)
{
	__u8 *ip = f + 14, *udp = ip + 20;
	__u16 iplen = (__u16)(a->size - 14), csum;

	memset(f, 0, a->size);
	memcpy(f, a->dmac, 6);
	memcpy(f + 6, a->smac, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = iplen >> 8;
	ip[3] = iplen & 0xff;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &a->src_ip, 4);
	memcpy(ip + 16, &a->dst_ip, 4);
	csum = ut_inet_csum(ip, 20);
	ip[10] = csum >> 8;
	ip[11] = csum & 0xff;
	udp[1] = 9;
	udp[3] = 9;
	udp[4] = (__u8)((iplen - 20) >> 8);
	udp[5] = (__u8)((iplen - 20) & 0xff);
}

static int iface_mac(const char *ifname, unsigned char *mac)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		    &mac[5]) == 6;
	(void)fclose(f); /* read only: nothing to lose */
	return ok ? 0 : -1;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int bench_gen(int argc, char **argv)
{
	struct gen_args a;
	struct bpf_object *obj = NULL;
	struct xdp_md ctx = { 0 };
	char path[256];
	__u8 frame[1514];
	double t0, t;
	__u64 sent = 0, chunk;
	int ifindex, fd, err, rc = parse_args(argc, argv, &a);

	if (rc != CLI_RUN)
		return rc;
	rc = 1;
	if (geteuid()) {
		fprintf(stderr, CMD ": needs root (BPF_PROG_TEST_RUN): run as root\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(a.iface);
	if (!ifindex || iface_mac(a.iface, a.smac)) {
		fprintf(stderr,
			CMD
			": no interface '%s' in this network namespace; run it with ip netns exec NS\n",
			a.iface);
		return 2;
	}
	bpflog_capture(); /* shown only if the program fails to load */
	if (xp_bpf_obj_path("gen_tx.o", path, sizeof(path)))
		return 1;
	obj = bpf_object__open_file(path, NULL);
	if (libbpf_get_error(obj) || bpf_object__load(obj)) {
		fprintf(stderr, CMD ": cannot load %s (an old object: run make)\n", path);
		bpflog_dump(stderr, 30);
		return 1;
	}
	fd = bpf_program__fd(bpf_object__next_program(obj, NULL));
	build_frame(&a, frame);
	ctx.ingress_ifindex = (__u32)ifindex;
	ctx.data_end = a.size; /* the kernel wants the frame's extent in the context too */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/*
	 * Every test run sets up and tears down a page pool, and the teardown waits for
	 * an RCU grace period (tens of ms here): calls are sized to last ~250 ms, so
	 * that wait costs a few percent, and the deadline is kept to within one call.
	 * A signal ends a call early (-EINTR).
	 */
	chunk = 1u << 16;
	t0 = bench_now_ns();
	for (t = t0; !stop && t - t0 < a.seconds * 1e9; t = bench_now_ns()) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = a.size,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = a.batch);
		double left = a.seconds * 1e9 - (t - t0), call;

		o.repeat = (__u32)(a.count && a.count - sent < chunk ? a.count - sent : chunk);
		err = bpf_prog_test_run_opts(fd, &o);
		if (err == -EINTR)
			break;
		if (err) {
			fprintf(stderr,
				CMD
				": live-frames test run on %s failed: %s (needs kernel 5.18+)\n",
				a.iface, strerror(-err));
			goto out;
		}
		sent += o.repeat;
		if (a.count && sent >= a.count)
			break;
		call = bench_now_ns() - t;
		if (call > 0) {
			double target = left - call < 250e6 ? left - call : 250e6;
			double next = o.repeat * (target / call);

			chunk = next < 4096 ? 4096 : next > (1u << 30) ? (1u << 30) : (__u64)next;
		}
	}
	t = bench_now_ns();
	printf("gen iface=%s packets=%llu seconds=%.2f mpps=%.3f\n", a.iface,
	       (unsigned long long)sent, (t - t0) / 1e9, sent / ((t - t0) / 1e3));
	rc = 0;
out:
	bpf_object__close(obj);
	return rc;
}
