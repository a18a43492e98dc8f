// SPDX-License-Identifier: BSD-3-Clause
/*
 * The AF_XDP sockets of the agent's device-plugin clients and their kernel counters,
 * where the kernel has no xsk_diag (CONFIG_XDP_SOCKETS_DIAG) to list them
 * (metrics.xsk_stats "pidfd"). The agent learns each client's pid from its
 * connection (SO_PEERCRED) when it hands it the XSKMAP and keeps a pidfd, so a
 * reused pid is never taken for the client. At each scrape it lists the client's
 * sockets (/proc/PID/fd), duplicates each (pidfd_getfd, which needs CAP_SYS_PTRACE
 * over a client of another uid), keeps those whose SO_DOMAIN is AF_XDP, reads
 * XDP_STATISTICS and XDP_OPTIONS, and closes the duplicate at once: held, it would
 * keep a dead client's socket bound to its queue.
 *
 * The labels are the interface and queue whose XSK verdicts reach the socket, told
 * by the kernel, not by the client: a socket names neither its interface nor its
 * queue through any getsockopt, but an XDP program may look it up in an XSKMAP. A
 * 28-instruction probe (loaded per interface, run by BPF_PROG_TEST_RUN, never
 * attached) puts the socket in a one-slot map of the agent's, reads its bound queue
 * (struct bpf_xdp_sock.queue_id) and checks that the interface's XSKMAP holds that
 * very socket at that key (a pointer comparison, which CAP_PERFMON allows). A socket
 * that is not in a served XSKMAP is not reported; there is at most one per slot, so
 * the series are bounded by interfaces x queues. A client that exited is dropped
 * (its pidfd polls readable); so are its sockets, which the kernel removed from the
 * map when it closed them.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>

#include "agent.h"
#include "xskdiag.h"
#include "xskpidfd.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define PROBE_MISS 26
/* r7 = data, r3 = data_end of the context in register @ctx; when the packet has less
 * than 8 bytes, a jump @miss instructions past these 5. */
#define PKT_HEAD(ctx, miss)                                      \
	INSN(BPF_LDX | BPF_MEM | BPF_W, 7, (ctx), 0, 0),         \
		INSN(BPF_LDX | BPF_MEM | BPF_W, 3, (ctx), 4, 0), \
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 7, 0, 0),   \
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 8),   \
		INSN(BPF_JMP | BPF_JGT | BPF_X, 4, 3, (miss), 0)
/* r0 = bpf_map_lookup_elem(the map of fd @map, r10 + @off): 5 instructions. */
#define MAP_LOOKUP(map, off)                                                                  \
	INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, (map)), INSN(0, 0, 0, 0, 0), \
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),                               \
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, (off)),                            \
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem)

/* r0 = XDP_PASS when the interface's XSKMAP holds the probe slot's socket at the key
 * of its bound queue, which the probe writes to the first 4 bytes of the packet. */
static int probe_load(int xskmap, int scratch)
{
	const struct bpf_insn p[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0), /* r6 = ctx */
		PKT_HEAD(6, PROBE_MISS - 6),
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), /* key 0 */
		MAP_LOOKUP(scratch, -4),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, PROBE_MISS - 13, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 8, 0, 0, 0), /* r8 = the socket */
		INSN(BPF_LDX | BPF_MEM | BPF_W, 9, 8, 0, 0), /* r9 = its queue_id */
		INSN(BPF_STX | BPF_MEM | BPF_W, 7, 9, 0, 0), /* into the packet */
		INSN(BPF_STX | BPF_MEM | BPF_W, 10, 9, -8, 0), /* and the key */
		MAP_LOOKUP(xskmap, -8),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, PROBE_MISS - 23, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_X, 0, 8, PROBE_MISS - 24, 0), /* another socket */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_DROP), /* PROBE_MISS */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	char log[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xp_xskprobe", "GPL", p, sizeof(p) / sizeof(p[0]),
			       &o);

	if (fd < 0) {
		int err = -errno;
		char *last = strrchr(log, '\n');

		/* The verifier's last line says why (a kernel refusing the comparison). */
		while (last && last > log && last[1] == 0) {
			*last = 0;
			last = strrchr(log, '\n');
		}
		ut_warn("xsk_stats pidfd: the socket probe does not load (%s): %s", strerror(-err),
			last ? last + 1 : log);
		return err;
	}
	return fd;
}

