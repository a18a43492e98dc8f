// SPDX-License-Identifier: BSD-3-Clause
/*
 * The FIB (xpile/fib.h): the kernel's routes, neighbours and addresses as prefixes of
 * two LPM tables whose hops are nexthop ids, ECMP group ids or punt/drop reasons.
 *
 * - A node is one prefix (family, length, bits). It holds the routes of that prefix
 *   (IPv4 aliases and metrics, IPv6 metrics; best first), how many local addresses it
 *   is, and the neighbour it is the host route of. What it installs is composed in
 *   that order of precedence: local, neighbour, best route.
 * - Nexthops (family, address, ifindex) and groups (sorted members) are shared and
 *   counted; an id whose count drops to zero waits for the commit after it and a
 *   grace period before it is handed out again.
 * - Usable neighbours are also kept sorted by address, so a route change finds the
 *   ones under its prefix and decides again whether each gets a host route.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "fib_internal.h"
#include "hmap_internal.h"
#include "log_internal.h"
#include "opts_internal.h"

#define NONE XP_LPM_MISS /* a node's "installs nothing" */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)

struct fib_path {
	__u8 gw[16];
	__u32 ifindex;
	__u16 weight;
	bool has_gw;
	bool dead;
};

struct fib_route {
	struct fib_route *next; /* best first: priority, then alias order */
	__u32 priority;
	__u8 tos, type;
	__u8 unsup; /* as given */
	__u8 ueff; /* as counted: given, or found when its hop was made */
	__u32 gen;
	__u32 hop; /* holds a reference on its nexthop or group */
	__u32 npaths;
	struct fib_path path[];
};

struct fib_neigh;

struct fib_node {
	struct xp_hnode h;
	__u8 fam; /* 0 IPv4, 1 IPv6 */
	__u8 len;
	__u8 key[16];
	struct fib_route *routes;
	__u32 local_refs;
	struct fib_neigh *host; /* the neighbour this is the host route of */
	__u32 installed; /* the hop in the LPM, or NONE */
	bool busy; /* being changed: not freed from below (its own host route going) */
};

struct fib_nh {
	struct xp_hnode h;
	__u8 fam;
	__u8 addr[16];
	__u32 ifindex;
	__u32 id, refs;
};

struct fib_member {
	__u32 nh;
	__u32 weight;
};

struct fib_group {
	struct xp_hnode h;
	__u32 id, refs, n;
	struct fib_member m[]; /* sorted by nexthop id: the key */
};

struct fib_neigh {
	struct xp_hnode h;
	__u8 fam;
	__u8 addr[16];
	__u32 ifindex;
	__u16 nud;
	bool usable;
	bool has_mac;
	__u8 mac[6];
	__u32 gen;
	struct fib_nh *host_nh; /* non-NULL while it has a host route */
};

struct fib_addr {
	struct xp_hnode h;
	__u8 fam;
	__u8 addr[16];
	__u32 ifindex;
	__u32 gen;
};

struct fib_if {
	struct xp_hnode h;
	__u32 ifindex;
	int port; /* -1: none */
};

/* Ids freed since the last commit, and those waiting out a grace period. */
struct idpool {
	__u32 *free, nfree, max;
	__u32 *pending, npending;
	struct {
		__u32 id;
		xp_qsbr_token token;
	} * wait;
	__u32 whead, wlen;
};

struct fib {
	struct xp_fib *pub;
	struct xp_qsbr *qsbr;
	struct xp_hmap nodes, nhs, groups, neighs, addrs, ifs;
	struct fib_nh **nh_obj;
	struct fib_group **grp_obj;
	struct idpool nh_ids, grp_ids;
	struct fib_neigh **sorted[2]; /* usable neighbours by address */
	__u32 nsorted[2], capsorted[2];
	__u32 len_routes[2][129]; /* nodes holding routes, per prefix length */
	__u32 gen;
	unsigned int resync; /* XP_FIB_SYNC_* of the dump under way */
	bool logged[XP_FIB_U_NR];
	bool logged_install;
	bool resolve_gateways;
	struct xp_fib_gw *resolve; /* queued for xp_fib_resolve_take() */
	__u32 nresolve, capresolve;
	struct xp_fib_stats st;
};

static const __u8 bits_of[2] = { 32, 128 };

static struct fib *priv_of(const struct xp_fib *f)
{
	return f->priv;
}

static int fam_idx(__u8 family)
{
	return family == AF_INET ? 0 : family == AF_INET6 ? 1 : -1;
}

static __u32 alen(__u8 fam)
{
	return fam ? 16 : 4;
}

/* The tables of @f and @family's index, and @addr as they key it (zero-padded to 16). */
static int key_of(const struct xp_fib *f, __u8 family, const __u8 *addr, struct fib **p, __u8 *fam,
		  __u8 a[16])
{
	int i = fam_idx(family);

	*p = f ? priv_of(f) : NULL;
	if (!*p || i < 0 || !addr)
		return -EINVAL;
	*fam = (__u8)i;
	memset(a, 0, 16);
	memcpy(a, addr, alen(*fam));
	return 0;
}

/* ---- ids ---- */

static int idpool_init(struct idpool *p, __u32 max, bool deferred)
{
	memset(p, 0, sizeof(*p));
	p->max = max;
	p->free = malloc((size_t)max * sizeof(*p->free));
	p->pending = malloc((size_t)max * sizeof(*p->pending));
	p->wait = deferred ? malloc((size_t)max * sizeof(*p->wait)) : NULL;
	if (!p->free || !p->pending || (deferred && !p->wait))
		return -ENOMEM;
	for (__u32 i = 0; i < max; i++)
		p->free[i] = max - 1 - i;
	p->nfree = max;
	return 0;
}

static void idpool_fini(struct idpool *p)
{
	free(p->free);
	free(p->pending);
	free(p->wait);
}

static void idpool_reclaim(struct idpool *p, struct xp_qsbr *q, bool wait)
{
	while (p->wlen) {
		xp_qsbr_token t = p->wait[p->whead].token;

		if (!xp_qsbr_check(q, t)) {
			if (!wait)
				break;
			xp_qsbr_wait(q, t);
		}
		p->free[p->nfree++] = p->wait[p->whead].id;
		p->whead = (p->whead + 1) % p->max;
		p->wlen--;
	}
}

/* The ids freed before this commit start their grace period. */
static void idpool_commit(struct idpool *p, struct xp_qsbr *q)
{
	if (p->npending) {
		if (!q) {
			memcpy(p->free + p->nfree, p->pending, p->npending * sizeof(*p->free));
			p->nfree += p->npending;
		} else {
			xp_qsbr_token t = xp_qsbr_start(q);

			for (__u32 i = 0; i < p->npending; i++) {
				__u32 tail = (p->whead + p->wlen++) % p->max;

				p->wait[tail].id = p->pending[i];
				p->wait[tail].token = t;
			}
		}
		p->npending = 0;
	}
	if (q)
		idpool_reclaim(p, q, false);
}

