// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench lpm --netlink: the rtnetlink mirror (xpile/fib_nl.h) in a network
 * namespace of the bench's own (unshare: it goes with the process, nothing to clean
 * up). For each route count: `ip -force -batch` adds that many routes (the BGP-like
 * shape; destinations outside 198.18.0.0/15 exist only in this namespace, no packet is
 * sent anywhere) while the mirror follows, polled like a router's control thread
 * would; then single route changes sent on a socket of our own, each timed from the
 * send to the mirror's commit and to the first lookup of a reader thread that sees
 * the new answer; then `ip -batch` deletes them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <unistd.h>

#include "benchutil.h"
#include "lpm_bench.h"
#include "xpile/fib.h"
#include "xpile/fib_nl.h"
#include "xpile/log.h"

#define PROBE 0xcb007100u /* 203.0.113.0/24, the route the changes flip */

struct reader {
	struct xp_fib *fib;
	struct xp_qsbr *q;
	atomic_bool stop;
	atomic_int port; /* the port it last saw for the probe, -1 punt */
	atomic_ullong seen_ns; /* when it first saw that */
	pthread_t th;
};

static void *reader_run(void *arg)
{
	struct reader *r = arg;
	__u32 id;
	int last = -2;

	if (xp_qsbr_register(r->q, &id))
		return NULL;
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (int i = 0; i < 32; i++) {
			struct xp_fib_out o;
			int p = xp_fib_lookup4(r->fib, PROBE + 1, 0, &o) == XP_FIB_FWD ? o.port :
											 -1;

			if (p != last) {
				atomic_store(&r->seen_ns, (unsigned long long)bench_now_ns());
				atomic_store(&r->port, p);
				last = p;
			}
		}
		xp_qsbr_quiescent(r->q, id);
	}
	xp_qsbr_unregister(r->q, id);
	return NULL;
}

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "xpile-bench lpm: '%s' failed (%d)\n", cmd, rc);
	return rc;
}

static double rss_mib(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	double kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtod(line + 6, NULL);
	(void)fclose(f);
	return kb / 1024;
}

static int write_batch(const char *path, const struct route4 *r, __u32 n, const char *verb)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (__u32 i = 0; i < n; i++)
		fprintf(f, "route %s %u.%u.%u.%u/%u via 198.18.1.2\n", verb, r[i].addr >> 24,
			(r[i].addr >> 16) & 0xff, (r[i].addr >> 8) & 0xff, r[i].addr & 0xff,
			r[i].depth);
	return fclose(f);
}

static pid_t spawn_batch(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);

		/* Duplicates of the connected and probe routes are refused: -force goes on. */
		dup2(nul, 2);
		execlp("ip", "ip", "-force", "-batch", path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Polls and processes until the FIB holds @want IPv4 routes and @pid has exited. */
static int follow(struct xp_fib_nl *nl, struct xp_fib *fib, __u64 want, pid_t pid, double *ip_ms,
		  double *conv_ms, double t0, __u32 budget)
{
	bool ip_done = false;

	*ip_ms = *conv_ms = 0;
	for (;;) {
		struct pollfd p = { .fd = xp_fib_nl_fd(nl), .events = POLLIN };
		struct xp_fib_stats st;
		int status;

		poll(&p, 1, 10);
		if (xp_fib_nl_process(nl, budget) < 0)
			return -1;
		if (!ip_done && waitpid(pid, &status, WNOHANG) == pid) {
			ip_done = true;
			*ip_ms = (bench_now_ns() - t0) / 1e6;
		}
		xp_fib_stats(fib, &st);
		if (!*conv_ms && st.routes[0] == want)
			*conv_ms = (bench_now_ns() - t0) / 1e6;
		if (*conv_ms && ip_done)
			return 0;
		if (bench_now_ns() - t0 > 600e9) {
			fprintf(stderr,
				"xpile-bench lpm: the mirror holds %llu routes, %llu expected\n",
				(unsigned long long)st.routes[0], (unsigned long long)want);
			return -1;
		}
	}
}

/* RTM_NEWROUTE (replace) of the probe /24 via @gw, on our own socket, no ack. */
static int send_probe(struct mnl_socket *s, __u32 gw, __u32 seq)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rm;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
	nlh->nlmsg_seq = seq;
	rm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rm));
	rm->rtm_family = AF_INET;
	rm->rtm_dst_len = 24;
	rm->rtm_table = RT_TABLE_MAIN;
	rm->rtm_protocol = RTPROT_STATIC;
	rm->rtm_scope = RT_SCOPE_UNIVERSE;
	rm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_DST, htonl(PROBE));
	mnl_attr_put_u32(nlh, RTA_GATEWAY, htonl(gw));
	return mnl_socket_sendto(s, nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
}

