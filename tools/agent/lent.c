// SPDX-License-Identifier: BSD-3-Clause
/*
 * What the rest of the agent asks of a netdev lent to a pod (lend.c has the contract):
 * whether a lend record says it is away, and whether our program still runs on it.
 * Apart from lend.c, which lends and takes back and tells the watch and the kubelet
 * side, so that those can ask this without a circle.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "agent.h"
#include "lent.h"

int ag_lent_path(const char *dp_dir, const char *name, char *p, size_t len)
{
	return snprintf(p, len, "%s/%s/lent", dp_dir, name) >= (int)len ? -ENAMETOOLONG : 0;
}

bool ag_lent_recorded(const char *dp_dir, const char *name)
{
	char p[PATH_MAX];

	return !ag_lent_path(dp_dir, name, p, sizeof(p)) && !access(p, F_OK);
}

bool ag_lent_attached(const struct ag_iface *i)
{
	struct bpf_link_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = xp_steer_link_fd(i->steer);

	/* Attached through netlink (adopted, not a link): nothing tells; say yes. */
	if (fd < 0)
		return true;
	return !bpf_obj_get_info_by_fd(fd, &info, &len) && info.xdp.ifindex;
}
