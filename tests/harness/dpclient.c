// SPDX-License-Identifier: BSD-3-Clause
/*
 * A scriptable client of the AF_XDP device plugin's socket, for the agent's suites
 * (tests/net/test_agent_*.sh): sends each MSG as one SEQPACKET message and prints each
 * reply on its own line, "REPLY" or "REPLY +fd=xskmap|other".
 *
 *   dpclient [-n N] [-c] PATH MSG...
 *
 * A MSG may be: TEXT (sent as is), +xsk:TEXT (with an AF_XDP socket's fd attached),
 * +udp:TEXT (with a UDP socket's fd), !close (hang up, print "closed"), !eof (wait up
 * to 30 s for the server to hang up: print "eof after S s"), !hold:MS (sleep).
 * -n N runs the script N times, one connection each, and prints "N runs in S s"
 * when every run printed the same as the first (else the first that differs, exit 1).
 * -c N keeps N connections open at once (each running the script in turn).
 * Exit status 0, 1 (a reply differed, or a socket error), 2 usage.
 *
 *   dpclient -R IF:Q [-k K] [-t SECS] pin:PATH | PATH
 *
 * -R: a receiving client, as an unprivileged engine in a pod would be: takes the
 * XSKMAP from a pinned path (pin:PATH, DPDK's use_pinned_map) or through DPDK's
 * handshake on the socket PATH (/connect, /version, /xsk_map_fd,IF, /fin), checks it
 * is an XSKMAP, binds an AF_XDP socket (copy mode) to queue Q of IF, puts it in the
 * map at key Q and counts packets until K (default 10) or SECS (default 5) passed:
 * "received N" (exit 0 when N >= K). The socket leaves the map before it closes.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <net/if.h>
#include <bpf/bpf.h>

#include "xpile/devplugin.h"
#include "xpile/xsk.h"
#include <linux/if_xdp.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int send_fd(int s, const char *msg, int fd)
{
	int err = xp_dp_send(s, msg, fd, 0);

	errno = -err;
	return err ? -1 : 0;
}

/* One reply appended to @out as a line. */
static int recv_reply(int s, char *out, size_t len)
{
	char buf[256];
	int fd, n = xp_dp_recv(s, buf, sizeof(buf), &fd);

	if (n == -ECONNRESET) {
		snprintf(out + strlen(out), len - strlen(out), "EOF\n");
		return -1;
	}
	if (n < 0) {
		snprintf(out + strlen(out), len - strlen(out), "error %s\n", strerror(-n));
		return -1;
	}
	if (fd >= 0) {
		struct bpf_map_info info = {};
		__u32 ilen = sizeof(info);
		bool xm = !bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
			  info.type == BPF_MAP_TYPE_XSKMAP;

		snprintf(out + strlen(out), len - strlen(out), "%s +fd=%s\n", buf,
			 xm ? "xskmap" : "other");
		close(fd);
	} else {
		snprintf(out + strlen(out), len - strlen(out), "%s%s\n", buf,
			 n >= XP_DP_REPLY_MAX ? " (128 bytes or more!)" : "");
	}
	return 0;
}

static int dial(const char *path)
{
	int s = xp_dp_dial(path, 0);

	if (s < 0)
		fprintf(stderr, "dpclient: connect %s: %s\n", path, strerror(-s));
	return s < 0 ? -1 : s;
}

/* Runs the script on connection @s; the transcript goes to @out. */
static int script(int s, int argc, char **argv, char *out, size_t len)
{
	out[0] = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int fd = -1;

		if (!strcmp(a, "!close")) {
			close(s);
			snprintf(out + strlen(out), len - strlen(out), "closed\n");
			return 0;
		}
		if (!strcmp(a, "!eof")) {
			double t0 = now();
			char b[256];
			struct timeval tv = { .tv_sec = 30 };

			setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			while (recv(s, b, sizeof(b), 0) > 0)
				;
			snprintf(out + strlen(out), len - strlen(out), "eof after %.0f s\n",
				 now() - t0);
			continue;
		}
		if (!strncmp(a, "!hold:", 6)) {
			usleep((useconds_t)atoi(a + 6) * 1000);
			continue;
		}
		if (!strncmp(a, "+xsk:", 5)) {
			fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
			a += 5;
		} else if (!strncmp(a, "+udp:", 5)) {
			fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			a += 5;
		}
		if (send_fd(s, a, fd)) {
			snprintf(out + strlen(out), len - strlen(out), "send error %s\n",
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			close(s);
			return -1;
		}
		if (fd >= 0)
			close(fd);
		if (recv_reply(s, out, len))
			break;
	}
	close(s);
	return 0;
}