static int idpool_get(struct idpool *p, struct xp_qsbr *q, __u32 *id)
{
	if (!p->nfree && p->wlen)
		idpool_reclaim(p, q, false);
	if (!p->nfree && p->wlen)
		idpool_reclaim(p, q, true);
	if (!p->nfree)
		return -ENOSPC;
	*id = p->free[--p->nfree];
	return 0;
}

static void idpool_put(struct idpool *p, __u32 id)
{
	p->pending[p->npending++] = id;
}

/* ---- keys and lookups ---- */

static void mask_to(__u8 *dst, const __u8 *src, __u32 bytes, __u32 len)
{
	for (__u32 i = 0; i < bytes; i++) {
		__u32 b = len > 8 * i ? len - 8 * i : 0;

		dst[i] = b >= 8 ? src[i] : src[i] & (__u8)(0xff00u >> b);
	}
	memset(dst + bytes, 0, 16 - bytes);
}

static __u64 key_hash(__u8 fam, __u8 len, const __u8 *addr, __u32 ifindex)
{
	__u8 k[24] = { fam, len };

	memcpy(k + 2, addr, 16);
	memcpy(k + 18, &ifindex, 4);
	return xp_hash_bytes(k, sizeof(k), 0x6669622e);
}

static struct fib_node *node_find(struct fib *p, __u8 fam, __u8 len, const __u8 *key)
{
	__u64 h = key_hash(fam, len, key, 0);

	for (struct xp_hnode *x = xp_hmap_next(&p->nodes, h, NULL); x;
	     x = xp_hmap_next(&p->nodes, h, x)) {
		struct fib_node *n = (struct fib_node *)x;

		if (n->fam == fam && n->len == len && !memcmp(n->key, key, 16))
			return n;
	}
	return NULL;
}

static struct fib_node *node_get(struct fib *p, __u8 fam, __u8 len, const __u8 *key)
{
	struct fib_node *n = node_find(p, fam, len, key);

	if (n)
		return n;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->fam = fam;
	n->len = len;
	memcpy(n->key, key, 16);
	n->installed = NONE;
	xp_hmap_insert(&p->nodes, &n->h, key_hash(fam, len, key, 0));
	return n;
}

/* The head nexthops, neighbours and addresses share: keyed (family, address, ifindex). */
struct fib_keyed {
	struct xp_hnode h;
	__u8 fam;
	__u8 addr[16];
	__u32 ifindex;
};

static void *find_keyed(const struct xp_hmap *m, __u8 fam, const __u8 *addr, __u32 ifindex)
{
	__u64 h = key_hash(fam, 0, addr, ifindex);

	for (struct xp_hnode *x = xp_hmap_next(m, h, NULL); x; x = xp_hmap_next(m, h, x)) {
		const struct fib_keyed *o = (const struct fib_keyed *)x;

		if (o->fam == fam && o->ifindex == ifindex && !memcmp(o->addr, addr, 16))
			return x;
	}
	return NULL;
}

static struct fib_if *if_find(struct fib *p, __u32 ifindex)
{
	__u64 h = ifindex * 0x9e3779b97f4a7c15ull;

	for (struct xp_hnode *x = xp_hmap_next(&p->ifs, h, NULL); x;
	     x = xp_hmap_next(&p->ifs, h, x))
		if (((struct fib_if *)x)->ifindex == ifindex)
			return (struct fib_if *)x;
	return NULL;
}

/* ---- nexthops ---- */

static __u64 nh_word(struct fib *p, const struct fib_nh *nh)
{
	const struct fib_if *i = if_find(p, nh->ifindex);
	const struct fib_neigh *n = find_keyed(&p->neighs, nh->fam, nh->addr, nh->ifindex);
	__u64 w = 0;

	if (!i || i->port < 0)
		return XP_FIB_R_NO_PORT;
	if (!n || !n->usable)
		return XP_FIB_R_NO_NEIGH;
	for (int b = 0; b < 6; b++)
		w |= (__u64)n->mac[b] << (40 - 8 * b);
	return XP_FIB_NH_USABLE | (__u64)i->port << 48 | w;
}

static void nh_refresh(struct fib *p, struct fib_nh *nh)
{
	__u64 old = p->pub->nh[nh->id], w = nh_word(p, nh);

	if (old == w)
		return;
	p->st.nexthops_usable += (w & XP_FIB_NH_USABLE ? 1 : 0) - (old & XP_FIB_NH_USABLE ? 1 : 0);
	__atomic_store_n(&p->pub->nh[nh->id], w, __ATOMIC_RELAXED);
}

/* Caps the queue: a kernel that never reads it costs no more than this. */
#define RESOLVE_MAX 65536u

/* @nh for the kernel to resolve, if it is on a port and has no usable neighbour. */
static void resolve_push(struct fib *p, const struct fib_nh *nh)
{
	struct xp_fib_gw *g;

	if (!p->resolve_gateways || nh_word(p, nh) != XP_FIB_R_NO_NEIGH)
		return;
	if (p->nresolve == p->capresolve) {
		__u32 cap = p->capresolve ? 2 * p->capresolve : 64;

		if (cap > RESOLVE_MAX || !(g = realloc(p->resolve, cap * sizeof(*g))))
			return; /* the kernel still resolves what it sends itself */
		p->resolve = g;
		p->capresolve = cap;
	}
	g = &p->resolve[p->nresolve++];
	g->family = nh->fam ? AF_INET6 : AF_INET;
	memcpy(g->addr, nh->addr, 16);
	g->ifindex = nh->ifindex;
}

__u32 xp_fib_resolve_take(struct xp_fib *f, struct xp_fib_gw *out, __u32 max)
{
	struct fib *p = f ? priv_of(f) : NULL;
	__u32 n;

	if (!p)
		return 0;
	n = p->nresolve < max ? p->nresolve : max;
	if (!n)
		return 0; /* the queue may never have been allocated */
	p->nresolve -= n;
	memcpy(out, p->resolve + p->nresolve, n * sizeof(*out));
	return n;
}

static struct fib_nh *nh_get(struct fib *p, __u8 fam, const __u8 *addr, __u32 ifindex)
{
	__u8 a[16] = { 0 };
	struct fib_nh *nh;

	memcpy(a, addr, alen(fam));
	nh = find_keyed(&p->nhs, fam, a, ifindex);
	if (nh) {
		nh->refs++;
		return nh;
	}
	nh = calloc(1, sizeof(*nh));
	if (!nh)
		return NULL;
	if (idpool_get(&p->nh_ids, p->qsbr, &nh->id)) {
		free(nh);
		p->st.id_exhausted++;
		return NULL;
	}
	nh->fam = fam;
	memcpy(nh->addr, a, 16);
	nh->ifindex = ifindex;
	nh->refs = 1;
	/* The id's old word is stale (usable or not): start from "no neighbour". */
	__atomic_store_n(&p->pub->nh[nh->id], XP_FIB_R_NO_NEIGH, __ATOMIC_RELAXED);
	nh_refresh(p, nh);
	p->nh_obj[nh->id] = nh;
	xp_hmap_insert(&p->nhs, &nh->h, key_hash(fam, 0, a, ifindex));
	p->st.nexthops++;
	resolve_push(p, nh);
	return nh;
}

