// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rtnetlink mirror (xpile/fib_nl.h): two libmnl sockets, one subscribed to the
 * route, neighbour, address and link groups (non-blocking, polled by the caller), one
 * for dumps. Each message becomes one xp_fib call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "fib_internal.h"
#include "fib_nl_internal.h"
#include "log_internal.h"
#include "opts_internal.h"
#include "xpile/fib_nl.h"

#ifndef RTA_NH_ID
#define RTA_NH_ID 30
#endif
#ifndef SO_RCVBUFFORCE
#define SO_RCVBUFFORCE 33
#endif

/* One notification is one skb; a dump fills what it is given. */
#define BUF_SIZE (256u << 10)
#define MAX_PATHS 256u

struct link_state {
	__u32 ifindex;
	bool up;
};

struct xp_fib_nl {
	struct xp_fib *fib;
	struct mnl_socket *ev, *dump;
	__u32 table;
	__u32 seq;
	char *buf;
	struct link_state *links;
	__u32 nlinks, caplinks;
	bool dumping; /* counting into st.dumped */
	struct xp_fib_nl_stats st;
};

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000000000ull + (__u64)t.tv_nsec;
}

static int family_len(__u8 family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* ---- routes ---- */

struct route_attrs {
	const struct nlattr *tb[RTA_MAX + 1];
};

struct attr_tab {
	const struct nlattr **tb;
	__u16 max;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct attr_tab *t = data;

	/* A kernel newer than our headers may send types above max: skipped. */
	if (mnl_attr_type_valid(a, t->max) > 0)
		t->tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* The attributes after @nlh's family header of @hdrlen bytes, by type into tb[0..max]. */
static int attrs_parse(const struct nlmsghdr *nlh, size_t hdrlen, const struct nlattr **tb,
		       __u16 max)
{
	struct attr_tab t = { .tb = tb, .max = max };

	return mnl_attr_parse(nlh, (unsigned int)hdrlen, attr_cb, &t) < 0 ? -EINVAL : 0;
}

/* A gateway attribute into @p: false when it is not an address of @family. */
static bool take_gw(const struct nlattr *a, __u8 family, struct xp_fib_path *p)
{
	int len = family_len(family);

	if (mnl_attr_get_payload_len(a) != (__u16)len)
		return false;
	memcpy(p->gw, mnl_attr_get_payload(a), (size_t)len);
	p->has_gw = true;
	return true;
}

static int route_msg(struct xp_fib_nl *m, const struct nlmsghdr *nlh)
{
	const struct rtmsg *rm = mnl_nlmsg_get_payload(nlh);
	struct route_attrs ra = { 0 };
	struct xp_fib_route r = { 0 };
	struct xp_fib_path paths[MAX_PATHS];
	__u32 n = 0, table;
	int len, err;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rm)))
		return -EINVAL;
	len = family_len(rm->rtm_family);
	if (!len || (rm->rtm_flags & RTM_F_CLONED)) {
		m->st.ignored++;
		return 0;
	}
	if (attrs_parse(nlh, sizeof(*rm), ra.tb, RTA_MAX))
		return -EINVAL;
	table = ra.tb[RTA_TABLE] ? mnl_attr_get_u32(ra.tb[RTA_TABLE]) : rm->rtm_table;
	if (table != m->table) {
		m->st.ignored++;
		return 0;
	}
	r.family = rm->rtm_family;
	r.dst_len = rm->rtm_dst_len;
	r.type = rm->rtm_type;
	r.tos = rm->rtm_tos;
	if (r.dst_len > 8 * len)
		return -EINVAL;
	if (ra.tb[RTA_DST]) {
		if (mnl_attr_get_payload_len(ra.tb[RTA_DST]) != (__u16)len)
			return -EINVAL;
		memcpy(r.dst, mnl_attr_get_payload(ra.tb[RTA_DST]), (size_t)len);
	}
	if (ra.tb[RTA_PRIORITY])
		r.priority = mnl_attr_get_u32(ra.tb[RTA_PRIORITY]);
	if (ra.tb[RTA_ENCAP] || ra.tb[RTA_ENCAP_TYPE])
		r.unsupported = XP_FIB_U_ENCAP;
	else if (ra.tb[RTA_NH_ID])
		r.unsupported = XP_FIB_U_NH_ID;
	else if (ra.tb[RTA_VIA])
		r.unsupported = XP_FIB_U_VIA;
	if (ra.tb[RTA_MULTIPATH]) {
		const struct rtnexthop *nh = mnl_attr_get_payload(ra.tb[RTA_MULTIPATH]);
		int left = mnl_attr_get_payload_len(ra.tb[RTA_MULTIPATH]);

		while (left >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) &&
		       nh->rtnh_len <= left) {
			struct xp_fib_path *p = &paths[n];
			const struct nlattr *a;
			int alen = nh->rtnh_len - (int)RTNH_ALIGN(sizeof(*nh));

			if (n == MAX_PATHS) {
				r.unsupported = XP_FIB_U_WIDE;
				break;
			}
			memset(p, 0, sizeof(*p));
			p->ifindex = (__u32)nh->rtnh_ifindex;
			p->weight = (__u16)(nh->rtnh_hops + 1);
			p->dead = nh->rtnh_flags & RTNH_F_DEAD;
			for (a = (const struct nlattr *)RTNH_DATA(nh); mnl_attr_ok(a, alen);
			     a = mnl_attr_next(a)) {
				alen -= (int)MNL_ALIGN(a->nla_len);
				switch (mnl_attr_get_type(a)) {
				case RTA_GATEWAY:
					if (!take_gw(a, r.family, p))
						return -EINVAL;
					break;
				case RTA_VIA:
					r.unsupported = XP_FIB_U_VIA;
					break;
				case RTA_ENCAP:
				case RTA_ENCAP_TYPE:
					r.unsupported = XP_FIB_U_ENCAP;
					break;
				}
			}
			n++;
			left -= (int)RTNH_ALIGN(nh->rtnh_len);
			nh = RTNH_NEXT(nh);
		}
	} else if (ra.tb[RTA_OIF] || ra.tb[RTA_GATEWAY]) {
		memset(&paths[0], 0, sizeof(paths[0]));
		paths[0].weight = 1;
		if (ra.tb[RTA_OIF])
			paths[0].ifindex = mnl_attr_get_u32(ra.tb[RTA_OIF]);
		if (ra.tb[RTA_GATEWAY] && !take_gw(ra.tb[RTA_GATEWAY], r.family, &paths[0]))
			return -EINVAL;
		n = 1;
	}
	if (nlh->nlmsg_type == RTM_NEWROUTE) {
		__u32 flags = (nlh->nlmsg_flags & NLM_F_REPLACE ? XP_FIB_REPLACE : 0) |
			      (nlh->nlmsg_flags & NLM_F_APPEND ? XP_FIB_APPEND : 0);

		m->st.newroute++;
		return xp_fib_route_add(m->fib, &r, paths, n, flags);
	}
	m->st.delroute++;
	err = xp_fib_route_del(m->fib, &r, paths, n);
	/* Already gone with its link (IPv4 flushes, IPv6 tells): nothing to do. */
	return err == -ENOENT ? 0 : err;
}