static double pct(double *v, __u32 n, double p)
{
	bench_median(v, n);
	return v[(__u32)(p * (n - 1) + 0.5)];
}

static int changes(const struct lpm_nl_args *a, struct xp_fib_nl *nl, struct reader *rd,
		   const char *tag)
{
	struct mnl_socket *s = mnl_socket_open(NETLINK_ROUTE);
	double *e2e = malloc(a->changes * sizeof(*e2e)), *app = malloc(a->changes * sizeof(*app));
	__u32 ok = 0;

	if (!s || !e2e || !app || mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "xpile-bench lpm: rtnetlink socket: %s\n", strerror(errno));
		if (s)
			mnl_socket_close(s);
		free(e2e);
		free(app);
		return -1;
	}
	for (__u32 i = 0; i < a->changes; i++) {
		int want = (int)(i & 1);
		double t0 = bench_now_ns();
		struct xp_fib_nl_stats ns;
		__u64 before;

		xp_fib_nl_stats(nl, &ns);
		before = ns.batches;
		if (send_probe(s, want ? 0xc6120202u : 0xc6120102u, i + 1))
			break;
		while (atomic_load(&rd->port) != want && bench_now_ns() - t0 < 1e9) {
			struct pollfd p = { .fd = xp_fib_nl_fd(nl), .events = POLLIN };

			poll(&p, 1, 1);
			xp_fib_nl_process(nl, 0);
		}
		if (atomic_load(&rd->port) != want)
			continue;
		xp_fib_nl_stats(nl, &ns);
		e2e[ok] = ((double)atomic_load(&rd->seen_ns) - t0) / 1e3;
		app[ok++] = ns.batches > before ? (double)ns.apply_ns_last / 1e3 : 0;
	}
	mnl_socket_close(s);
	if (ok)
		printf("fib_nl change %s changes=%u e2e_median_us=%.1f e2e_p99_us=%.1f "
		       "mirror_median_us=%.1f mirror_p99_us=%.1f\n",
		       tag, ok, pct(e2e, ok, 0.5), pct(e2e, ok, 0.99), pct(app, ok, 0.5),
		       pct(app, ok, 0.99));
	else
		fprintf(stderr, "xpile-bench lpm: no route change reached the reader\n");
	free(e2e);
	free(app);
	return ok ? 0 : -1;
}