static void nh_put(struct fib *p, struct fib_nh *nh)
{
	if (--nh->refs)
		return;
	xp_hmap_remove(&p->nhs, &nh->h);
	if (p->pub->nh[nh->id] & XP_FIB_NH_USABLE)
		p->st.nexthops_usable--;
	p->nh_obj[nh->id] = NULL;
	/* The word stays as it is until the id is reused: a reader may still be in it. */
	idpool_put(&p->nh_ids, nh->id);
	p->st.nexthops--;
	free(nh);
}

/* ---- groups ---- */

static int member_cmp(const void *a, const void *b)
{
	const struct fib_member *x = a, *y = b;

	return x->nh < y->nh ? -1 : x->nh > y->nh ? 1 : (int)x->weight - (int)y->weight;
}

static __u64 group_hash(const struct fib_member *m, __u32 n)
{
	return xp_hash_bytes(m, n * sizeof(*m), 0x67727570);
}

/* Weights over at most XP_FIB_ECMP_MAX slots, each path at least one. */
static void group_fill(struct xp_fib_group *g, const struct fib_member *m, __u32 n)
{
	__u32 total = 0, slots[XP_FIB_ECMP_MAX], sum = 0, k = 0;

	for (__u32 i = 0; i < n; i++)
		total += m[i].weight;
	for (__u32 i = 0; i < n; i++) {
		slots[i] = total <= XP_FIB_ECMP_MAX ? m[i].weight :
						      m[i].weight * XP_FIB_ECMP_MAX / total;
		if (!slots[i])
			slots[i] = 1;
		sum += slots[i];
	}
	while (sum > XP_FIB_ECMP_MAX) {
		__u32 big = 0;

		for (__u32 i = 1; i < n; i++)
			if (slots[i] > slots[big])
				big = i;
		slots[big]--;
		sum--;
	}
	/* Interleaved, so that neighbouring hash ranges go to different paths. */
	for (__u32 round = 0; k < sum; round++)
		for (__u32 i = 0; i < n && k < sum; i++)
			if (slots[i] > round)
				g->nh[k++] = m[i].nh;
	g->n = sum;
}

/* A group of the paths' nexthops; takes one reference on each nexthop it keeps. */
static struct fib_group *group_get(struct fib *p, struct fib_nh **nhs, const __u32 *weights,
				   __u32 n)
{
	struct fib_member m[XP_FIB_ECMP_MAX];
	struct fib_group *g;
	__u64 h;

	for (__u32 i = 0; i < n; i++)
		m[i] = (struct fib_member){ nhs[i]->id, weights[i] };
	qsort(m, n, sizeof(*m), member_cmp);
	h = group_hash(m, n);
	for (struct xp_hnode *x = xp_hmap_next(&p->groups, h, NULL); x;
	     x = xp_hmap_next(&p->groups, h, x)) {
		g = (struct fib_group *)x;
		if (g->n == n && !memcmp(g->m, m, n * sizeof(*m))) {
			g->refs++;
			for (__u32 i = 0; i < n; i++)
				nh_put(p, nhs[i]); /* the group holds its own */
			return g;
		}
	}
	g = calloc(1, sizeof(*g) + n * sizeof(*m));
	if (!g)
		return NULL;
	if (idpool_get(&p->grp_ids, p->qsbr, &g->id)) {
		free(g);
		p->st.id_exhausted++;
		return NULL;
	}
	g->refs = 1;
	g->n = n;
	memcpy(g->m, m, n * sizeof(*m));
	/* Written before any LPM entry names the id (release there, or the flip). */
	group_fill((struct xp_fib_group *)&p->pub->grp[g->id], m, n);
	p->grp_obj[g->id] = g;
	xp_hmap_insert(&p->groups, &g->h, h);
	p->st.groups++;
	return g;
}

static void group_put(struct fib *p, struct fib_group *g)
{
	if (--g->refs)
		return;
	for (__u32 i = 0; i < g->n; i++)
		nh_put(p, p->nh_obj[g->m[i].nh]);
	xp_hmap_remove(&p->groups, &g->h);
	p->grp_obj[g->id] = NULL;
	idpool_put(&p->grp_ids, g->id);
	p->st.groups--;
	free(g);
}

/* ---- routes ---- */

static void hop_release(struct fib *p, __u32 hop)
{
	__u32 kind = hop >> XP_FIB_KIND_SHIFT, id = hop & XP_FIB_ID_MASK;

	if (hop == NONE)
		return;
	if (kind == XP_FIB_K_NH)
		nh_put(p, p->nh_obj[id]);
	else if (kind == XP_FIB_K_GROUP)
		group_put(p, p->grp_obj[id]);
}

static void count_unsup(struct fib *p, const struct fib_node *n, const struct fib_route *r, int d)
{
	char a[INET6_ADDRSTRLEN];

	if (!r->ueff)
		return;
	p->st.unsupported[r->ueff] += (__u64)(__s64)d;
	if (d > 0 && !p->logged[r->ueff]) {
		p->logged[r->ueff] = true;
		inet_ntop(n->fam ? AF_INET6 : AF_INET, n->key, a, sizeof(a));
		xp_info("fib: %s/%u: %s route: the fast path punts it to the kernel (logged "
			"once per kind, counted in xp_fib_stats.unsupported)\n",
			a, n->len, xp_fib_unsup_name(r->ueff));
	}
}

static __u32 punt(enum xp_fib_reason r)
{
	return XP_FIB_HOP(XP_FIB_K_PUNT, r);
}

