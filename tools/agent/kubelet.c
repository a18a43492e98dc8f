// SPDX-License-Identifier: BSD-3-Clause
/*
 * The kubelet's Device Plugin API (v1beta1), served by the agent: one resource per
 * pool of interfaces (PREFIX/POOL, "xpile.io/xsk"), one device per RX queue
 * ("eth1:0"), each pool on its own socket in the kubelet's device-plugins directory
 * (xpile-POOL.sock), registered with the kubelet's Registration service.
 *
 * The kubelet forgets every plugin when it restarts: the new kubelet empties the
 * directory and creates kubelet.sock again. An inotify watch on the directory sees
 * both: a pool's socket deleted is served again at once, and a kubelet.sock created
 * anew gets every pool registered again (the intel AF_XDP plugin registers once and
 * never again).
 *
 * ListAndWatch reports each queue's real health, evaluated at the tick and at every
 * link notification, and sends the list again when any device changes: Healthy when
 * the link is up (IFF_UP and IFF_RUNNING), the steer program attached (ours, through
 * its link) and the queue's XSKMAP slot usable (the queue exists and is below the
 * map's size). GetPreferredAllocation keeps a pod's queues on one NIC, else on one
 * NUMA node. Allocate hands the pod what its engine needs and no more: the
 * interface's directory of device-plugin sockets, read-only, at DPDK's default path
 * (/tmp/afxdp_dp/NETDEV/afxdp.sock), and environment variables in the shape DPDK and
 * CNDP read (AFXDP_DEVICES, AFXDP_DEVICES_<POOL>: the netdevs, space-separated) plus
 * XPILE_QUEUES (eth1:0,1, as `xpile run --iface` takes them, one word per netdev)
 * and XPILE_UDS (the sockets, for --uds, in the same order). The kubelet
 * makes the mounts: the pod spec holds no hostPath.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <bpf/bpf.h>

#include "agent.h"
#include "pinmap.h"
#include "grpc.h"
#include "kubelet.h"
#include "kubelet_types.h"
#include "kubemount.h"
#include "lent.h"
#include "podres.h"
#include "xpile/steer_owner.h"
#include "xpile/xsk.h"

#define KUBELET_SOCK "kubelet.sock"
#define POD_SOCK_FMT "/tmp/afxdp_dp/%s/afxdp.sock" /* DPDK's default, in the pod */
#define REGISTER_TIMEOUT 5.0
#define REGISTER_RETRY 5.0
#define REGISTER_SOON 0.005 /* the first retry after kubelet.sock appeared; doubles to 1 s */

static const char *const health_name[] = { "Unhealthy", "Healthy" };

/* ---- devices and their health ---- */

static int iface_numa(const struct ag_iface *i)
{
	char path[128], buf[16] = "";
	FILE *f;
	int n;

	if (i->cfg.numa_node != AG_NUMA_SYSFS)
		return i->cfg.numa_node;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", i->name);
	f = fopen(path, "re");
	if (!f)
		return -1; /* virtual devices (veth) have none */
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	(void)fclose(f); /* read only */
	n = atoi(buf);
	return buf[0] && n >= 0 ? n : -1;
}

/* Why the interface's queues cannot be used now, or NULL: the health of them all. */
static const char *iface_trouble(struct ag_kubelet *k, struct ag_iface *i, int *nq)
{
	struct xp_steer_health h;
	struct ifreq ifr = { 0 };

	*nq = 0;
	if (i->lent) { /* in the pod it is allocated to: our program is all we can see */
		*nq = (int)i->kube_queues;
		return ag_lent_attached(i) ? NULL : "steer program not attached (lent)";
	}
	if (!i->steer || xp_steer_check(i->steer, &h))
		return "not served";
	if (h.iface_gone)
		return "interface gone";
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->name);
	if (k->ioctl_fd < 0 || ioctl(k->ioctl_fd, SIOCGIFFLAGS, &ifr))
		return "interface gone";
	if (!(ifr.ifr_flags & IFF_UP))
		return "link down";
	if (!(ifr.ifr_flags & IFF_RUNNING))
		return "no carrier";
	if (h.prog_gone || h.prog_replaced)
		return "steer program not attached";
	*nq = xp_ifname_rx_queues(i->name);
	return NULL;
}

/* The devices of @p, as they are now, into p->next (sorted: interfaces in config
 * order, queues ascending). */