/* ---- neighbours, addresses, links ---- */

static int neigh_msg(struct xp_fib_nl *m, const struct nlmsghdr *nlh)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NDA_MAX + 1] = { 0 };
	const __u8 *mac = NULL;
	int len;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*nd)))
		return -EINVAL;
	len = family_len(nd->ndm_family);
	if (!len || (nd->ndm_flags & NTF_PROXY)) {
		m->st.ignored++;
		return 0;
	}
	if (attrs_parse(nlh, sizeof(*nd), tb, NDA_MAX) || !tb[NDA_DST] ||
	    mnl_attr_get_payload_len(tb[NDA_DST]) != (__u16)len)
		return -EINVAL;
	if (tb[NDA_LLADDR] && mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6)
		mac = mnl_attr_get_payload(tb[NDA_LLADDR]);
	if (nlh->nlmsg_type == RTM_NEWNEIGH) {
		m->st.newneigh++;
		return xp_fib_neigh_set(m->fib, nd->ndm_family, mnl_attr_get_payload(tb[NDA_DST]),
					(__u32)nd->ndm_ifindex, nd->ndm_state, mac);
	}
	m->st.delneigh++;
	len = xp_fib_neigh_del(m->fib, nd->ndm_family, mnl_attr_get_payload(tb[NDA_DST]),
			       (__u32)nd->ndm_ifindex);
	return len == -ENOENT ? 0 : len;
}

