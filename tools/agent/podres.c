// SPDX-License-Identifier: BSD-3-Clause
/*
 * Who holds which queue: the kubelet's PodResources API (v1 List, on
 * kubelet.pod_resources), asked at every tick and soon after each Allocate, from the
 * loop like every gRPC call of the agent (grpc.c). The answer replaces the cache
 * whole; a failed List keeps the last good one for 30 s, then nobody holds anything
 * (a check that cannot be made refuses).
 *
 * A client names itself in /connect,<hostname>: in a pod, the hostname is the pod's
 * name (the kubelet cuts it at 63 bytes, DPDK at 54 in its 64-byte request), so a
 * name of 54 bytes or more matches a pod whose name starts with it. Two pods of one
 * name in two namespaces on a node both match: each for its own queues.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "grpc.h"
#include "podres.h"
#include "podresources.pb-c.h"

#define PODRES_MAX 1024 /* allocated devices remembered */
#define PODRES_STALE 30.0
#define PODRES_TIMEOUT 2.0

struct ag_podres_dev {
	char pod[254];
	char ns[64];
	char iface[IF_NAMESIZE];
	__u32 queue;
};

struct ag_podres {
	struct ag_podres_dev devs[PODRES_MAX];
	unsigned int ndevs;
	double updated; /* last good List */
	bool inflight, warned;
};

bool ag_podres_on(const struct agent *a)
{
	return a->kubelet; /* the kubelet side runs (its directory could be watched) */
}

static void listed(void *ctx, int status, const char *message, const uint8_t *msg, size_t len)
{
	struct agent *a = ctx;
	struct ag_podres *r = a->podres;
	V1__ListPodResourcesResponse *rep;
	size_t plen = strlen(a->cfg.kubelet.prefix);

	if (!r)
		return;
	r->inflight = false;
	if (status == AG_GRPC_CANCELLED)
		return;
	rep = status ? NULL : v1__list_pod_resources_response__unpack(NULL, len, msg);
	if (!rep) {
		if (!r->warned)
			ut_warn("kubelet: PodResources List at %s failed (%s): /connect and /xsk_socket are checked against the last answer",
				a->cfg.kubelet.pod_resources, status ? message : "malformed reply");
		r->warned = true;
		return;
	}
	r->warned = false;
	r->ndevs = 0;
	for (size_t p = 0; p < rep->n_pod_resources; p++) {
		const V1__PodResources *pr = rep->pod_resources[p];

		for (size_t c = 0; c < pr->n_containers; c++)
			for (size_t d = 0; d < pr->containers[c]->n_devices; d++) {
				const V1__ContainerDevices *cd = pr->containers[c]->devices[d];

				/* Ours: PREFIX/POOL. */
				if (strncmp(cd->resource_name, a->cfg.kubelet.prefix, plen) ||
				    cd->resource_name[plen] != '/')
					continue;
				for (size_t k = 0; k < cd->n_device_ids && r->ndevs < PODRES_MAX;
				     k++) {
					struct ag_podres_dev *v = &r->devs[r->ndevs];
					const char *id = cd->device_ids[k],
						   *colon = strrchr(id, ':');

					if (!colon || colon == id || colon - id >= IF_NAMESIZE)
						continue;
					snprintf(v->pod, sizeof(v->pod), "%s", pr->name);
					snprintf(v->ns, sizeof(v->ns), "%s", pr->namespace_);
					snprintf(v->iface, sizeof(v->iface), "%.*s",
						 (int)(colon - id), id);
					v->queue = (__u32)strtoul(colon + 1, NULL, 10);
					r->ndevs++;
				}
			}
	}
	r->updated = ut_now();
	v1__list_pod_resources_response__free_unpacked(rep, NULL);
}

void ag_podres_refresh(struct agent *a)
{
	static const uint8_t none[1];
	struct ag_podres *r = a->podres;

	if (!ag_podres_on(a))
		return;
	if (!r && !(r = a->podres = calloc(1, sizeof(*r))))
		return;
	if (r->inflight)
		return;
	/* An empty ListPodResourcesRequest is zero bytes. */
	if (!ag_grpc_unary(a, a->cfg.kubelet.pod_resources, "/v1.PodResourcesLister/List", none, 0,
			   PODRES_TIMEOUT, listed, a))
		r->inflight = true;
	else if (!r->warned && (r->warned = true))
		ut_warn("kubelet: cannot reach the PodResources API at %s (kubelet.pod_resources): /connect is refused until it answers",
			a->cfg.kubelet.pod_resources);
}

void ag_podres_close(struct agent *a)
{
	free(a->podres);
	a->podres = NULL;
}

static bool fresh(const struct ag_podres *r)
{
	return r && r->updated > 0 && ut_now() - r->updated < PODRES_STALE;
}

static bool pod_is(const char *pod, const char *host)
{
	size_t n = strlen(host);

	return !strcmp(pod, host) || (n >= 54 && !strncmp(pod, host, n));
}

bool ag_podres_host_ok(struct agent *a, const struct ag_iface *i, const char *host)
{
	const struct ag_podres *r = a->podres;

	for (unsigned int k = 0; fresh(r) && k < r->ndevs; k++)
		if (!strcmp(r->devs[k].iface, i->name) && pod_is(r->devs[k].pod, host))
			return true;
	return false;
}

bool ag_podres_queue_ok(struct agent *a, const struct ag_iface *i, const char *host, __u32 q)
{
	const struct ag_podres *r = a->podres;

	for (unsigned int k = 0; fresh(r) && k < r->ndevs; k++)
		if (!strcmp(r->devs[k].iface, i->name) && r->devs[k].queue == q &&
		    pod_is(r->devs[k].pod, host))
			return true;
	return false;
}

size_t ag_podres_metrics(struct agent *a, char *out, size_t len)
{
	const struct ag_podres *r = a->podres;
	size_t n = 0;

	if (!ag_podres_on(a) || !len)
		return 0;
	n += (size_t)snprintf(
		out, len,
		"# HELP xpile_queue_allocated Queues the kubelet allocated, by pod (PodResources).\n"
		"# TYPE xpile_queue_allocated gauge\n");
	for (unsigned int k = 0; fresh(r) && k < r->ndevs && n < len; k++) {
		const struct ag_podres_dev *d = &r->devs[k];

		/* Kubernetes names: DNS labels and subdomains, nothing to escape. */
		n += (size_t)snprintf(
			out + n, len - n,
			"xpile_queue_allocated{interface=\"%s\",queue=\"%u\",namespace=\"%s\",pod=\"%s\"} 1\n",
			d->iface, d->queue, d->ns, d->pod);
	}
	return n < len ? n : len - 1;
}