/* r0 = XDP_PASS and the bound queue of the probe slot's socket in the first 4 bytes
 * of the packet: the first half of probe_load's program, for a socket in no map yet
 * (xsksock.c checks what a client asks to insert). */
static int bound_probe_load(int scratch)
{
	const struct bpf_insn p[] = {
		PKT_HEAD(1, 11), /* data + 8 > end: miss */
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0), /* key 0 */
		MAP_LOOKUP(scratch, -4),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4, 0), /* no socket: miss */
		INSN(BPF_LDX | BPF_MEM | BPF_W, 9, 0, 0, 0), /* its queue_id */
		INSN(BPF_STX | BPF_MEM | BPF_W, 7, 9, 0, 0), /* into the packet */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_DROP), /* miss */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xp_xskbound", "GPL", p, sizeof(p) / sizeof(p[0]),
			       NULL);

	if (fd < 0)
		ut_warn("xsk_socket: the bound-queue probe does not load: %s", strerror(errno));
	return fd;
}

static int scratch_map(struct agent *a)
{
	if (a->xsk_scratch_fd < 0)
		a->xsk_scratch_fd =
			bpf_map_create(BPF_MAP_TYPE_XSKMAP, "xp_xskprobe", 4, 4, 1, NULL);
	return a->xsk_scratch_fd;
}

/* Socket @fd in the scratch slot, probe @prog run once over it: the queue it wrote,
 * or -1 (the probe missed, or the socket cannot go in a map). */