/* The XSKMAP from @spec: "pin:PATH", or a device-plugin socket's handshake. */
static int get_map(const char *spec, const char *ifname)
{
	struct bpf_map_info info = { 0 };
	__u32 il = sizeof(info);
	int fd = -1;

	if (!strncmp(spec, "pin:", 4)) {
		fd = bpf_obj_get(spec + 4);
		if (fd < 0)
			fprintf(stderr, "dpclient: bpf_obj_get %s: %s\n", spec + 4,
				strerror(errno));
	} else {
		char req[64], out[512];
		const char *msgs[] = { XP_DP_CONNECT ",dpclient", XP_DP_VERSION, req, XP_DP_FIN };
		int s = dial(spec);

		snprintf(req, sizeof(req), XP_DP_XSK_MAP_FD ",%s", ifname);
		out[0] = 0;
		for (int i = 0; s >= 0 && i < 4; i++) {
			char buf[256];
			int f;

			if (send_fd(s, msgs[i], -1) || xp_dp_recv(s, buf, sizeof(buf), &f) < 0)
				break;
			if (fd < 0)
				fd = f;
			else if (f >= 0)
				close(f);
		}
		if (s >= 0)
			close(s);
		if (fd < 0)
			fprintf(stderr, "dpclient: no XSKMAP from %s%s\n", spec, out);
	}
	if (fd >= 0 &&
	    (bpf_obj_get_info_by_fd(fd, &info, &il) || info.type != BPF_MAP_TYPE_XSKMAP)) {
		fprintf(stderr, "dpclient: %s is not an XSKMAP\n", spec);
		close(fd);
		return -1;
	}
	return fd;
}

#define RX_FRAMES 1024
#define RX_FRAME 2048
#define RX_BYTES ((size_t)RX_FRAMES * RX_FRAME)