static void pool_scan(struct ag_kubelet *k, struct ag_pool *p)
{
	struct agent *a = k->a;

	p->nnext = 0;
	for (int n = 0; n < AG_MAX_IFACES; n++) {
		struct ag_iface *i = &a->ifaces[n];
		const char *why;
		__u32 want;
		int nq;

		if (!i->used || strcmp(i->cfg.pool, p->name))
			continue;
		why = iface_trouble(k, i, &nq);
		want = i->cfg.queues;
		if (!want) /* every queue: as many as it has, or had when last seen */
			want = nq > 0 ? (__u32)nq : i->kube_queues;
		if (nq > 0)
			i->kube_queues = (__u32)nq;
		for (__u32 q = 0; q < want && p->nnext < AG_POOL_DEVS; q++) {
			struct ag_dev *d = &p->next[p->nnext++];

			snprintf(d->id, sizeof(d->id), "%s:%u", i->name, q);
			d->iface = n;
			d->queue = q;
			d->numa = iface_numa(i);
			/* The slot: a queue the interface has, a key the XSKMAP holds. */
			if (!why && (nq <= 0 || q >= (__u32)nq))
				d->why = "queue gone (fewer channels)";
			else if (!why && q >= XP_STEER_MAX_QUEUES)
				d->why = "queue beyond the XSKMAP";
			else
				d->why = why;
			d->healthy = !d->why;
		}
	}
}

static bool devs_equal(const struct ag_pool *p)
{
	if (p->nnext != p->ndevs)
		return false;
	for (unsigned int n = 0; n < p->ndevs; n++)
		if (strcmp(p->devs[n].id, p->next[n].id) ||
		    p->devs[n].healthy != p->next[n].healthy || p->devs[n].numa != p->next[n].numa)
			return false;
	return true;
}

/* ListAndWatchResponse of @p's devices, packed into a fresh buffer. */
static uint8_t *pack_devices(const struct ag_pool *p, size_t *len)
{
	V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
	V1beta1__Device *dv = calloc(p->ndevs + 1, sizeof(*dv));
	V1beta1__Device **dp = calloc(p->ndevs + 1, sizeof(void *)); /* pointers */
	V1beta1__TopologyInfo *top = calloc(p->ndevs + 1, sizeof(*top));
	V1beta1__NUMANode *node = calloc(p->ndevs + 1, sizeof(*node));
	V1beta1__NUMANode **nodep = calloc(p->ndevs + 1, sizeof(void *));
	uint8_t *buf = NULL;

	if (!dv || !dp || !top || !node || !nodep)
		goto out;
	for (unsigned int n = 0; n < p->ndevs; n++) {
		v1beta1__device__init(&dv[n]);
		dv[n].id = (char *)p->devs[n].id;
		dv[n].health = (char *)health_name[p->devs[n].healthy];
		if (p->devs[n].numa >= 0) {
			v1beta1__topology_info__init(&top[n]);
			v1beta1__numanode__init(&node[n]);
			node[n].id = p->devs[n].numa;
			nodep[n] = &node[n];
			top[n].n_nodes = 1;
			top[n].nodes = &nodep[n];
			dv[n].topology = &top[n];
		}
		dp[n] = &dv[n];
	}
	r.n_devices = p->ndevs;
	r.devices = dp;
	*len = v1beta1__list_and_watch_response__get_packed_size(&r);
	buf = malloc(*len + 1);
	if (buf)
		v1beta1__list_and_watch_response__pack(&r, buf);
out:
	free(dv);
	free(dp);
	free(top);
	free(node);
	free(nodep);
	return buf;
}

static void pool_send(struct ag_pool *p, struct ag_grpc_call *only)
{
	size_t len = 0;
	uint8_t *buf = pack_devices(p, &len);

	if (!buf)
		return;
	for (unsigned int n = 0; n < AG_POOL_WATCHERS; n++)
		if (p->watch[n] && (!only || p->watch[n] == only))
			(void)ag_grpc_send(p->watch[n], buf, len); /* a dead one goes to gone */
	free(buf);
}

/* Brings p->devs to what is there now; logs each change, sends the list if any. */
static void pool_update(struct ag_kubelet *k, struct ag_pool *p)
{
	pool_scan(k, p);
	if (devs_equal(p))
		return;
	for (unsigned int n = 0; n < p->nnext; n++) {
		const struct ag_dev *d = &p->next[n], *old = NULL;

		for (unsigned int j = 0; j < p->ndevs && !old; j++)
			if (!strcmp(p->devs[j].id, d->id))
				old = &p->devs[j];
		if (p->scanned && (!old || old->healthy != d->healthy))
			ut_log(d->healthy ? LOG_INFO : LOG_WARNING, "kubelet: %s: device %s %s%s%s",
			       p->resource, d->id, health_name[d->healthy], d->why ? ": " : "",
			       d->why ? d->why : "");
	}
	memcpy(p->devs, p->next, p->nnext * sizeof(p->devs[0]));
	p->ndevs = p->nnext;
	p->scanned = true;
	pool_send(p, NULL);
}