/* The hop a route installs, taking the references it needs; sets r->ueff. */
static __u32 route_hop(struct fib *p, struct fib_node *n, struct fib_route *r)
{
	struct fib_nh *nhs[XP_FIB_ECMP_MAX];
	__u32 w[XP_FIB_ECMP_MAX], live = 0, got = 0;
	const struct fib_path *one = NULL;
	struct fib_group *g;

	r->ueff = r->unsup;
	if (r->unsup)
		return punt(XP_FIB_R_UNSUPPORTED);
	switch (r->type) {
	case RTN_UNICAST:
		break;
	case RTN_BLACKHOLE:
		return XP_FIB_HOP(XP_FIB_K_DROP, XP_FIB_R_BLACKHOLE);
	case RTN_UNREACHABLE:
		return punt(XP_FIB_R_UNREACHABLE);
	case RTN_PROHIBIT:
		return punt(XP_FIB_R_PROHIBIT);
	case RTN_THROW:
		return punt(XP_FIB_R_THROW);
	case RTN_LOCAL:
	case RTN_BROADCAST:
	case RTN_ANYCAST:
	case RTN_MULTICAST:
		return punt(XP_FIB_R_LOCAL);
	default:
		r->ueff = XP_FIB_U_TYPE;
		return punt(XP_FIB_R_UNSUPPORTED);
	}
	for (__u32 i = 0; i < r->npaths; i++)
		if (!r->path[i].dead) {
			live++;
			one = &r->path[i];
		}
	if (live > 1 && !r->ueff)
		for (__u32 i = 0; i < r->npaths; i++)
			if (!r->path[i].dead && !r->path[i].has_gw)
				r->ueff = XP_FIB_U_DEVPATH;
	if (live > XP_FIB_ECMP_MAX)
		r->ueff = XP_FIB_U_WIDE;
	if (r->ueff)
		return punt(XP_FIB_R_UNSUPPORTED);
	/* None alive, or on-link (the destination is the neighbour): the kernel resolves,
	 * and a host route takes over once it has. */
	if (!live || !one->has_gw)
		return punt(XP_FIB_R_NO_NEIGH);
	for (__u32 i = 0; i < r->npaths; i++) {
		if (r->path[i].dead)
			continue;
		nhs[got] = nh_get(p, n->fam, r->path[i].gw, r->path[i].ifindex);
		if (!nhs[got])
			goto exhausted;
		w[got++] = r->path[i].weight;
	}
	if (got == 1)
		return XP_FIB_HOP(XP_FIB_K_NH, nhs[0]->id);
	g = group_get(p, nhs, w, got);
	if (g)
		return XP_FIB_HOP(XP_FIB_K_GROUP, g->id);
exhausted:
	while (got)
		nh_put(p, nhs[--got]);
	/* No id left: the kernel forwards it (id_exhausted counts it). */
	return punt(XP_FIB_R_NO_NEIGH);
}

static bool route_tos(const struct fib_node *n)
{
	for (const struct fib_route *r = n->routes; r; r = r->next)
		if (r->tos)
			return true;
	return false;
}

/* The route the kernel would use for this prefix. */
static const struct fib_route *node_best(const struct fib_node *n)
{
	return n->routes && !route_tos(n) ? n->routes : NULL;
}

static __u32 node_compose(const struct fib_node *n)
{
	if (n->local_refs)
		return punt(XP_FIB_R_LOCAL);
	if (n->host)
		return XP_FIB_HOP(XP_FIB_K_NH, n->host->host_nh->id);
	if (!n->routes)
		return NONE;
	if (route_tos(n))
		return punt(XP_FIB_R_UNSUPPORTED);
	return n->routes->hop;
}

static __u32 reason_of(__u32 hop)
{
	__u32 kind = hop >> XP_FIB_KIND_SHIFT;

	return kind == XP_FIB_K_NH || kind == XP_FIB_K_GROUP ? XP_FIB_R_NONE : hop & XP_FIB_ID_MASK;
}

static int lpm_set(struct fib *p, const struct fib_node *n, __u32 hop)
{
	if (n->fam == 0) {
		__u32 a = (__u32)n->key[0] << 24 | (__u32)n->key[1] << 16 | (__u32)n->key[2] << 8 |
			  n->key[3];

		return hop == NONE ? xp_lpm_del(p->pub->lpm4, a, n->len) :
				     xp_lpm_add(p->pub->lpm4, a, n->len, hop);
	}
	return hop == NONE ? xp_lpm6_del(p->pub->lpm6, n->key, n->len) :
			     xp_lpm6_add(p->pub->lpm6, n->key, n->len, hop);
}

static void node_install(struct fib *p, struct fib_node *n)
{
	__u32 hop = node_compose(n);
	char a[INET6_ADDRSTRLEN];
	int err;

	if (hop == n->installed)
		return;
	err = lpm_set(p, n, hop);
	if (err && hop != NONE) {
		p->st.install_errors++;
		if (!p->logged_install) {
			p->logged_install = true;
			inet_ntop(n->fam ? AF_INET6 : AF_INET, n->key, a, sizeof(a));
			xp_err("fib: %s/%u: the IPv%c LPM table refused it (%s): packets to it "
			       "take a shorter route; raise xp_fib_opts.lpm%c_groups\n",
			       a, n->len, n->fam ? '6' : '4', strerror(-err), n->fam ? '6' : '4');
		}
		/* What was there goes too: a shorter route beats a stale hop. If even
		 * that fails, the entry stays as it was. */
		if (n->installed != NONE && lpm_set(p, n, NONE))
			return;
		hop = NONE;
	}
	if (n->installed != NONE) {
		p->st.by_reason[reason_of(n->installed)]--;
		p->st.prefixes[n->fam]--;
	}
	if (hop != NONE) {
		p->st.by_reason[reason_of(hop)]++;
		p->st.prefixes[n->fam]++;
	}
	n->installed = hop;
}

static void node_maybe_free(struct fib *p, struct fib_node *n)
{
	if (n->routes || n->local_refs || n->host || n->busy)
		return;
	if (n->installed != NONE) {
		node_install(p, n);
		if (n->installed != NONE)
			return;
	}
	xp_hmap_remove(&p->nodes, &n->h);
	free(n);
}

/* ---- neighbours and host routes ---- */

static int addr_cmp(const struct fib_neigh *x, const __u8 *a, __u32 ifindex)
{
	int c = memcmp(x->addr, a, 16);

	return c ? c : x->ifindex < ifindex ? -1 : x->ifindex > ifindex;
}

