/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What Allocate answers with (kubemount.c): the mounts and environment of one
 * AllocateResponse, kept together and freed together.
 */
#ifndef XPILE_AGENT_KUBEMOUNT_H
#define XPILE_AGENT_KUBEMOUNT_H

#include <stddef.h>

#include "agent.h"
#include "deviceplugin.pb-c.h"

struct ag_kubelet;

/* What one AllocateResponse points to, freed together. */
struct ag_alloc_buf {
	V1beta1__Mount *mounts;
	V1beta1__Mount **mountp;
	size_t nmounts;
	V1beta1__ContainerAllocateResponse__EnvsEntry *envs;
	V1beta1__ContainerAllocateResponse__EnvsEntry **envp;
	size_t nenvs;
	char **strs;
	size_t nstrs;
};
struct ag_alloc_buf *ag_alloc_buf_new(size_t containers, size_t devices);
void ag_alloc_buf_free(struct ag_alloc_buf *b);
/* Keeps @s (malloc'd) until the buffer is freed; NULL when @s is NULL. */
char *ag_alloc_buf_keep(struct ag_alloc_buf *b, char *s);

/* kubemount.c: what the pod gets mounted for interface @i: its socket directory, or
 * in pinned-map mode its bpffs holding xsks_map. 0, or -1 with @why. */
int ag_kubelet_mount(struct ag_kubelet *k, const struct ag_iface *i, V1beta1__Mount *m,
		     struct ag_alloc_buf *b, char *why, size_t len);
/* Pinned-map mode: each such interface's bpffs and xsks_map in place (the tick). */
void ag_kubelet_mounts_sync(struct ag_kubelet *k);
void ag_kubelet_mounts_close(struct ag_kubelet *k);

#endif /* XPILE_AGENT_KUBEMOUNT_H */