static const struct ag_dev *pool_dev(const struct ag_pool *p, const char *id)
{
	for (unsigned int n = 0; n < p->ndevs; n++)
		if (!strcmp(p->devs[n].id, id))
			return &p->devs[n];
	return NULL;
}

/* ---- the DevicePlugin service ---- */

static void reply_packed(struct ag_grpc_call *c, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len + 1);

	if (!buf) {
		ag_grpc_finish(c, AG_GRPC_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
		return;
	}
	protobuf_c_message_pack(m, buf);
	ag_grpc_finish(c, AG_GRPC_OK, NULL, buf, len);
	free(buf);
}

static void do_options(struct ag_grpc_call *c)
{
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;

	o.get_preferred_allocation_available = true;
	reply_packed(c, &o.base);
}

static void do_watch(struct ag_kubelet *k, struct ag_pool *p, struct ag_grpc_call *c)
{
	for (unsigned int n = 0; n < AG_POOL_WATCHERS; n++)
		if (!p->watch[n]) {
			p->watch[n] = c;
			ag_grpc_call_set_user(c, p);
			pool_update(k, p);
			pool_send(p, c);
			return;
		}
	ag_grpc_finish(c, AG_GRPC_RESOURCE_EXHAUSTED, "too many ListAndWatch streams", NULL, 0);
}

/* The @size devices to give one container: @must first, then, from @avail, as many as
 * fit on the NIC that already holds most of the choice (else the one with most free
 * queues), then the same NUMA node, then any. Writes indices into p->devs. */
static unsigned int prefer(const struct ag_pool *p, char **avail, size_t navail, char **must,
			   size_t nmust, unsigned int size, int *out)
{
	bool can[AG_POOL_DEVS] = { false }, taken[AG_POOL_DEVS] = { false };
	unsigned int n = 0, free_on[AG_MAX_IFACES] = { 0 }, held_on[AG_MAX_IFACES] = { 0 };
	int nic = -1, numa = -2;

	for (size_t j = 0; j < navail; j++)
		for (unsigned int d = 0; d < p->ndevs; d++)
			if (!strcmp(p->devs[d].id, avail[j]))
				can[d] = true;
	for (size_t j = 0; j < nmust && n < size; j++)
		for (unsigned int d = 0; d < p->ndevs; d++)
			if (!taken[d] && !strcmp(p->devs[d].id, must[j])) {
				taken[d] = true;
				out[n++] = (int)d;
				held_on[p->devs[d].iface]++;
			}
	for (unsigned int d = 0; d < p->ndevs; d++)
		if (can[d] && !taken[d])
			free_on[p->devs[d].iface]++;
	/* The NIC: where the must-haves are (most of them), else the most free queues;
	 * among equals, one with room for the whole request. */
	for (int i = 0; i < AG_MAX_IFACES; i++) {
		unsigned int room = held_on[i] + free_on[i];

		if (!room)
			continue;
		if (nic < 0 || held_on[i] > held_on[nic] ||
		    (held_on[i] == held_on[nic] &&
		     (room >= size) > (held_on[nic] + free_on[nic] >= size)) ||
		    (held_on[i] == held_on[nic] &&
		     (room >= size) == (held_on[nic] + free_on[nic] >= size) &&
		     free_on[i] > free_on[nic]))
			nic = i;
	}
	for (int pass = 0; pass < 3 && n < size; pass++)
		for (unsigned int d = 0; d < p->ndevs && n < size; d++) {
			const struct ag_dev *v = &p->devs[d];

			if (!can[d] || taken[d])
				continue;
			if ((pass == 0 && v->iface != nic) || (pass == 1 && v->numa != numa))
				continue;
			taken[d] = true;
			out[n++] = (int)d;
			if (pass == 0)
				numa = v->numa; /* the NIC's node: the next best place */
		}
	return n;
}