static int addr_msg(struct xp_fib_nl *m, const struct nlmsghdr *nlh)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IFA_MAX + 1] = { 0 }, *a;
	int len, err;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifa)))
		return -EINVAL;
	len = family_len(ifa->ifa_family);
	if (!len) {
		m->st.ignored++;
		return 0;
	}
	if (attrs_parse(nlh, sizeof(*ifa), tb, IFA_MAX))
		return -EINVAL;
	/* IFA_LOCAL is ours; IFA_ADDRESS is the peer on a point-to-point link. */
	a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (!a || mnl_attr_get_payload_len(a) != (__u16)len)
		return -EINVAL;
	if (nlh->nlmsg_type == RTM_NEWADDR) {
		m->st.newaddr++;
		return xp_fib_addr_add(m->fib, ifa->ifa_family, mnl_attr_get_payload(a),
				       ifa->ifa_index);
	}
	m->st.deladdr++;
	err = xp_fib_addr_del(m->fib, ifa->ifa_family, mnl_attr_get_payload(a), ifa->ifa_index);
	return err == -ENOENT ? 0 : err;
}

static struct link_state *link_find(struct xp_fib_nl *m, __u32 ifindex)
{
	for (__u32 i = 0; i < m->nlinks; i++)
		if (m->links[i].ifindex == ifindex)
			return &m->links[i];
	return NULL;
}

static int link_msg(struct xp_fib_nl *m, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	bool up, gone = nlh->nlmsg_type == RTM_DELLINK;
	struct link_state *l;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return -EINVAL;
	up = ifi->ifi_flags & IFF_UP;
	if (gone)
		m->st.dellink++;
	else
		m->st.newlink++;
	l = link_find(m, (__u32)ifi->ifi_index);
	if (!l) {
		if (gone)
			return 0;
		if (m->nlinks == m->caplinks) {
			__u32 cap = m->caplinks ? 2 * m->caplinks : 16;
			struct link_state *v = realloc(m->links, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			m->links = v;
			m->caplinks = cap;
		}
		l = &m->links[m->nlinks++];
		*l = (struct link_state){ .ifindex = (__u32)ifi->ifi_index, .up = up };
		/* First seen down: routes through it are gone already (dump) or never
		 * announced; nothing to flush. */
		return 0;
	}
	if (gone)
		up = false;
	if (l->up != up) {
		l->up = up;
		xp_fib_link_set(m->fib, l->ifindex, up);
	}
	if (gone)
		*l = m->links[--m->nlinks];
	return 0;
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct xp_fib_nl *m = data;
	int err;

	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		err = route_msg(m, nlh);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		err = neigh_msg(m, nlh);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		err = addr_msg(m, nlh);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		err = link_msg(m, nlh);
		break;
	default:
		m->st.ignored++;
		return MNL_CB_OK;
	}
	if (err)
		m->st.errors++;
	if (m->dumping)
		m->st.dumped++;
	else
		m->st.msgs++;
	return MNL_CB_OK;
}

/*
 * The well-formed head of @buf: whole messages whose lengths fit what is left. libmnl's
 * own check reads a length of 2^31 or more as negative and walks off the buffer; the
 * kernel never sends one, but nothing that reaches the FIB is taken on trust.
 */
static size_t well_formed(const void *buf, size_t len)
{
	size_t off = 0;

	while (len - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *h = (const void *)((const char *)buf + off);

		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > len - off)
			break;
		off += MNL_ALIGN(h->nlmsg_len) < len - off ? MNL_ALIGN(h->nlmsg_len) : len - off;
	}
	return off;
}

static int run_msgs(struct xp_fib_nl *m, const void *buf, size_t len, __u32 seq, __u32 portid)
{
	return mnl_cb_run(buf, well_formed(buf, len), seq, portid, msg_cb, m);
}