/* First index of sorted[fam] not below (a, ifindex). */
static __u32 sorted_lower(const struct fib *p, __u8 fam, const __u8 *a, __u32 ifindex)
{
	__u32 lo = 0, hi = p->nsorted[fam];

	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;

		if (addr_cmp(p->sorted[fam][mid], a, ifindex) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int sorted_add(struct fib *p, struct fib_neigh *n)
{
	__u8 f = n->fam;
	__u32 i;

	if (p->nsorted[f] == p->capsorted[f]) {
		__u32 cap = p->capsorted[f] ? p->capsorted[f] * 2 : 64;
		struct fib_neigh **s = realloc(p->sorted[f], cap * sizeof(struct fib_neigh *));

		if (!s)
			return -ENOMEM;
		p->sorted[f] = s;
		p->capsorted[f] = cap;
	}
	i = sorted_lower(p, f, n->addr, n->ifindex);
	memmove(&p->sorted[f][i + 1], &p->sorted[f][i],
		(p->nsorted[f] - i) * sizeof(struct fib_neigh *));
	p->sorted[f][i] = n;
	p->nsorted[f]++;
	return 0;
}

static void sorted_del(struct fib *p, struct fib_neigh *n)
{
	__u8 f = n->fam;
	__u32 i = sorted_lower(p, f, n->addr, n->ifindex);

	if (i < p->nsorted[f] && p->sorted[f][i] == n) {
		memmove(&p->sorted[f][i], &p->sorted[f][i + 1],
			(p->nsorted[f] - i - 1) * sizeof(struct fib_neigh *));
		p->nsorted[f]--;
	}
}

/* The node of the longest prefix holding a route that covers @a. */
static struct fib_node *longest_route(struct fib *p, __u8 fam, const __u8 *a)
{
	__u8 k[16];

	for (int len = bits_of[fam]; len >= 0; len--) {
		struct fib_node *n;

		if (!p->len_routes[fam][len])
			continue;
		mask_to(k, a, alen(fam), (__u32)len);
		n = node_find(p, fam, (__u8)len, k);
		if (n && n->routes)
			return n;
	}
	return NULL;
}

/* The kernel sends to this neighbour directly: the longest route covering it is on
 * its interface, without a gateway. */
static bool neigh_eligible(struct fib *p, const struct fib_neigh *nb)
{
	const struct fib_node *n;
	const struct fib_route *r;
	const struct fib_path *pa = NULL;

	if (!nb->usable)
		return false;
	n = longest_route(p, nb->fam, nb->addr);
	r = n ? node_best(n) : NULL;
	if (!r || r->type != RTN_UNICAST || r->unsup)
		return false;
	for (__u32 i = 0; i < r->npaths; i++)
		if (!r->path[i].dead) {
			if (pa)
				return false;
			pa = &r->path[i];
		}
	return pa && !pa->has_gw && pa->ifindex == nb->ifindex;
}

static void neigh_host_update(struct fib *p, struct fib_neigh *nb)
{
	bool want = neigh_eligible(p, nb);
	struct fib_node *n;

	if (want == !!nb->host_nh)
		return;
	n = want ? node_get(p, nb->fam, bits_of[nb->fam], nb->addr) :
		   node_find(p, nb->fam, bits_of[nb->fam], nb->addr);
	if (want) {
		/* Two usable neighbours of one address (two interfaces): the first wins. */
		if (!n || n->host)
			return;
		nb->host_nh = nh_get(p, nb->fam, nb->addr, nb->ifindex);
		if (!nb->host_nh) {
			node_maybe_free(p, n);
			return;
		}
		n->host = nb;
		p->st.host_routes++;
		node_install(p, n);
		return;
	}
	if (n && n->host == nb) {
		n->host = NULL;
		node_install(p, n);
		node_maybe_free(p, n);
	}
	nh_put(p, nb->host_nh);
	nb->host_nh = NULL;
	p->st.host_routes--;
}

/* A prefix's best route changed: the neighbours under it decide again. */
static void neighs_under(struct fib *p, const struct fib_node *n)
{
	__u8 f = n->fam, k[16];

	for (__u32 i = sorted_lower(p, f, n->key, 0); i < p->nsorted[f]; i++) {
		struct fib_neigh *nb = p->sorted[f][i];

		mask_to(k, nb->addr, alen(f), n->len);
		if (memcmp(k, n->key, 16))
			break;
		neigh_host_update(p, nb);
		/* The update may have taken neighbours out of the array: never here, only
		 * neigh_set/del do; the array is stable in this loop. */
	}
}

/* ---- route changes ---- */

static void route_unlink(struct fib *p, struct fib_node *n, struct fib_route *r)
{
	struct fib_route **pp = &n->routes;

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
	count_unsup(p, n, r, -1);
	hop_release(p, r->hop);
	p->st.routes[n->fam]--;
	free(r);
	if (!n->routes)
		p->len_routes[n->fam][n->len]--;
}

/* After the node's routes changed: reinstall, re-decide the neighbours below. */
static void node_routes_changed(struct fib *p, struct fib_node *n)
{
	node_install(p, n);
	if (p->nsorted[n->fam]) {
		n->busy = true;
		neighs_under(p, n);
		n->busy = false;
	}
	node_maybe_free(p, n);
}

static bool same_paths(const struct fib_route *r, const struct fib_path *pa, __u32 n)
{
	if (r->npaths != n)
		return false;
	for (__u32 i = 0; i < n; i++)
		if (r->path[i].ifindex != pa[i].ifindex || r->path[i].has_gw != pa[i].has_gw ||
		    memcmp(r->path[i].gw, pa[i].gw, 16) || r->path[i].weight != pa[i].weight)
			return false;
	return true;
}

static bool path_eq(const struct fib_path *a, const struct fib_path *b)
{
	return a->ifindex == b->ifindex && a->has_gw == b->has_gw && !memcmp(a->gw, b->gw, 16);
}

static struct fib_route *route_new(struct fib *p, const struct xp_fib_route *k,
				   const struct fib_path *pa, __u32 n)
{
	struct fib_route *r = calloc(1, sizeof(*r) + n * sizeof(*pa));

	if (!r)
		return NULL;
	r->priority = k->priority;
	r->tos = k->tos;
	r->type = k->type;
	r->unsup = k->unsupported < XP_FIB_U_NR ? (__u8)k->unsupported : XP_FIB_U_TYPE;
	if (!r->unsup && k->tos)
		r->unsup = XP_FIB_U_TOS; /* only packets of that TOS use it: the kernel decides */
	r->gen = p->gen;
	r->npaths = n;
	memcpy(r->path, pa, n * sizeof(*pa));
	r->hop = NONE;
	return r;
}

/* Links @r into @n: in front of its key (or behind with @append), best first. */
static void route_link(struct fib *p, struct fib_node *n, struct fib_route *r, bool append)
{
	struct fib_route **pp = &n->routes;

	if (!n->routes)
		p->len_routes[n->fam][n->len]++;
	while (*pp && ((*pp)->priority < r->priority || (append && (*pp)->priority == r->priority)))
		pp = &(*pp)->next;
	r->next = *pp;
	*pp = r;
	r->hop = route_hop(p, n, r);
	count_unsup(p, n, r, 1);
	p->st.routes[n->fam]++;
}

static bool same_key(const struct fib_route *r, const struct xp_fib_route *k)
{
	return r->priority == k->priority && r->tos == k->tos;
}

static int copy_paths(const struct xp_fib_route *k, const struct xp_fib_path *in, __u32 n,
		      struct fib_path *out)
{
	for (__u32 i = 0; i < n; i++) {
		out[i] = (struct fib_path){
			.ifindex = in[i].ifindex,
			.weight = in[i].weight ? in[i].weight : 1,
			.has_gw = in[i].has_gw,
			.dead = in[i].dead,
		};
		if (in[i].has_gw)
			memcpy(out[i].gw, in[i].gw, alen((__u8)fam_idx(k->family)));
	}
	return 0;
}

/* A resync's first route of a key drops the key's routes the dump has not shown. */
static void drop_stale(struct fib *p, struct fib_node *n, const struct xp_fib_route *k)
{
	for (struct fib_route *r = n->routes, *next; r; r = next) {
		next = r->next;
		if (same_key(r, k) && r->gen != p->gen)
			route_unlink(p, n, r);
	}
}

int xp_fib_route_add(struct xp_fib *f, const struct xp_fib_route *k,
		     const struct xp_fib_path *paths, __u32 n, __u32 flags)
{
	struct fib *p = f ? priv_of(f) : NULL;
	int fam = k ? fam_idx(k->family) : -1;
	struct fib_path *pa;
	struct fib_route *r, *old = NULL;
	struct fib_node *node;
	__u8 key[16];

	if (!p || fam < 0 || k->dst_len > bits_of[fam] || (n && !paths) || n > 4096)
		return -EINVAL;
	pa = calloc(n ? n : 1, sizeof(*pa));
	if (!pa)
		return -ENOMEM;
	copy_paths(k, paths, n, pa);
	mask_to(key, k->dst, alen((__u8)fam), k->dst_len);
	node = node_get(p, (__u8)fam, k->dst_len, key);
	if (!node) {
		free(pa);
		return -ENOMEM;
	}
	if (p->resync & XP_FIB_SYNC_ROUTES) {
		drop_stale(p, node, k);
		flags = (flags & ~XP_FIB_REPLACE) | XP_FIB_APPEND;
	}
	for (r = node->routes; r; r = r->next)
		if (same_key(r, k) && !old)
			old = r;
	if (fam == 1 && old && !(flags & XP_FIB_REPLACE) && old->type == RTN_UNICAST &&
	    k->type == RTN_UNICAST && !k->unsupported) {
		/* IPv6 siblings: the paths join the route's (announced one by one, or all
		 * again on an append). */
		struct fib_route *u;
		__u32 m = old->npaths;

		u = calloc(1, sizeof(*u) + (old->npaths + n) * sizeof(*pa));
		if (!u) {
			free(pa);
			return -ENOMEM;
		}
		*u = *old;
		memcpy(u->path, old->path, old->npaths * sizeof(*pa));
		for (__u32 i = 0; i < n; i++) {
			__u32 j = 0;

			while (j < m && !path_eq(&u->path[j], &pa[i]))
				j++;
			if (j == m)
				u->path[m++] = pa[i];
			else
				u->path[j] = pa[i];
		}
		u->npaths = m;
		u->gen = p->gen;
		u->next = NULL;
		/* The new one first, then the old one goes: ids held by both stay. */
		route_link(p, node, u, true);
		route_unlink(p, node, old);
		free(pa);
		node_routes_changed(p, node);
		return 0;
	}
	if (!(flags & XP_FIB_REPLACE)) {
		/* The kernel holds no two identical IPv4 aliases: a repeat (an event the
		 * dump already showed) only refreshes its mark. */
		for (r = node->routes; r; r = r->next)
			if (same_key(r, k) && r->type == k->type && same_paths(r, pa, n)) {
				r->gen = p->gen;
				free(pa);
				return 0;
			}
	}
	r = route_new(p, k, pa, n);
	free(pa);
	if (!r) {
		node_maybe_free(p, node);
		return -ENOMEM;
	}
	route_link(p, node, r, (flags & XP_FIB_APPEND) || fam == 1);
	if ((flags & XP_FIB_REPLACE) && old)
		route_unlink(p, node, old);
	node_routes_changed(p, node);
	return 0;
}

int xp_fib_route_del(struct xp_fib *f, const struct xp_fib_route *k,
		     const struct xp_fib_path *paths, __u32 n)
{
	struct fib *p = f ? priv_of(f) : NULL;
	int fam = k ? fam_idx(k->family) : -1;
	struct fib_route *r, *hit = NULL;
	struct fib_node *node;
	struct fib_path *pa;
	__u8 key[16];

	if (!p || fam < 0 || k->dst_len > bits_of[fam] || (n && !paths) || n > 4096)
		return -EINVAL;
	mask_to(key, k->dst, alen((__u8)fam), k->dst_len);
	node = node_find(p, (__u8)fam, k->dst_len, key);
	if (!node)
		return -ENOENT;
	pa = calloc(n ? n : 1, sizeof(*pa));
	if (!pa)
		return -ENOMEM;
	copy_paths(k, paths, n, pa);
	for (r = node->routes; r; r = r->next) {
		if (!same_key(r, k))
			continue;
		if (!hit)
			hit = r;
		if (r->type == k->type && same_paths(r, pa, n)) {
			hit = r;
			break;
		}
	}
	if (!hit) {
		free(pa);
		return -ENOENT;
	}
	if (fam == 1 && n && hit->npaths > n) {
		/* IPv6: those siblings go, the others stay. */
		struct fib_route *u = calloc(1, sizeof(*u) + hit->npaths * sizeof(*pa));
		__u32 m = 0;

		if (!u) {
			free(pa);
			return -ENOMEM;
		}
		*u = *hit;
		for (__u32 i = 0; i < hit->npaths; i++) {
			bool gone = false;

			for (__u32 j = 0; j < n; j++)
				gone |= path_eq(&hit->path[i], &pa[j]);
			if (!gone)
				u->path[m++] = hit->path[i];
		}
		u->npaths = m;
		u->next = NULL;
		if (m)
			route_link(p, node, u, true);
		else
			free(u);
		route_unlink(p, node, hit);
	} else {
		route_unlink(p, node, hit);
	}
	free(pa);
	node_routes_changed(p, node);
	return 0;
}

/* ---- neighbours, addresses, interfaces ---- */

static void neigh_free(struct fib *p, struct fib_neigh *nb)
{
	struct fib_nh *nh;

	if (nb->usable) {
		nb->usable = false;
		sorted_del(p, nb);
		p->st.neighbours_usable--;
	}
	/* The host route goes first: it may hold the last reference of the nexthop. */
	neigh_host_update(p, nb);
	xp_hmap_remove(&p->neighs, &nb->h);
	nh = find_keyed(&p->nhs, nb->fam, nb->addr, nb->ifindex);
	p->st.neighbours--;
	free(nb);
	if (nh) {
		nh_refresh(p, nh);
		resolve_push(p, nh); /* a gateway still in use: the kernel finds it again */
	}
}

int xp_fib_neigh_set(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex, __u16 nud,
		     const __u8 mac[6])
{
	struct fib *p;
	struct fib_neigh *nb;
	struct fib_nh *nh;
	bool usable;
	__u8 fam, a[16];

	if (key_of(f, family, addr, &p, &fam, a))
		return -EINVAL;
	nb = find_keyed(&p->neighs, fam, a, ifindex);
	if (!nb) {
		nb = calloc(1, sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		nb->fam = fam;
		memcpy(nb->addr, a, 16);
		nb->ifindex = ifindex;
		xp_hmap_insert(&p->neighs, &nb->h, key_hash(fam, 0, a, ifindex));
		p->st.neighbours++;
	}
	nb->gen = p->gen;
	nb->nud = nud;
	nb->has_mac = mac != NULL;
	if (mac)
		memcpy(nb->mac, mac, 6);
	usable = (nud & NUD_USABLE) && mac;
	if (usable != nb->usable) {
		if (usable && sorted_add(p, nb))
			usable = false;
		else if (!usable)
			sorted_del(p, nb);
		p->st.neighbours_usable += usable ? 1 : -1ull;
		nb->usable = usable;
	}
	nh = find_keyed(&p->nhs, fam, a, ifindex);
	if (nh)
		nh_refresh(p, nh);
	neigh_host_update(p, nb);
	return 0;
}

int xp_fib_neigh_del(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex)
{
	struct fib *p;
	struct fib_neigh *nb;
	__u8 fam, a[16];

	if (key_of(f, family, addr, &p, &fam, a))
		return -EINVAL;
	nb = find_keyed(&p->neighs, fam, a, ifindex);
	if (!nb)
		return -ENOENT;
	neigh_free(p, nb);
	return 0;
}

static void addr_free(struct fib *p, struct fib_addr *ad)
{
	struct fib_node *n = node_find(p, ad->fam, bits_of[ad->fam], ad->addr);

	if (n) {
		n->local_refs--;
		node_install(p, n);
		node_maybe_free(p, n);
	}
	xp_hmap_remove(&p->addrs, &ad->h);
	p->st.local_addrs--;
	free(ad);
}

int xp_fib_addr_add(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex)
{
	struct fib *p;
	struct fib_addr *ad;
	struct fib_node *n;
	__u8 fam, a[16];

	if (key_of(f, family, addr, &p, &fam, a))
		return -EINVAL;
	ad = find_keyed(&p->addrs, fam, a, ifindex);
	if (ad) {
		ad->gen = p->gen;
		return 0;
	}
	n = node_get(p, fam, bits_of[fam], a);
	ad = calloc(1, sizeof(*ad));
	if (!n || !ad) {
		free(ad);
		if (n)
			node_maybe_free(p, n);
		return -ENOMEM;
	}
	ad->fam = fam;
	memcpy(ad->addr, a, 16);
	ad->ifindex = ifindex;
	ad->gen = p->gen;
	xp_hmap_insert(&p->addrs, &ad->h, key_hash(fam, 0, a, ifindex));
	p->st.local_addrs++;
	n->local_refs++;
	node_install(p, n);
	return 0;
}

int xp_fib_addr_del(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex)
{
	struct fib *p;
	struct fib_addr *ad;
	__u8 fam, a[16];

	if (key_of(f, family, addr, &p, &fam, a))
		return -EINVAL;
	ad = find_keyed(&p->addrs, fam, a, ifindex);
	if (!ad)
		return -ENOENT;
	addr_free(p, ad);
	return 0;
}

int xp_fib_port_set(struct xp_fib *f, __u32 ifindex, int port)
{
	struct fib *p = f ? priv_of(f) : NULL;
	struct xp_hnode *x, *tmp;
	struct fib_if *i;

	if (!p || port < -1 || port > 32766)
		return -EINVAL;
	i = if_find(p, ifindex);
	if (!i) {
		if (port < 0)
			return 0;
		i = calloc(1, sizeof(*i));
		if (!i)
			return -ENOMEM;
		i->ifindex = ifindex;
		xp_hmap_insert(&p->ifs, &i->h, ifindex * 0x9e3779b97f4a7c15ull);
	}
	i->port = port;
	xp_hmap_each(&p->nhs, x, tmp)
	{
		if (((struct fib_nh *)x)->ifindex == ifindex)
			nh_refresh(p, (struct fib_nh *)x);
	}
	return 0;
}

/* Re-makes the hop of @r after its paths changed (dead or alive). */
static void route_rehop(struct fib *p, struct fib_node *n, struct fib_route *r)
{
	__u32 old = r->hop;

	count_unsup(p, n, r, -1);
	r->hop = route_hop(p, n, r);
	count_unsup(p, n, r, 1);
	hop_release(p, old);
}

/* Nodes whose routes @pick says must change. Collected first, because changing one
 * may free others (host routes) that a walk of the map would step on. */
static struct fib_node **nodes_where(struct fib *p, bool (*pick)(const struct fib_route *, void *),
				     void *arg, size_t *n)
{
	struct fib_node **v = NULL;
	struct xp_hnode *x, *tmp;
	size_t cap = 0;

	*n = 0;
	xp_hmap_each(&p->nodes, x, tmp)
	{
		struct fib_node *nd = (struct fib_node *)x;
		bool hit = false;

		for (const struct fib_route *r = nd->routes; r && !hit; r = r->next)
			hit = pick(r, arg);
		if (!hit)
			continue;
		if (*n == cap) {
			struct fib_node **w =
				realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(struct fib_node *));

			if (!w)
				break; /* the rest stays as it was: the next resync fixes it */
			v = w;
		}
		v[(*n)++] = nd;
	}
	return v;
}

struct link_arg {
	__u32 ifindex;
	bool up;
};

static bool on_link(const struct fib_route *r, void *arg)
{
	const struct link_arg *a = arg;

	for (__u32 i = 0; i < r->npaths; i++)
		if (r->path[i].ifindex == a->ifindex && r->path[i].dead == a->up)
			return true;
	return false;
}

int xp_fib_link_set(struct xp_fib *f, __u32 ifindex, bool up)
{
	struct fib *p = f ? priv_of(f) : NULL;
	struct link_arg a = { ifindex, up };
	struct fib_node **v;
	size_t n;

	if (!p)
		return -EINVAL;
	v = nodes_where(p, on_link, &a, &n);
	for (size_t k = 0; k < n; k++) {
		struct fib_node *nd = v[k];

		for (struct fib_route *r = nd->routes, *next; r; r = next) {
			bool alive = false;

			next = r->next;
			if (!on_link(r, &a))
				continue;
			for (__u32 i = 0; i < r->npaths; i++) {
				if (r->path[i].ifindex == ifindex)
					r->path[i].dead = !up;
				alive |= !r->path[i].dead;
			}
			if (!alive && nd->fam == 0)
				route_unlink(p, nd, r); /* the kernel flushes it, unannounced */
			else
				route_rehop(p, nd, r);
		}
		node_routes_changed(p, nd);
	}
	free(v);
	return 0;
}

/* ---- resync ---- */

void xp_fib_resync_begin(struct xp_fib *f, unsigned int what)
{
	struct fib *p = priv_of(f);

	p->gen++;
	p->resync = what;
}

static bool stale(const struct fib_route *r, void *arg)
{
	return r->gen != *(const __u32 *)arg;
}

void xp_fib_resync_end(struct xp_fib *f)
{
	struct fib *p = priv_of(f);
	struct xp_hnode *x, *tmp;

	if (p->resync & XP_FIB_SYNC_ROUTES) {
		size_t n;
		struct fib_node **v = nodes_where(p, stale, &p->gen, &n);

		for (size_t k = 0; k < n; k++) {
			for (struct fib_route *r = v[k]->routes, *next; r; r = next) {
				next = r->next;
				if (r->gen != p->gen)
					route_unlink(p, v[k], r);
			}
			node_routes_changed(p, v[k]);
		}
		free(v);
	}
	if (p->resync & XP_FIB_SYNC_NEIGHS)
		xp_hmap_each(&p->neighs, x, tmp)
		{
			if (((struct fib_neigh *)x)->gen != p->gen)
				neigh_free(p, (struct fib_neigh *)x);
		}
	if (p->resync & XP_FIB_SYNC_ADDRS)
		xp_hmap_each(&p->addrs, x, tmp)
		{
			if (((struct fib_addr *)x)->gen != p->gen)
				addr_free(p, (struct fib_addr *)x);
		}
	p->resync = 0;
}

/* ---- life ---- */

int xp_fib_commit(struct xp_fib *f)
{
	struct fib *p = f ? priv_of(f) : NULL;

	if (!p)
		return -EINVAL;
	xp_lpm_commit(f->lpm4);
	xp_lpm6_commit(f->lpm6);
	/* Ids unlinked before this point are out of both images now; their grace period
	 * starts here. */
	idpool_commit(&p->nh_ids, p->qsbr);
	idpool_commit(&p->grp_ids, p->qsbr);
	p->st.commits++;
	return 0;
}

int xp_fib_sync(struct xp_fib *f)
{
	struct fib *p = f ? priv_of(f) : NULL;

	if (!p)
		return -EINVAL;
	xp_fib_commit(f);
	xp_lpm_sync(f->lpm4);
	xp_lpm6_sync(f->lpm6);
	if (p->qsbr) {
		idpool_reclaim(&p->nh_ids, p->qsbr, true);
		idpool_reclaim(&p->grp_ids, p->qsbr, true);
	}
	return 0;
}

void xp_fib_stats(const struct xp_fib *f, struct xp_fib_stats *st)
{
	const struct fib *p = f ? priv_of(f) : NULL;

	if (!p || !st)
		return;
	*st = p->st;
	xp_lpm_stats(f->lpm4, &st->lpm[0]);
	xp_lpm6_stats(f->lpm6, &st->lpm[1]);
}

const char *xp_fib_reason_name(enum xp_fib_reason r)
{
	static const char *const names[XP_FIB_R_NR] = {
		"forward",  "no_route", "local",   "no_neigh",	  "no_port",   "unreachable",
		"prohibit", "throw",	"special", "unsupported", "blackhole",
	};

	return (unsigned int)r < XP_FIB_R_NR ? names[r] : "?";
}

const char *xp_fib_unsup_name(enum xp_fib_unsup u)
{
	static const char *const names[XP_FIB_U_NR] = {
		"supported", "encap",	  "nexthop-object", "via",
		"tos",	     "wide-ecmp", "devpath-ecmp",   "type",
	};

	return (unsigned int)u < XP_FIB_U_NR ? names[u] : "?";
}

static void free_all(struct fib *p)
{
	struct xp_hnode *x, *tmp;

	xp_hmap_each(&p->nodes, x, tmp)
	{
		struct fib_node *n = (struct fib_node *)x;

		for (struct fib_route *r = n->routes, *next; r; r = next) {
			next = r->next;
			free(r);
		}
		free(n);
	}
	xp_hmap_each(&p->nhs, x, tmp) free(x);
	xp_hmap_each(&p->groups, x, tmp) free(x);
	xp_hmap_each(&p->neighs, x, tmp) free(x);
	xp_hmap_each(&p->addrs, x, tmp) free(x);
	xp_hmap_each(&p->ifs, x, tmp) free(x);
	xp_hmap_fini(&p->nodes);
	xp_hmap_fini(&p->nhs);
	xp_hmap_fini(&p->groups);
	xp_hmap_fini(&p->neighs);
	xp_hmap_fini(&p->addrs);
	xp_hmap_fini(&p->ifs);
	idpool_fini(&p->nh_ids);
	idpool_fini(&p->grp_ids);
	free(p->nh_obj);
	free(p->grp_obj);
	free(p->sorted[0]);
	free(p->sorted[1]);
}

void xp_fib_destroy(struct xp_fib *f)
{
	if (!f)
		return;
	if (f->priv) {
		free_all(f->priv);
		free(((struct fib *)f->priv)->resolve);
		free(f->priv);
	}
	xp_lpm_destroy(f->lpm4);
	xp_lpm6_destroy(f->lpm6);
	free(f->nh);
	free((void *)f->grp);
	free(f);
}

int xp_fib_create(const struct xp_fib_opts *opts, struct xp_fib **out)
{
	struct xp_fib_opts o;
	struct xp_fib *f;
	struct fib *p;
	__u32 nnh, ngrp;
	int err = -ENOMEM;

	if (!XP_OPTS_LOAD_LOG("fib", &o, opts, xp_fib_opts))
		return -EINVAL;
	nnh = o.nexthops ? o.nexthops : 65536;
	ngrp = o.groups ? o.groups : 4096;
	if (!out || nnh > XP_FIB_ID_MASK || ngrp > XP_FIB_ID_MASK) {
		xp_err("fib: nexthops %u or groups %u above %u\n", nnh, ngrp, XP_FIB_ID_MASK);
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	p = calloc(1, sizeof(*p));
	if (!f || !p) {
		free(f);
		free(p);
		return -ENOMEM;
	}
	f->priv = p;
	p->pub = f;
	p->qsbr = o.qsbr;
	p->resolve_gateways = o.resolve_gateways;
	f->nh = calloc(nnh, sizeof(*f->nh));
	f->grp = calloc(ngrp, sizeof(*f->grp));
	p->nh_obj = calloc(nnh, sizeof(struct fib_nh *));
	p->grp_obj = calloc(ngrp, sizeof(struct fib_group *));
	if (!f->nh || !f->grp || !p->nh_obj || !p->grp_obj ||
	    idpool_init(&p->nh_ids, nnh, o.qsbr) || idpool_init(&p->grp_ids, ngrp, o.qsbr) ||
	    xp_hmap_init(&p->nodes, o.routes_hint) || xp_hmap_init(&p->nhs, 64) ||
	    xp_hmap_init(&p->groups, 64) || xp_hmap_init(&p->neighs, 64) ||
	    xp_hmap_init(&p->addrs, 16) || xp_hmap_init(&p->ifs, 16))
		goto fail;
	{
		XP_OPTS(xp_lpm_opts, lo, .groups = o.lpm4_groups ? o.lpm4_groups : 16384,
			.routes_hint = o.routes_hint, .hugepages = o.hugepages,
			.sync = o.inplace ? XP_LPM_INPLACE : XP_LPM_DOUBLE, .qsbr = o.qsbr);

		err = xp_lpm_create(&lo, &f->lpm4);
		if (err)
			goto fail;
		lo.groups = o.lpm6_groups ? o.lpm6_groups : 16384;
		lo.root_bits = o.lpm6_root_bits;
		err = xp_lpm6_create(&lo, &f->lpm6);
		if (err)
			goto fail;
	}
	*out = f;
	return 0;
fail:
	xp_fib_destroy(f);
	return err;
}