static int run_probe(struct agent *a, int prog, int fd)
{
	__u32 key = 0, q;
	unsigned char in[64] = { 0 }, out[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = in, .data_size_in = sizeof(in),
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	int ok;

	if (bpf_map_update_elem(a->xsk_scratch_fd, &key, &fd, BPF_ANY))
		return -1;
	ok = !bpf_prog_test_run_opts(prog, &t) && t.retval == XDP_PASS;
	bpf_map_delete_elem(a->xsk_scratch_fd, &key);
	memcpy(&q, out, sizeof(q));
	return ok ? (int)q : -1;
}

int ag_xsk_bound_queue(struct agent *a, int fd)
{
	if (scratch_map(a) < 0)
		return -1;
	if (a->xsk_bound_fd < 0 && (a->xsk_bound_fd = bound_probe_load(a->xsk_scratch_fd)) < 0)
		return -1;
	return run_probe(a, a->xsk_bound_fd, fd);
}

static int probe_queue(struct agent *a, struct ag_iface *i, int fd);

int ag_xsk_in_map(struct agent *a, struct ag_iface *i, int fd)
{
	return probe_queue(a, i, fd);
}

/* The queue of @i's XSKMAP that delivers to socket @fd: 0.., or -1 when none does. */
static int probe_queue(struct agent *a, struct ag_iface *i, int fd)
{
	if (scratch_map(a) < 0)
		return -1;
	if (!i->probe_loaded) {
		int p = probe_load(xp_steer_xskmap_fd(i->steer), a->xsk_scratch_fd);

		if (p < 0)
			return -1;
		i->probe_fd = p;
		i->probe_loaded = true;
	}
	return run_probe(a, i->probe_fd, fd); /* -1 too for a socket not bound yet */
}

static bool exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

void ag_xsk_client_add(struct agent *a, struct ag_iface *i, int pid)
{
	__u32 k;
	int fd;

	if (pid <= 0)
		return; /* in another pid namespace: not visible from here */
	for (k = 0; k < i->nclients; k++)
		if (i->clients[k].pid == pid && !exited(i->clients[k].pidfd))
			return;
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return;
	for (k = 0; k < i->nclients; k++)
		if (exited(i->clients[k].pidfd))
			break;
	if (k == AG_XSK_CLIENTS)
		k = 0; /* full of live ones: the oldest goes */
	if (k < i->nclients)
		close(i->clients[k].pidfd);
	else
		i->nclients++;
	i->clients[k] = (struct ag_xsk_client){ .pid = pid, .pidfd = fd };
}

void ag_xsk_iface_close(struct agent *a, struct ag_iface *i)
{
	for (__u32 k = 0; k < i->nclients; k++)
		close(i->clients[k].pidfd);
	i->nclients = 0;
	if (i->probe_loaded)
		close(i->probe_fd);
	i->probe_loaded = false;
}

/* The AF_XDP sockets of one client found in @i's XSKMAP, appended to @out. */
static int client_sockets(struct agent *a, struct ag_iface *i, struct ag_xsk_client *c,
			  struct ag_xsk_stat *out, int n, int max, bool *denied)
{
	char dir[64];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", c->pid);
	d = opendir(dir);
	if (!d) {
		*denied |= errno == EACCES || errno == EPERM;
		return n; /* exited meanwhile, or not ours to read */
	}
	while (n < max && (e = readdir(d))) {
		char link[64], path[64 + sizeof(e->d_name)];
		struct xdp_statistics st;
		struct xdp_options opt;
		socklen_t sl = sizeof(st), ol = sizeof(opt), dl;
		int tfd = atoi(e->d_name), fd, dom = 0, q;
		ssize_t len;
		struct stat sb;
		bool seen = false;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		fd = len < 0				    ? -1 :
		     len < 7 || strncmp(link, "socket:", 7) ? -2 :
							      pidfd_getfd(c->pidfd, tfd, 0);
		if (fd == -1 && (errno == EPERM || errno == EACCES)) {
			*denied = true;
			if (!c->warned)
				ut_warn("xsk_stats pidfd: cannot read the sockets of pid %d (%s: %s): the agent needs CAP_SYS_PTRACE over its clients",
					c->pid, len < 0 ? "readlink" : "pidfd_getfd",
					strerror(errno));
			c->warned = true;
			break;
		}
		if (fd < 0)
			continue;
		dl = sizeof(dom);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) || dom != AF_XDP ||
		    fstat(fd, &sb)) {
			close(fd);
			continue;
		}
		/* A socket two clients share (fork) or held twice is counted once. */
		for (int k = 0; k < n; k++)
			seen |= out[k].ino == sb.st_ino;
		q = seen ? -1 : probe_queue(a, i, fd);
		if (q >= 0 && !getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &sl)) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].ifindex = i->ifindex;
			out[n].queue = (__u32)q;
			out[n].ino = sb.st_ino;
			out[n].st.n_rx_dropped = st.rx_dropped;
			out[n].st.n_rx_invalid = st.rx_invalid_descs;
			out[n].st.n_rx_full = st.rx_ring_full;
			out[n].st.n_fill_ring_empty = st.rx_fill_ring_empty_descs;
			out[n].st.n_tx_invalid = st.tx_invalid_descs;
			out[n].st.n_tx_ring_empty = st.tx_ring_empty_descs;
			out[n].have_zc = !getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opt, &ol);
			out[n].zc = out[n].have_zc && (opt.flags & XDP_OPTIONS_ZEROCOPY);
			n++;
		}
		close(fd); /* at once: a held duplicate keeps a dead client's queue bound */
	}
	closedir(d);
	return n;
}

int ag_xsk_pidfd(struct agent *a, struct ag_xsk_stat *out, int max, bool *denied)
{
	int n = 0;

	*denied = false;
	for (int k = 0; k < AG_MAX_IFACES; k++) {
		struct ag_iface *i = &a->ifaces[k];

		for (__u32 c = 0; i->used && c < i->nclients;) {
			if (exited(i->clients[c].pidfd)) {
				close(i->clients[c].pidfd);
				i->clients[c] = i->clients[--i->nclients];
				continue;
			}
			n = client_sockets(a, i, &i->clients[c], out, n, max, denied);
			c++;
		}
	}
	return n;
}