static void do_preferred(struct ag_pool *p, struct ag_grpc_call *c, const uint8_t *msg, size_t len)
{
	V1beta1__PreferredAllocationRequest *req =
		v1beta1__preferred_allocation_request__unpack(NULL, len, msg);
	V1beta1__PreferredAllocationResponse r = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
	V1beta1__ContainerPreferredAllocationResponse *cr = NULL, **crp = NULL;
	char **ids = NULL;
	int *pick = NULL;
	size_t nc, used = 0;

	if (!req) {
		ag_grpc_finish(c, AG_GRPC_INVALID_ARGUMENT, "malformed PreferredAllocationRequest",
			       NULL, 0);
		return;
	}
	nc = req->n_container_requests;
	cr = calloc(nc + 1, sizeof(*cr));
	crp = calloc(nc + 1, sizeof(void *)); /* pointers */
	ids = calloc(nc * AG_POOL_DEVS + 1, sizeof(*ids));
	pick = calloc(AG_POOL_DEVS, sizeof(*pick));
	if (!cr || !crp || !ids || !pick) {
		ag_grpc_finish(c, AG_GRPC_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
		goto out;
	}
	for (size_t j = 0; j < nc; j++) {
		const V1beta1__ContainerPreferredAllocationRequest *q = req->container_requests[j];
		unsigned int size = q->allocation_size > 0 ? (unsigned int)q->allocation_size : 0;
		unsigned int got;

		if (size > AG_POOL_DEVS)
			size = AG_POOL_DEVS;
		got = prefer(p, q->available_deviceids, q->n_available_deviceids,
			     q->must_include_deviceids, q->n_must_include_deviceids, size, pick);
		v1beta1__container_preferred_allocation_response__init(&cr[j]);
		cr[j].deviceids = &ids[used];
		for (unsigned int g = 0; g < got; g++)
			ids[used++] = (char *)p->devs[pick[g]].id;
		cr[j].n_deviceids = got;
		crp[j] = &cr[j];
	}
	r.n_container_responses = nc;
	r.container_responses = crp;
	reply_packed(c, &r.base);
out:
	free(cr);
	free(crp);
	free(ids);
	free(pick);
	v1beta1__preferred_allocation_request__free_unpacked(req, NULL);
}

/* One container's answer: its netdevs' socket directories and the variables. */
static int allocate_one(struct ag_kubelet *k, struct ag_pool *p,
			const V1beta1__ContainerAllocateRequest *q,
			V1beta1__ContainerAllocateResponse *r, struct ag_alloc_buf *b, char *why,
			size_t wlen)
{
	struct agent *a = k->a;
	char netdevs[AG_MAX_IFACES * (IF_NAMESIZE + 1) + 1] = "", *queues, *uds;
	int seen[AG_MAX_IFACES] = { 0 };
	size_t qlen = q->n_devices_ids * (IF_NAMESIZE + 12) + 1;
	size_t ulen = q->n_devices_ids * (sizeof(POD_SOCK_FMT) + IF_NAMESIZE) + 1;
	unsigned int nm = 0;

	queues = ag_alloc_buf_keep(b, calloc(1, qlen));
	uds = ag_alloc_buf_keep(b, calloc(1, ulen));
	if (!queues || !uds) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	for (size_t j = 0; j < q->n_devices_ids; j++)
		if (!pool_dev(p, q->devices_ids[j])) {
			snprintf(why, wlen, "%s has no device %.64s", p->resource,
				 q->devices_ids[j]);
			return -1;
		}
	/* Per netdev, in the order first asked: eth1:0,1 (what `xpile run --iface`
	 * takes), its socket, its mount. */
	for (size_t j = 0; j < q->n_devices_ids; j++) {
		const struct ag_dev *d = pool_dev(p, q->devices_ids[j]);
		const struct ag_iface *i = &a->ifaces[d->iface];

		if (seen[d->iface]++)
			continue;
		snprintf(queues + strlen(queues), qlen - strlen(queues),
			 "%s%s:", *queues ? " " : "", i->name);
		for (size_t g = j, first = 1; g < q->n_devices_ids; g++) {
			const struct ag_dev *e = pool_dev(p, q->devices_ids[g]);

			if (e->iface != d->iface)
				continue;
			snprintf(queues + strlen(queues), qlen - strlen(queues), "%s%u",
				 first ? "" : ",", e->queue);
			first = 0;
		}
		snprintf(uds + strlen(uds), ulen - strlen(uds), "%s" POD_SOCK_FMT, *uds ? " " : "",
			 i->name);
		snprintf(netdevs + strlen(netdevs), sizeof(netdevs) - strlen(netdevs), "%s%s",
			 *netdevs ? " " : "", i->name);
		if (ag_kubelet_mount(k, i, &b->mounts[b->nmounts], b, why, wlen))
			return -1;
		b->mountp[b->nmounts] = &b->mounts[b->nmounts];
		b->nmounts++;
		nm++;
	}
	r->mounts = &b->mountp[b->nmounts - nm];
	r->n_mounts = nm;
	{
		char key[64], *env[4][2];
		size_t e = b->nenvs;

		snprintf(key, sizeof(key), "AFXDP_DEVICES_%s", p->name);
		for (char *s = key; *s; s++)
			*s = *s == '-' ? '_' : (char)toupper((unsigned char)*s);
		env[0][0] = "AFXDP_DEVICES";
		env[0][1] = netdevs;
		env[1][0] = key;
		env[1][1] = netdevs;
		env[2][0] = "XPILE_QUEUES";
		env[2][1] = queues;
		env[3][0] = "XPILE_UDS";
		env[3][1] = uds;
		for (int v = 0; v < 4; v++) {
			V1beta1__ContainerAllocateResponse__EnvsEntry *en = &b->envs[b->nenvs];

			v1beta1__container_allocate_response__envs_entry__init(en);
			en->key = ag_alloc_buf_keep(b, strdup(env[v][0]));
			en->value = ag_alloc_buf_keep(b, strdup(env[v][1]));
			if (!en->key || !en->value) {
				snprintf(why, wlen, "out of memory");
				return -1;
			}
			b->envp[b->nenvs++] = en;
		}
		r->envs = &b->envp[e];
		r->n_envs = 4;
	}
	return 0;
}

static void do_allocate(struct ag_kubelet *k, struct ag_pool *p, struct ag_grpc_call *c,
			const uint8_t *msg, size_t len)
{
	V1beta1__AllocateRequest *req = v1beta1__allocate_request__unpack(NULL, len, msg);
	V1beta1__AllocateResponse r = V1BETA1__ALLOCATE_RESPONSE__INIT;
	struct ag_alloc_buf *b = NULL;
	V1beta1__ContainerAllocateResponse *cr = NULL, **crp = NULL;
	char why[256] = "";
	size_t nc, ndev = 0;
	double t0 = ut_now();

	if (!req) {
		ag_grpc_finish(c, AG_GRPC_INVALID_ARGUMENT, "malformed AllocateRequest", NULL, 0);
		return;
	}
	nc = req->n_container_requests;
	for (size_t j = 0; j < nc; j++)
		ndev += req->container_requests[j]->n_devices_ids;
	b = ag_alloc_buf_new(nc, ndev);
	cr = calloc(nc + 1, sizeof(*cr));
	crp = calloc(nc + 1, sizeof(void *)); /* pointers */
	if (!b || !cr || !crp) {
		ag_grpc_finish(c, AG_GRPC_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
		goto out;
	}
	for (size_t j = 0; j < nc; j++) {
		v1beta1__container_allocate_response__init(&cr[j]);
		crp[j] = &cr[j];
		if (allocate_one(k, p, req->container_requests[j], &cr[j], b, why, sizeof(why))) {
			ut_warn("kubelet: %s: Allocate refused: %s", p->resource, why);
			ag_grpc_finish(c, AG_GRPC_INVALID_ARGUMENT, why, NULL, 0);
			goto out;
		}
	}
	r.n_container_responses = nc;
	r.container_responses = crp;
	reply_packed(c, &r.base);
	p->allocations++;
	ag_podres_refresh(k->a); /* the pod will soon be listed: ask early */
	ut_say(0, "kubelet: %s: allocated %s%s (%zu container(s), %.3f ms)", p->resource,
	       nc && req->container_requests[0]->n_devices_ids ?
		       req->container_requests[0]->devices_ids[0] :
		       "nothing",
	       ndev > 1 ? " and more" : "", nc, (ut_now() - t0) * 1e3);
out:
	free(cr);
	free(crp);
	ag_alloc_buf_free(b);
	v1beta1__allocate_request__free_unpacked(req, NULL);
}

static void on_call(void *ctx, struct ag_grpc_call *c, const char *path, const uint8_t *msg,
		    size_t len)
{
	struct ag_pool *p = ctx;
	struct ag_kubelet *k = p->k;
	const char *m = strncmp(path, "/v1beta1.DevicePlugin/", 22) ? "" : path + 22;

	if (!strcmp(m, "GetDevicePluginOptions")) {
		do_options(c);
	} else if (!strcmp(m, "ListAndWatch")) {
		do_watch(k, p, c);
	} else if (!strcmp(m, "GetPreferredAllocation")) {
		do_preferred(p, c, msg, len);
	} else if (!strcmp(m, "Allocate")) {
		do_allocate(k, p, c, msg, len);
	} else if (!strcmp(m, "PreStartContainer")) {
		static const uint8_t none[1];

		ag_grpc_finish(c, AG_GRPC_OK, NULL, none, 0);
	} else {
		ag_grpc_finish(c, AG_GRPC_UNIMPLEMENTED, "no such method", NULL, 0);
	}
}

static void on_gone(void *ctx, struct ag_grpc_call *c)
{
	struct ag_pool *p = ctx;

	for (unsigned int n = 0; n < AG_POOL_WATCHERS; n++)
		if (p->watch[n] == c)
			p->watch[n] = NULL;
}

/* ---- the pool's socket, and registration ---- */

static int pool_listen(struct ag_kubelet *k, struct ag_pool *p)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ag_grpc_handler h = { .ctx = p, .call = on_call, .gone = on_gone };
	struct stat st;
	char name[32];
	int fd, err;

	memcpy(sun.sun_path, p->path, strlen(p->path) + 1);
	unlink(p->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 64) ||
	    stat(p->path, &st)) {
		err = -errno;
		ut_log(LOG_ERR, "kubelet: %s: cannot serve %s: %s", p->resource, p->path,
		       strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	p->ino = st.st_ino;
	p->dev = st.st_dev;
	snprintf(name, sizeof(name), "kubelet %.23s", p->name);
	p->srv = ag_grpc_serve(k->a, fd, name, &h);
	return p->srv ? 0 : -ENOMEM;
}

static void pool_unlisten(struct ag_pool *p, bool unlink_it)
{
	for (unsigned int n = 0; n < AG_POOL_WATCHERS; n++)
		p->watch[n] = NULL;
	if (p->srv)
		ag_grpc_srv_stop(p->srv);
	p->srv = NULL;
	if (unlink_it) {
		struct stat st;

		/* Only ours: the path may be another's by now. */
		if (!stat(p->path, &st) && st.st_ino == p->ino && st.st_dev == p->dev)
			unlink(p->path);
	}
}

/* Serves p->path again when it is gone or no longer ours (a kubelet restart empties
 * the directory): 1 when it was served anew. */
static int pool_ensure(struct ag_kubelet *k, struct ag_pool *p)
{
	struct stat st;

	if (p->srv && !stat(p->path, &st) && st.st_ino == p->ino && st.st_dev == p->dev)
		return 0;
	pool_unlisten(p, false);
	if (pool_listen(k, p))
		return -1;
	ut_say(0, "kubelet: %s: serving the Device Plugin API on %s", p->resource, p->path);
	return 1;
}

static void registered(void *ctx, int status, const char *message, const uint8_t *msg, size_t len)
{
	struct ag_pool *p = ctx;
	double ms = (ut_now() - p->reg_start) * 1e3;

	p->registering = false;
	if (status == AG_GRPC_CANCELLED)
		return;
	if (status) {
		p->registered = false;
		p->next_try = ut_now() + REGISTER_RETRY;
		if (!p->reg_failed_logged)
			ut_warn("kubelet: %s: Register refused (status %d: %s); trying again when kubelet.sock is created and every %.0f s",
				p->resource, status, message, REGISTER_RETRY);
		p->reg_failed_logged = true;
		return;
	}
	p->registered = true;
	p->reg_failed_logged = false;
	p->registrations++;
	ut_say(0,
	       "kubelet: %s: registered with the kubelet (endpoint %s, registration %u) in %.2f ms",
	       p->resource, p->endpoint, p->registrations, ms);
}

static void pool_register(struct ag_kubelet *k, struct ag_pool *p)
{
	V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	uint8_t buf[512];
	size_t len;
	int err;

	if (p->registering || !p->srv)
		return;
	o.get_preferred_allocation_available = true;
	r.version = "v1beta1";
	r.endpoint = p->endpoint;
	r.resource_name = p->resource;
	r.options = &o;
	len = v1beta1__register_request__get_packed_size(&r);
	if (len > sizeof(buf))
		return;
	v1beta1__register_request__pack(&r, buf);
	p->reg_start = ut_now();
	p->registered = false;
	err = ag_grpc_unary(k->a, k->kubelet_sock, "/v1beta1.Registration/Register", buf, len,
			    REGISTER_TIMEOUT, registered, p);
	if (err) {
		p->next_try = ut_now() + REGISTER_RETRY;
		if (!p->reg_failed_logged)
			ut_warn("kubelet: %s: cannot reach the kubelet at %s (%s); registering when it creates the socket",
				p->resource, k->kubelet_sock, strerror(-err));
		p->reg_failed_logged = true;
		return;
	}
	p->registering = true;
}

static void arm_retry(struct ag_kubelet *k);

static bool retry_wanted(struct ag_kubelet *k)
{
	for (int n = 0; n < AG_MAX_POOLS; n++)
		if (k->pools[n].used && !k->pools[n].registered && !k->pools[n].registering)
			return true;
	return false;
}

static void on_retry(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_kubelet *k =
		(struct ag_kubelet *)((char *)ev - offsetof(struct ag_kubelet, retry_ev));

	k->retry_armed = false;
	if (k->closing) {
		if (!k->ino_armed)
			free(k);
		return;
	}
	for (int n = 0; n < AG_MAX_POOLS; n++)
		if (k->pools[n].used && !k->pools[n].registered)
			pool_register(k, &k->pools[n]);
	k->retry_wait *= 2;
	if (k->retry_wait <= 1.0 && retry_wanted(k)) {
		arm_retry(k);
		return;
	}
	for (int n = 0; n < AG_MAX_POOLS; n++) /* from now on, the tick's retries say why */
		k->pools[n].reg_failed_logged = false;
}

static void arm_retry(struct ag_kubelet *k)
{
	if (k->retry_armed)
		return;
	k->retry_ts.tv_sec = (long long)k->retry_wait;
	k->retry_ts.tv_nsec = (long long)((k->retry_wait - (double)k->retry_ts.tv_sec) * 1e9);
	k->retry_armed = !ut_loop_timeout(&k->a->loop, &k->retry_ev, &k->retry_ts);
}

static void pool_close(struct ag_pool *p)
{
	pool_unlisten(p, true);
	memset(p, 0, sizeof(*p));
}

static struct ag_pool *pool_find(struct ag_kubelet *k, const char *name)
{
	for (int n = 0; n < AG_MAX_POOLS; n++)
		if (k->pools[n].used && !strcmp(k->pools[n].name, name))
			return &k->pools[n];
	return NULL;
}

static struct ag_pool *pool_open(struct ag_kubelet *k, const char *name)
{
	struct ag_pool *p = NULL;

	for (int n = 0; n < AG_MAX_POOLS && !p; n++)
		if (!k->pools[n].used)
			p = &k->pools[n];
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->used = true;
	p->k = k;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->resource, sizeof(p->resource), "%s/%s", k->a->cfg.kubelet.prefix, name);
	snprintf(p->endpoint, sizeof(p->endpoint), "xpile-%s.sock", name);
	if (snprintf(p->path, sizeof(p->path), "%s/%s", k->a->cfg.kubelet.dir, p->endpoint) >=
	    (int)sizeof(p->path)) {
		ut_log(LOG_ERR, "kubelet: %s: socket path too long under %s", p->resource,
		       k->a->cfg.kubelet.dir);
		p->used = false;
		return NULL;
	}
	if (pool_ensure(k, p) < 0) {
		p->used = false;
		return NULL;
	}
	return p;
}

/* Pools as the interfaces say: new ones served and registered, empty ones closed. */
static void pools_sync(struct ag_kubelet *k)
{
	struct agent *a = k->a;

	for (int n = 0; n < AG_MAX_POOLS; n++) {
		struct ag_pool *p = &k->pools[n];
		bool keep = false;

		for (int j = 0; p->used && j < AG_MAX_IFACES; j++)
			keep |= a->ifaces[j].used && !strcmp(a->ifaces[j].cfg.pool, p->name);
		if (p->used && !keep) {
			ut_say(0, "kubelet: %s: no interface left in the pool: socket closed",
			       p->resource);
			pool_close(p);
		}
	}
	for (int j = 0; j < AG_MAX_IFACES; j++) {
		struct ag_pool *p;

		if (!a->ifaces[j].used || pool_find(k, a->ifaces[j].cfg.pool))
			continue;
		p = pool_open(k, a->ifaces[j].cfg.pool);
		if (p) {
			pool_update(k, p);
			pool_register(k, p);
		}
	}
}

/* ---- inotify: the kubelet restarting ---- */

static void arm_inotify(struct ag_kubelet *k)
{
	k->ino_armed =
		!ut_loop_read(&k->a->loop, &k->ino_ev, k->ino_fd, k->ino_buf, sizeof(k->ino_buf));
}

static void on_inotify(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_kubelet *k =
		(struct ag_kubelet *)((char *)ev - offsetof(struct ag_kubelet, ino_ev));
	bool kubelet_new = false;

	k->ino_armed = false;
	if (k->closing) {
		if (!k->retry_armed)
			free(k);
		return;
	}
	for (int off = 0; res > 0 && off + (int)sizeof(struct inotify_event) <= res;) {
		const struct inotify_event *e = (const struct inotify_event *)(k->ino_buf + off);

		off += (int)sizeof(*e) + (int)e->len;
		if (!e->len)
			continue;
		if (!strcmp(e->name, KUBELET_SOCK) && (e->mask & (IN_CREATE | IN_MOVED_TO))) {
			kubelet_new = true;
			k->kubelet_created = ut_now();
		}
		if (e->mask & (IN_DELETE | IN_MOVED_FROM))
			for (int n = 0; n < AG_MAX_POOLS; n++)
				if (k->pools[n].used && !strcmp(e->name, k->pools[n].endpoint))
					pool_ensure(k, &k->pools[n]);
	}
	if (res == -ENOBUFS || (res > 0 && kubelet_new)) {
		ut_say(0, "kubelet: %s created: registering again", k->kubelet_sock);
		for (int n = 0; n < AG_MAX_POOLS; n++)
			if (k->pools[n].used) {
				pool_ensure(k, &k->pools[n]);
				/* Refusals while it starts listening are expected: silent. */
				k->pools[n].reg_failed_logged = true;
				pool_register(k, &k->pools[n]);
			}
		/* Refused (not listening yet): again in 5 ms, 10, 20, ... 1 s. */
		k->retry_wait = REGISTER_SOON;
		if (retry_wanted(k))
			arm_retry(k);
	}
	if (res < 0 && res != -EINTR && res != -EAGAIN && res != -ENOBUFS) {
		ut_warn("kubelet: inotify: %s; re-registration now at the tick only",
			strerror(-res));
		return;
	}
	arm_inotify(k);
}

/* ---- the agent's hooks ---- */

int ag_kubelet_open(struct agent *a)
{
	struct ag_kubelet *k;
	int err;

	if (!a->cfg.kubelet.on)
		return 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->a = a;
	k->ino_ev.fn = on_inotify;
	k->retry_ev.fn = on_retry;
	snprintf(k->kubelet_sock, sizeof(k->kubelet_sock), "%s/%s", a->cfg.kubelet.dir,
		 KUBELET_SOCK);
	/* Not fatal: steering and the device-plugin sockets do not need the kubelet. */
	err = ag_mkdir_p(a->cfg.kubelet.dir);
	if (err) {
		ut_log(LOG_ERR,
		       "kubelet: cannot create %s: %s (kubelet.dir; in a pod, the hostPath mount): no device plugin until the agent restarts",
		       a->cfg.kubelet.dir, strerror(-err));
		free(k);
		return 0;
	}
	k->ioctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	k->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (k->ino_fd < 0 ||
	    inotify_add_watch(k->ino_fd, a->cfg.kubelet.dir,
			      IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) < 0) {
		err = -errno;
		ut_log(LOG_ERR,
		       "kubelet: cannot watch %s: %s: no device plugin until the agent restarts",
		       a->cfg.kubelet.dir, strerror(-err));
		if (k->ino_fd >= 0)
			close(k->ino_fd);
		if (k->ioctl_fd >= 0)
			close(k->ioctl_fd);
		free(k);
		return 0;
	}
	a->kubelet = k;
	arm_inotify(k);
	pools_sync(k);
	return 0;
}

void ag_kubelet_close(struct agent *a)
{
	struct ag_kubelet *k = a->kubelet;

	if (!k)
		return;
	a->kubelet = NULL;
	ag_grpc_clients_stop(a);
	ag_podres_close(a);
	for (int n = 0; n < AG_MAX_POOLS; n++)
		if (k->pools[n].used)
			pool_close(&k->pools[n]);
	ag_kubelet_mounts_close(k);
	k->closing = true;
	if (k->ioctl_fd >= 0)
		close(k->ioctl_fd);
	if (k->ino_armed || k->retry_armed) {
		/* The last of their completions (-ECANCELED) frees @k. */
		if (k->retry_armed)
			ut_loop_cancel(&a->loop, &k->retry_ev);
		if (k->ino_armed)
			ut_loop_cancel(&a->loop, &k->ino_ev);
		close(k->ino_fd);
	} else {
		close(k->ino_fd);
		free(k);
	}
}

void ag_kubelet_health(struct agent *a)
{
	struct ag_kubelet *k = a->kubelet;

	for (int n = 0; k && n < AG_MAX_POOLS; n++)
		if (k->pools[n].used)
			pool_update(k, &k->pools[n]);
}

void ag_kubelet_tick(struct agent *a)
{
	struct ag_kubelet *k = a->kubelet;
	double now = ut_now();

	ag_grpc_tick(a, now);
	if (!k)
		return;
	ag_podres_refresh(a);
	pools_sync(k);
	ag_kubelet_mounts_sync(k);
	for (int n = 0; n < AG_MAX_POOLS; n++) {
		struct ag_pool *p = &k->pools[n];

		if (!p->used)
			continue;
		pool_ensure(k, p);
		pool_update(k, p);
		if (!p->registered && !p->registering && now >= p->next_try &&
		    !access(k->kubelet_sock, F_OK))
			pool_register(k, p);
	}
}