/* ---- dumps ---- */

static int dump_one(struct xp_fib_nl *m, __u16 type)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rtgenmsg *g;
	__u32 seq = ++m->seq, portid = mnl_socket_get_portid(m->dump);
	ssize_t n;
	int rc;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	if (mnl_socket_sendto(m->dump, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	m->dumping = true;
	do {
		n = mnl_socket_recvfrom(m->dump, m->buf, BUF_SIZE);
		if (n < 0) {
			rc = -errno;
			if (rc == -EINTR)
				continue;
			m->dumping = false;
			return rc;
		}
		rc = run_msgs(m, m->buf, (size_t)n, seq, portid);
	} while (rc > MNL_CB_STOP);
	m->dumping = false;
	return rc < 0 ? -errno : 0;
}

static void resolve_gateways(struct xp_fib_nl *m);

static int dump_all(struct xp_fib_nl *m)
{
	static const __u16 what[] = { RTM_GETLINK, RTM_GETADDR, RTM_GETNEIGH, RTM_GETROUTE };
	int err;

	xp_fib_resync_begin(m->fib, XP_FIB_SYNC_ROUTES | XP_FIB_SYNC_NEIGHS | XP_FIB_SYNC_ADDRS);
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		err = dump_one(m, what[i]);
		if (err) {
			/* Keep what we had: a half dump must not sweep the rest away. */
			xp_fib_resync_begin(m->fib, 0);
			xp_fib_resync_end(m->fib);
			xp_err("fib_nl: dump %u: %s\n", what[i], strerror(-err));
			return err;
		}
	}
	xp_fib_resync_end(m->fib);
	err = xp_fib_commit(m->fib);
	resolve_gateways(m);
	return err;
}

/*
 * The gateways the FIB queued (xp_fib_opts.resolve_gateways): each is "used" as
 * `ip neigh replace GW dev IF use` does, so the kernel resolves it as if it sent there
 * (an entry INCOMPLETE, then REACHABLE: the notifications bring them back). Each
 * request is acknowledged on the dump socket before the next; a refusal (the interface
 * went meanwhile) is only skipped.
 */
static void resolve_gateways(struct xp_fib_nl *m)
{
	struct xp_fib_gw gw[32];
	__u32 n, i;

	if (!m->dump)
		return;
	while ((n = xp_fib_resolve_take(m->fib, gw, 32))) {
		for (i = 0; i < n; i++) {
			char req[256];
			struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
			struct ndmsg *nd;
			__u32 seq = ++m->seq, portid = mnl_socket_get_portid(m->dump);
			ssize_t got;

			nlh->nlmsg_type = RTM_NEWNEIGH;
			nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
			nlh->nlmsg_seq = seq;
			nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
			nd->ndm_family = gw[i].family;
			nd->ndm_ifindex = (int)gw[i].ifindex;
			nd->ndm_state = NUD_PERMANENT; /* ignored with NTF_USE, as ip(8) sends it */
			nd->ndm_flags = NTF_USE;
			mnl_attr_put(nlh, NDA_DST, (size_t)family_len(gw[i].family), gw[i].addr);
			if (mnl_socket_sendto(m->dump, nlh, nlh->nlmsg_len) < 0)
				continue;
			do
				got = mnl_socket_recvfrom(m->dump, m->buf, BUF_SIZE);
			while (got < 0 && errno == EINTR);
			if (got > 0)
				(void)mnl_cb_run(m->buf, (size_t)got, seq, portid, NULL, NULL);
		}
	}
}

/* Drops what is queued: the dump that follows supersedes it. */
static void drain(struct xp_fib_nl *m)
{
	while (recv(mnl_socket_get_fd(m->ev), m->buf, BUF_SIZE, MSG_DONTWAIT) > 0 ||
	       errno == ENOBUFS || errno == EINTR)
		;
}

int xp_fib_nl_resync(struct xp_fib_nl *m)
{
	if (!m)
		return -EINVAL;
	m->st.resyncs++;
	drain(m);
	return dump_all(m);
}

