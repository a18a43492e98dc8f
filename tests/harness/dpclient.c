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
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <bpf/bpf.h>

#include "xpile/handover.h"
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
	return xp_fd_send(s, msg, strlen(msg), &fd, fd >= 0, 0) < 0 ? -1 : 0;
}

/* One reply appended to @out as a line. */
static int recv_reply(int s, char *out, size_t len)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char buf[256];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	m.msg_control = u.b;
	m.msg_controllen = sizeof(u.b);
	n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
	if (n < 0) {
		snprintf(out + strlen(out), len - strlen(out), "error %s\n", strerror(errno));
		return -1;
	}
	if (n == 0) {
		snprintf(out + strlen(out), len - strlen(out), "EOF\n");
		return -1;
	}
	buf[n] = 0;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
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
			 n >= 128 ? " (128 bytes or more!)" : "");
	}
	return 0;
}

static int dial(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (s < 0 || connect(s, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr, "dpclient: connect %s: %s\n", path, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
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

int main(int argc, char **argv)
{
	static char first[8192], cur[8192];
	int n = 1, conc = 1, opt;
	double t0;

	while ((opt = getopt(argc, argv, "n:c:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'c')
			conc = atoi(optarg);
		else
			return 2;
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
