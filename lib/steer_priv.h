/* SPDX-License-Identifier: BSD-3-Clause */
/* The steer handle, shared by lib/steer.c (open, attach, pins, slots),
 * lib/steer_rules.c (the rule transactions) and lib/steer_owner.c (replace, check,
 * reattach, repin, owner); not installed. */
#ifndef XPILE_STEER_PRIV_H
#define XPILE_STEER_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <net/if.h>
#include <linux/types.h>

#include "steer_internal.h"
#include "xpile/steer.h"

struct xp_steer {
	char ifname[IF_NAMESIZE];
	int ifindex;
	char pin[PATH_MAX];
	char root[PATH_MAX];
	struct xdp_program *prog; /* set when we loaded it through libxdp */
	struct bpf_object *obj; /* set when we loaded it for a bpf_link */
	int prog_fd;
	int link_fd; /* the bpf_link it is attached through, or -1 (netlink) */
	__u32 prog_id;
	int fds[XP_M_NR];
	enum xp_steer_mode mode;
	bool legacy;
	int ncpu;
	__u64 pin_ino; /* inode of our program's pin: a new `load` pins a new one */
	__u32 seen_attached; /* XDP id last found running ours (the dispatcher's, or ours) */
	__u64 repin_wait_ns; /* CLOCK_MONOTONIC when a replace was seen attached, not yet pinned */
};

#define PROG_PIN "xp_steer"
#define LINK_PIN "xp_link"

/* The path of pin @name in @s's directory. */
void xp_steer_pin_path(const struct xp_steer *s, const char *name, char *buf, size_t len);
/* The id of program fd @fd (0 when it cannot be read). */
__u32 xp_steer_fd_prog_id(int fd);
/* The inode of @s's program pin (0 when none): a new `load` pins a new one. */
__u64 xp_steer_pin_inode(const struct xp_steer *s);
/* Whether program @id runs on @ifindex (alone, or in libxdp's dispatcher: *@legacy
 * false then). */
bool xp_steer_runs_on(int ifindex, __u32 id, bool *legacy);
/* 0 when @obj is a readable BPF ELF object; else one line naming it, -ENOEXEC or -errno. */
int xp_steer_check_obj_file(const char *obj);
/* Program @id's name, for messages. */
void xp_steer_prog_name(__u32 id, char *buf, size_t len);
/* Returns once no XDP program invocation can still read what was replaced. */
void xp_steer_grace_period(void);
/* The config map's one entry (struct xp_cfg, steer_abi.h): 0 or -errno. */
int xp_steer_read_cfg(struct xp_steer *s, struct xp_cfg *c);
int xp_steer_write_cfg(struct xp_steer *s, const struct xp_cfg *c);
/* Per-CPU array map @fd's entry @key (@vsz bytes of __u64 counters) summed over CPUs
 * into @sum: 0 or -errno. */
int xp_steer_percpu_sum(struct xp_steer *s, int fd, __u32 key, size_t vsz, void *sum);

#endif /* XPILE_STEER_PRIV_H */
