// SPDX-License-Identifier: BSD-3-Clause
/*
 * What Allocate mounts into a pod, per interface, and the buffers an AllocateResponse
 * points to. The kubelet makes the mounts (the pod spec names no hostPath): the
 * interface's directory of device-plugin sockets, DIR/NETDEV, read-only at DPDK's
 * default /tmp/afxdp_dp/NETDEV (a directory, not the socket itself: an agent restart
 * binds a new socket there, which a bind mount of the old file would never see).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubelet_types.h"
#include "kubemount.h"
#include "pinmap.h"

#define POD_DP_DIR "/tmp/afxdp_dp" /* DPDK's DP_BASE_PATH, in the pod */

struct ag_alloc_buf *ag_alloc_buf_new(size_t containers, size_t devices)
{
	struct ag_alloc_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->mounts = calloc(devices + 1, sizeof(*b->mounts));
	b->mountp = calloc(devices + 1, sizeof(void *)); /* pointers */
	b->envs = calloc(containers * 4 + 1, sizeof(*b->envs));
	b->envp = calloc(containers * 4 + 1, sizeof(void *));
	/* per container: the queue and socket lists and four variables; per mount, two
	 * paths */
	b->strs = calloc(containers * 10 + devices * 2 + 1, sizeof(*b->strs));
	if (!b->mounts || !b->mountp || !b->envs || !b->envp || !b->strs) {
		ag_alloc_buf_free(b);
		return NULL;
	}
	return b;
}

void ag_alloc_buf_free(struct ag_alloc_buf *b)
{
	if (!b)
		return;
	for (size_t n = 0; n < b->nstrs; n++)
		free(b->strs[n]);
	free(b->strs);
	free(b->mounts);
	free(b->mountp);
	free(b->envs);
	free(b->envp);
	free(b);
}

char *ag_alloc_buf_keep(struct ag_alloc_buf *b, char *s)
{
	if (s)
		b->strs[b->nstrs++] = s;
	return s;
}

static char *keep_printf(struct ag_alloc_buf *b, const char *fmt, const char *x, const char *y)
{
	char *s = NULL;

	if (asprintf(&s, fmt, x, y) < 0)
		return NULL;
	return ag_alloc_buf_keep(b, s);
}

int ag_kubelet_mount(struct ag_kubelet *k, const struct ag_iface *i, V1beta1__Mount *m,
		     struct ag_alloc_buf *b, char *why, size_t len)
{
	char pin[PATH_MAX];

	v1beta1__mount__init(m);
	/* Pinned-map mode: the map itself, where DPDK looks for it (pinmap.c says why
	 * not the bpffs it is pinned in). */
	if (i->pinned && !ag_pinmap_file(k->a, i, pin, sizeof(pin))) {
		m->container_path = keep_printf(b, "%s/%s/xsks_map", POD_DP_DIR, i->name);
		m->host_path = keep_printf(b, "%s%s", pin, "");
	} else {
		m->container_path = keep_printf(b, "%s/%s", POD_DP_DIR, i->name);
		m->host_path = keep_printf(b, "%s/%s", k->a->cfg.dp_dir, i->name);
	}
	m->read_only = true;
	if (!m->container_path || !m->host_path) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	return 0;
}

void ag_kubelet_mounts_sync(struct ag_kubelet *k)
{
}

void ag_kubelet_mounts_close(struct ag_kubelet *k)
{
}