static int run_one(const struct lpm_nl_args *a, __u32 n, bool inplace, const char *path)
{
	struct route4 *r = lpm_bench_routes4(n, DIST_BGP, 0x5eed0000u + n);
	XP_OPTS(xp_fib_opts, fo, .hugepages = a->hp, .inplace = inplace, .routes_hint = n);
	struct reader rd = { .port = -2 };
	struct xp_fib_stats st;
	struct xp_fib_nl_stats ns;
	struct xp_fib_nl *nl = NULL;
	struct xp_fib *fib = NULL;
	double t0, ip_ms, conv_ms, mem0;
	char tag[64];
	__u64 base;
	int rc = -1;
	pid_t pid;

	if (!r || write_batch(path, r, n, "add"))
		goto out;
	snprintf(tag, sizeof(tag), "routes=%u sync=%s", n, inplace ? "inplace" : "double");
	fo.lpm4_groups = lpm_bench_groups4(r, n) + 1024;
	if (xp_qsbr_create(4, &rd.q))
		goto out;
	fo.qsbr = rd.q;
	mem0 = rss_mib();
	if (xp_fib_create(&fo, &fib) || xp_fib_port_set(fib, if_nametoindex("va"), 0) ||
	    xp_fib_port_set(fib, if_nametoindex("vc"), 1) || xp_fib_nl_open(fib, NULL, &nl)) {
		fprintf(stderr, "xpile-bench lpm: cannot create the FIB or its mirror\n");
		goto out;
	}
	rd.fib = fib;
	if (pthread_create(&rd.th, NULL, reader_run, &rd))
		goto out;
	xp_fib_stats(fib, &st);
	base = st.routes[0];
	t0 = bench_now_ns();
	pid = spawn_batch(path);
	if (pid < 0 || follow(nl, fib, base + n, pid, &ip_ms, &conv_ms, t0, a->budget))
		goto stop;
	xp_fib_stats(fib, &st);
	xp_fib_nl_stats(nl, &ns);
	printf("fib_nl load %s ip_ms=%.0f converge_ms=%.0f lag_ms=%.0f fib_mib=%.1f rss_mib=%.1f "
	       "notifications=%llu batches=%llu enobufs=%llu resyncs=%llu apply_max_ms=%.2f\n",
	       tag, ip_ms, conv_ms, conv_ms - ip_ms,
	       (st.lpm[0].bytes + st.lpm[1].bytes) / 1048576.0, rss_mib() - mem0,
	       (unsigned long long)ns.msgs, (unsigned long long)ns.batches,
	       (unsigned long long)ns.enobufs, (unsigned long long)ns.resyncs,
	       ns.apply_ns_max / 1e6);
	if (changes(a, nl, &rd, tag))
		goto stop;
	if (write_batch(path, r, n, "del"))
		goto stop;
	t0 = bench_now_ns();
	pid = spawn_batch(path);
	if (pid < 0 || follow(nl, fib, base + 1, pid, &ip_ms, &conv_ms, t0, a->budget))
		goto stop;
	printf("fib_nl delete %s ip_ms=%.0f converge_ms=%.0f\n", tag, ip_ms, conv_ms);
	rc = 0;
	if (sh("ip route del 203.0.113.0/24"))
		rc = -1;
stop:
	atomic_store(&rd.stop, true);
	pthread_join(rd.th, NULL);
out:
	xp_fib_nl_close(nl);
	xp_fib_destroy(fib);
	xp_qsbr_destroy(rd.q);
	free(r);
	return rc;
}

static int quiet_log(enum xp_log_level level, const char *fmt, va_list ap)
{
	return level <= XP_LOG_ERR ? vfprintf(stderr, fmt, ap) : 0;
}

int lpm_bench_netlink(const struct lpm_nl_args *a)
{
	char path[] = "/tmp/xpile-bench-lpm-XXXXXX";
	int fd, rc = 0;

	if (geteuid()) {
		fprintf(stderr, "xpile-bench lpm --netlink: needs root (a network namespace of its "
				"own, ip route): run it with sudo\n");
		return 1;
	}
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "xpile-bench lpm --netlink: unshare(CLONE_NEWNET): %s\n",
			strerror(errno));
		return 1;
	}
	if (sh("ip link set lo up && ip link add va type veth peer name vb && "
	       "ip link add vc type veth peer name vd && "
	       "for i in va vb vc vd; do ip link set $i up; done && "
	       "ip addr add 198.18.1.1/24 dev va && ip addr add 198.18.2.1/24 dev vc && "
	       "ip neigh add 198.18.1.2 lladdr 02:00:00:00:01:02 dev va nud permanent && "
	       "ip neigh add 198.18.2.2 lladdr 02:00:00:00:02:02 dev vc nud permanent"))
		return 1;
	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	if (a->hp == XP_HUGE_AUTO)
		xp_set_log_fn(quiet_log);
	printf("fib_nl loadavg=%s changes=%u budget=%u\n", bench_loadavg(), a->changes, a->budget);
	for (__u32 i = 0; i < a->nroutes && !rc; i++) {
		if (a->inplace && run_one(a, a->routes[i], true, path))
			rc = 1;
		if (!rc && a->dbl && run_one(a, a->routes[i], false, path))
			rc = 1;
	}
	unlink(path);
	return rc;
}
