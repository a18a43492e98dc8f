// SPDX-License-Identifier: BSD-3-Clause
/*
 * Someone else's XDP program, for the agent's re-attach suite (test_agent_reattach.sh):
 * attaches a two-instruction program that drops everything ("xp_foreign") to IFACE
 * through netlink, as `ip link set dev IFACE xdp obj ...` would (drv, skb), or
 * through a bpf_link of its own in native mode (link), then watches the interface
 * every millisecond and reports how long the program stayed there.
 *
 *   xdpforeign IFACE drv|skb|link SECONDS [LINK_ID]
 *
 * With LINK_ID, first detaches that bpf_link (BPF_LINK_DETACH, as `bpftool link
 * detach` does), so that the two steps are microseconds apart.
 * Prints "attached id N", then "replaced after MS ms" (exit 0) once another program
 * (or none) runs there, or "still attached after SECONDS s" (exit 1). A netlink
 * program is left attached in the second case (the suite's namespace takes it down);
 * a link goes with this process.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), flags;
	double t0, limit;
	int ifindex, fd;

	bool link = argc > 2 && !strcmp(argv[2], "link");

	if ((argc != 4 && argc != 5) ||
	    (strcmp(argv[2], "drv") && strcmp(argv[2], "skb") && !link)) {
		fprintf(stderr, "usage: xdpforeign IFACE drv|skb|link SECONDS [LINK_ID]\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[1]);
	limit = atof(argv[3]);
	if (!ifindex) {
		fprintf(stderr, "xdpforeign: no interface %s\n", argv[1]);
		return 2;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xp_foreign", "GPL", prog, 2, NULL);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "xdpforeign: cannot load: %s\n", strerror(errno));
		return 1;
	}
	if (argc == 5) {
		int lfd = bpf_link_get_fd_by_id((__u32)atoi(argv[4]));

		if (lfd < 0 || bpf_link_detach(lfd)) {
			fprintf(stderr, "xdpforeign: cannot detach link %s: %s\n", argv[4],
				strerror(errno));
			return 1;
		}
		close(lfd);
	}
	flags = XDP_FLAGS_UPDATE_IF_NOEXIST |
		(strcmp(argv[2], "skb") ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
	if (link) {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);

		if (bpf_link_create(fd, ifindex, BPF_XDP, &lo) < 0) {
			fprintf(stderr, "xdpforeign: cannot link to %s: %s\n", argv[1],
				strerror(errno));
			return 1;
		}
	} else if (bpf_xdp_attach(ifindex, fd, flags, NULL)) {
		fprintf(stderr, "xdpforeign: cannot attach to %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	t0 = now();
	printf("attached id %u\n", info.id);
	fflush(stdout);
	while (now() - t0 < limit) {
		__u32 id;

		if (bpf_xdp_query(ifindex, 0, &q))
			break;
		id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		if (id != info.id) {
			printf("replaced after %.1f ms\n", (now() - t0) * 1e3);
			return 0;
		}
		usleep(1000);
	}
	printf("still attached after %s s\n", argv[3]);
	return 1;
}