int xp_fib_nl_process(struct xp_fib_nl *m, __u32 budget)
{
	__u64 t0 = 0;
	int done = 0, err = 0;
	bool lost = false;

	if (!m)
		return -EINVAL;
	for (;;) {
		ssize_t n;
		__u64 before = m->st.msgs;

		if (budget && (__u32)done >= budget)
			break;
		n = recv(mnl_socket_get_fd(m->ev), m->buf, BUF_SIZE, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (errno == ENOBUFS) {
				m->st.enobufs++;
				lost = true;
				continue;
			}
			err = -errno;
			break;
		}
		if (!t0)
			t0 = now_ns();
		/* Notifications carry sequence 0 and port 0 (the kernel). */
		run_msgs(m, m->buf, (size_t)n, 0, 0);
		done += (int)(m->st.msgs - before);
	}
	if (lost) {
		int rc = xp_fib_nl_resync(m);

		if (rc && !err)
			err = rc;
	}
	if (t0) {
		__u64 dt;

		xp_fib_commit(m->fib);
		dt = now_ns() - t0;
		m->st.batches++;
		m->st.apply_ns_last = dt;
		m->st.apply_ns_total += dt;
		if (dt > m->st.apply_ns_max)
			m->st.apply_ns_max = dt;
		resolve_gateways(m); /* after the flip: not in the time a change takes */
	}
	return err ? err : done;
}

int xp_fib_nl_fd(const struct xp_fib_nl *m)
{
	return m ? mnl_socket_get_fd(m->ev) : -EINVAL;
}

void xp_fib_nl_stats(const struct xp_fib_nl *m, struct xp_fib_nl_stats *st)
{
	if (m && st)
		*st = m->st;
}

void xp_fib_nl_close(struct xp_fib_nl *m)
{
	if (!m)
		return;
	if (m->ev)
		mnl_socket_close(m->ev);
	if (m->dump)
		mnl_socket_close(m->dump);
	free(m->buf);
	free(m->links);
	free(m);
}

static int sock_open(struct mnl_socket **s, unsigned int groups)
{
	*s = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!*s)
		return -errno;
	if (mnl_socket_bind(*s, groups, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	return 0;
}

struct xp_fib_nl *xp_fib_nl_detached(struct xp_fib *fib, __u32 table)
{
	struct xp_fib_nl *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fib = fib;
	m->table = table ? table : RT_TABLE_MAIN;
	m->buf = malloc(BUF_SIZE);
	if (!m->buf) {
		free(m);
		return NULL;
	}
	return m;
}

void xp_fib_nl_feed(struct xp_fib_nl *m, const void *buf, size_t len)
{
	run_msgs(m, buf, len, 0, 0);
	xp_fib_commit(m->fib);
}

int xp_fib_nl_open(struct xp_fib *fib, const struct xp_fib_nl_opts *opts, struct xp_fib_nl **out)
{
	struct xp_fib_nl_opts o;
	struct xp_fib_nl *m;
	int err, fd, rcv;

	if (!XP_OPTS_LOAD_LOG("fib_nl", &o, opts, xp_fib_nl_opts))
		return -EINVAL;
	if (!fib || !out)
		return -EINVAL;
	m = xp_fib_nl_detached(fib, o.table);
	if (!m)
		return -ENOMEM;
	/* Subscribed before the dump: nothing that changes meanwhile is missed. */
	err = sock_open(&m->ev, RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR |
					RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE);
	if (err) {
		xp_err("fib_nl: rtnetlink notification socket: %s\n", strerror(-err));
		goto fail;
	}
	fd = mnl_socket_get_fd(m->ev);
	rcv = (int)(o.rcvbuf ? o.rcvbuf : 64u << 20);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		/* Without CAP_NET_ADMIN: as much as net.core.rmem_max allows. */
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		err = -errno;
		goto fail;
	}
	err = sock_open(&m->dump, 0);
	if (err) {
		xp_err("fib_nl: rtnetlink dump socket: %s\n", strerror(-err));
		goto fail;
	}
	err = dump_all(m);
	if (err)
		goto fail;
	*out = m;
	return 0;
fail:
	xp_fib_nl_close(m);
	return err;
}