static int receive(const char *spec, const char *ifq, int want, double secs)
{
	struct xp_umem_opts uo = { .sz = sizeof(uo) };
	struct xp_xsk_opts xo = { .sz = sizeof(xo) };
	struct xp_umem *u = NULL;
	struct xp_xsk *x = NULL;
	char ifname[IF_NAMESIZE + 1];
	const char *colon = strrchr(ifq, ':');
	int map = -1, got = 0, rc = 1, xfd;
	__u32 q, idx;
	void *area;
	double end;

	if (!colon || colon == ifq || (size_t)(colon - ifq) > IF_NAMESIZE) {
		fprintf(stderr, "dpclient: -R takes IF:QUEUE\n");
		return 2;
	}
	snprintf(ifname, sizeof(ifname), "%.*s", (int)(colon - ifq), ifq);
	q = (__u32)atoi(colon + 1);
	map = get_map(spec, ifname);
	if (map < 0)
		return 1;
	area = mmap(NULL, RX_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uo.area = area;
	uo.size = RX_BYTES;
	uo.chunk_size = RX_FRAME;
	xo.ifname = ifname;
	xo.queue = q;
	xo.rx_size = RX_FRAMES / 2;
	xo.tx_size = 64;
	xo.fill_size = RX_FRAMES / 2;
	xo.mode = XP_XSK_COPY;
	if (area == MAP_FAILED || xp_umem_create(&uo, &u) || xp_xsk_create(u, &xo, &x)) {
		fprintf(stderr, "dpclient: cannot bind an AF_XDP socket to %s\n", ifq);
		goto out;
	}
	if (xp_ring_prod_reserve(&x->fill, RX_FRAMES / 2, &idx) != RX_FRAMES / 2)
		goto out;
	for (__u32 i = 0; i < RX_FRAMES / 2; i++)
		*xp_ring_addr(&x->fill, idx + i) = (__u64)i * RX_FRAME;
	xp_ring_prod_submit(&x->fill);
	xfd = x->fd;
	if (bpf_map_update_elem(map, &q, &xfd, 0)) {
		fprintf(stderr, "dpclient: XSKMAP update at %u: %s\n", q, strerror(errno));
		goto out;
	}
	printf("bound %s, in the map\n", ifq);
	fflush(stdout);
	end = now() + secs;
	while (got < want && now() < end) {
		struct pollfd p = { .fd = x->fd, .events = POLLIN };
		__u32 n, ri, fi;

		if (xp_ring_needs_wakeup(&x->fill))
			xp_xsk_wake_rx(x);
		poll(&p, 1, 50);
		n = xp_ring_cons_peek(&x->rx, 64, &ri);
		if (!n)
			continue;
		if (xp_ring_prod_reserve(&x->fill, n, &fi) == n)
			for (__u32 i = 0; i < n; i++)
				*xp_ring_addr(&x->fill, fi + i) =
					xp_ring_desc(&x->rx, ri + i)->addr & ~(__u64)(RX_FRAME - 1);
		xp_ring_cons_release(&x->rx);
		xp_ring_prod_submit(&x->fill);
		got += (int)n;
	}
	bpf_map_delete_elem(map, &q);
	printf("received %d\n", got);
	rc = got >= want ? 0 : 1;
out:
	xp_xsk_destroy(x);
	if (u)
		xp_umem_destroy(u);
	if (area != MAP_FAILED)
		munmap(area, RX_BYTES);
	close(map);
	return rc;
}

int main(int argc, char **argv)
{
	static char first[8192], cur[8192];
	int n = 1, conc = 1, opt, want = 10;
	const char *rx = NULL;
	double t0, secs = 5;

	while ((opt = getopt(argc, argv, "n:c:R:k:t:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'c')
			conc = atoi(optarg);
		else if (opt == 'R')
			rx = optarg;
		else if (opt == 'k')
			want = atoi(optarg);
		else if (opt == 't')
			secs = atof(optarg);
		else
			return 2;
	}
	if (rx) {
		if (optind != argc - 1) {
			fprintf(stderr, "usage: dpclient -R IF:Q [-k K] [-t SECS] pin:PATH|PATH\n");
			return 2;
		}
		return receive(argv[optind], rx, want, secs);
	}
	if (optind >= argc || n < 1 || conc < 1 || conc > 1000) {
		fprintf(stderr, "usage: dpclient [-n N] [-c N] PATH MSG...\n");
		return 2;
	}
	const char *path = argv[optind];
	int sargc = argc - optind - 1;
	char **sargv = argv + optind + 1;

	t0 = now();
	if (conc > 1) {
		/* All connected first: the server holds them all at once. */
		int *s = calloc((size_t)conc, sizeof(int));

		if (!s)
			return 1;
		for (int i = 0; i < conc; i++)
			if ((s[i] = dial(path)) < 0) {
				free(s);
				return 1;
			}
		for (int i = conc - 1; i >= 0; i--) {
			script(s[i], sargc, sargv, cur, sizeof(cur));
			if (i == conc - 1)
				memcpy(first, cur, sizeof(cur));
			else if (strcmp(first, cur)) {
				printf("connection %d differs:\n%s", i, cur);
				free(s);
				return 1;
			}
		}
		printf("%s%d connections at once\n", first, conc);
		free(s);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int s = dial(path);

		if (s < 0)
			return 1;
		script(s, sargc, sargv, cur, sizeof(cur));
		if (n == 1) {
			fputs(cur, stdout);
			return 0;
		}
		if (!i)
			memcpy(first, cur, sizeof(cur));
		else if (strcmp(first, cur)) {
			printf("run %d differs:\n%s", i, cur);
			return 1;
		}
	}
	printf("%s%d runs in %.3f s\n", first, n, now() - t0);
	return 0;
}
