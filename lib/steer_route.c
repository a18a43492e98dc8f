// SPDX-License-Identifier: BSD-3-Clause
/*
 * The route action's maps (bpf/route.h): found through the loaded program, since they
 * are not pinned (their contents belong to whoever set the action, and a program
 * loaded anew must not route by ports a former owner named).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "log_internal.h"
#include "steer_priv.h"

#define VIA_MAP "xp_route_via"
#define CNT_MAP "xp_route_cnt"
#define GEN_MAP "xp_route_gen"
#define PROG_MAPS_MAX 64
#define VIA_MAX_TEXT "256"
_Static_assert(XP_ROUTE_VIA_MAX == 256, "VIA_MAX_TEXT");

/* An fd of the program's map named @name (the caller closes it), or -ENOENT. */
static int prog_map_fd(const struct xp_steer *s, const char *name)
{
	__u32 ids[PROG_MAPS_MAX], len;
	struct bpf_prog_info pi;
	int fd;

	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = PROG_MAPS_MAX;
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(s->prog_fd, &pi, &len))
		return -errno;
	for (__u32 i = 0; i < pi.nr_map_ids && i < PROG_MAPS_MAX; i++) {
		struct bpf_map_info mi;
		__u32 mlen = sizeof(mi);

		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	xp_err("%s: the steer program (id %u) has no map %s: it predates the route action; "
	       "load the steer.o of this build (xpile-loader replace)\n",
	       s->ifname, s->prog_id, name);
	return -ENOENT;
}

int xp_steer_route_via_set(struct xp_steer *s, __u32 ifindex, const struct xp_route_via *via)
{
	int fd, err = 0;

	if (!s || !via || !ifindex || !via->ifindex) {
		xp_err("route via: an interface index and a port are needed\n");
		return -EINVAL;
	}
	fd = prog_map_fd(s, VIA_MAP);
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(fd, &ifindex, via, BPF_ANY)) {
		err = errno == E2BIG || errno == ENOSPC ? -E2BIG : -errno;
		xp_err("%s: route via ifindex %u: %s%s\n", s->ifname, ifindex, strerror(-err),
		       err == -E2BIG ? " (the map holds " VIA_MAX_TEXT " devices)" : "");
	}
	close(fd);
	return err;
}

int xp_steer_route_via_fd(struct xp_steer *s)
{
	return prog_map_fd(s, VIA_MAP);
}

int xp_steer_route_via_clear(struct xp_steer *s, __u32 ifindex)
{
	int fd = prog_map_fd(s, VIA_MAP), err = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_delete_elem(fd, &ifindex) && errno != ENOENT)
		err = -errno;
	close(fd);
	return err;
}

int xp_steer_route_gen_fd(struct xp_steer *s)
{
	return prog_map_fd(s, GEN_MAP);
}

int xp_steer_route_stats_read(struct xp_steer *s, struct xp_route_stats *out)
{
	int fd = prog_map_fd(s, CNT_MAP), err;
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	if (fd < 0)
		return fd;
	/* A program of an earlier build (a handover's) has the counters without the
	 * cache's: read what it has, the rest reads 0. */
	memset(&mi, 0, sizeof(mi));
	memset(out, 0, sizeof(*out));
	err = bpf_obj_get_info_by_fd(fd, &mi, &len) ? -errno : 0;
	if (!err)
		err = xp_steer_percpu_sum(
			s, fd, 0, mi.value_size < sizeof(*out) ? mi.value_size : sizeof(*out), out);
	close(fd);
	return err;
}

const char *xp_route_miss_name(__u32 why)
{
	static const char *const names[XP_RM_MAX] = {
		[1] = "blackhole",
		[2] = "unreachable",
		[3] = "prohibit",
		[4] = "not_forwarded",
		[5] = "forwarding_off",
		[6] = "encapsulation",
		[7] = "no_neigh",
		[8] = "frag_needed",
		[9] = "no_src_addr",
		[XP_RM_TTL] = "ttl",
		[XP_RM_OPTIONS] = "ip_options",
		[XP_RM_FRAGMENT] = "fragment",
		[XP_RM_NOT_IP] = "non_ip",
		[XP_RM_NOT_OURS] = "not_ours",
		[XP_RM_NO_PORT] = "no_port",
	};

	return why < XP_RM_MAX && names[why] ? names[why] : "?";
}
