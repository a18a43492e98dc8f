// SPDX-License-Identifier: BSD-3-Clause
/*
 * The steer program's life after open (xpile/steer_owner.h): a new build in place of the
 * running one with the maps kept, the health check and its repairs (reattach, repin),
 * and who loaded it (engine or loader).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "steer_internal.h"
#include "steer_priv.h"
#include "xpile/bpffs.h"
#include "xpile/steer_owner.h"
#include "xpile/steer.h"

/* Whether program @id uses map @map_id: a replacement of ours shares our XSKMAP. */
static bool prog_uses_map(__u32 id, __u32 map_id)
{
	struct bpf_prog_info info = { 0 };
	__u32 ids[64], len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool uses = false;

	if (fd < 0)
		return false;
	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		for (__u32 i = 0; i < info.nr_map_ids && i < 64; i++)
			uses |= ids[i] == map_id;
	close(fd);
	return uses;
}

static __u32 fd_map_id(int fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Makes the fds libxdp owns for a program we loaded our own, so the program can be
 * swapped under @s: detach then goes by id, like for a steer opened from the pins. */
static int take_fds(struct xp_steer *s)
{
	int fds[XP_M_NR + 1], i, err = 0;

	if (!s->prog)
		return 0;
	for (i = 0; i <= XP_M_NR; i++) {
		fds[i] = fcntl(i < XP_M_NR ? s->fds[i] : s->prog_fd, F_DUPFD_CLOEXEC, 3);
		if (fds[i] < 0) {
			err = -errno;
			while (i--)
				close(fds[i]);
			return err;
		}
	}
	/* The object the program was made of (steer.c's one open) holds the same fds. */
	xdp_program__close(s->prog);
	s->prog = NULL;
	bpf_object__close(s->obj);
	s->obj = NULL;
	memcpy(s->fds, fds, sizeof(s->fds));
	s->prog_fd = fds[XP_M_NR];
	return 0;
}

/* A replace attaches the new program, then moves the pin to it: seen in between, the
 * program on our maps is judged again at later checks, this long at most. */
#define REPIN_WAIT_NS 2000000000ull

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * After `xpile-loader replace` the program at our pin runs here on our maps: it is ours
 * now, so whoever holds this steer (an engine) follows it instead of seeing a stranger.
 * 1: followed; 0: not ours; -EAGAIN: it runs on our XSKMAP but the pin does not hold it
 * yet (the replace is between its attach and its re-pin).
 */
static int follow_replace(struct xp_steer *s, __u32 id)
{
	char p[PATH_MAX + 32];
	int fd;

	if (!s->legacy || !prog_uses_map(id, fd_map_id(s->fds[XP_M_XSKS])) || take_fds(s))
		return 0;
	xp_steer_pin_path(s, PROG_PIN, p, sizeof(p));
	fd = bpf_obj_get(p);
	if (fd >= 0 && xp_steer_fd_prog_id(fd) != id) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		__u64 now = mono_ns();

		if (!s->repin_wait_ns)
			s->repin_wait_ns = now;
		return now - s->repin_wait_ns < REPIN_WAIT_NS ? -EAGAIN : 0;
	}
	s->repin_wait_ns = 0;
	close(s->prog_fd);
	s->prog_fd = fd;
	s->prog_id = id;
	s->pin_ino = xp_steer_pin_inode(s);
	return 1;
}

/* Opens @obj for a replace: plain libbpf (the single-program case attaches through
 * netlink), the program of the running one's name, maps still unbound. */
static int replace_open(struct xp_steer *s, const char *obj, struct bpf_object **bo,
			struct bpf_program **bp)
{
	char name[BPF_OBJ_NAME_LEN] = XP_STEER_PROG_NAME, why[128];
	struct bpf_program *p;
	int err = xp_steer_check_obj_file(obj);

	if (err)
		return err;
	xp_steer_prog_name(s->prog_id, name, sizeof(name));
	*bo = bpf_object__open_file(obj, NULL);
	err = libbpf_get_error(*bo);
	if (err) {
		*bo = NULL;
		libbpf_strerror(err, why, sizeof(why));
		xp_err("cannot open BPF object %s: %s; give the steer.o that `make` builds "
		       "(build/bpf/steer.o)\n",
		       obj, why);
		return err;
	}
	*bp = NULL;
	bpf_object__for_each_program(p, *bo)
	{
		bool it = !strcmp(bpf_program__name(p), name);

		bpf_program__set_autoload(p, it);
		if (it)
			*bp = p;
	}
	if (!*bp) {
		xp_err("%s: %s has no program %s (the running one's name); give the steer.o that "
		       "`make` builds (build/bpf/steer.o)\n",
		       s->ifname, obj, name);
		return -ENOEXEC;
	}
	return 0;
}

/* The program pin moves to the new program: in one step where bpffs can rename, else
 * unlinked and pinned again (a reader in between sees no pin and retries, like a load). */
static int repin_prog(struct xp_steer *s, int fd)
{
	char p[PATH_MAX + 32], tmp[PATH_MAX + 48];

	xp_steer_pin_path(s, PROG_PIN, p, sizeof(p));
	snprintf(tmp, sizeof(tmp), "%s.new", p);
	unlink(tmp);
	if (!bpf_obj_pin(fd, tmp) && !rename(tmp, p))
		return 0;
	unlink(tmp);
	unlink(p);
	return bpf_obj_pin(fd, p) ? -errno : 0;
}

int xp_steer_replace_prog(struct xp_steer *s, const struct xp_steer_replace_opts *opts)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	struct xp_steer_replace_opts oc;
	const struct xp_steer_migration *mig;
	struct bpf_object *bo = NULL;
	struct bpf_program *bp;
	struct xp_cfg c;
	char obj[PATH_MAX];
	__u32 running, next, old_id = s->prog_id;
	int err, fd, fds[XP_M_NR];

	if (!XP_OPTS_LOAD_LOG("steer replace", &oc, opts, xp_steer_replace_opts))
		return -EINVAL;
	if (!s->legacy) {
		/* The dispatcher's freplace links cannot be updated; a new dispatcher would be. */
		xp_err("%s: the steer program runs inside libxdp's dispatcher, where xpile cannot "
		       "replace it in place yet; unload and load it instead\n",
		       s->ifname);
		return -EOPNOTSUPP;
	}
	if (oc.bpf_obj)
		snprintf(obj, sizeof(obj), "%s", oc.bpf_obj);
	else if ((err = xp_bpf_obj_path("steer.o", obj, sizeof(obj))))
		return err;
	err = take_fds(s);
	err = err ?: xp_steer_read_cfg(s, &c);
	err = err ?: replace_open(s, obj, &bo, &bp);
	if (err)
		goto out;
	running = c.abi_version ?: 1;
	next = xp_steer_obj_version(bo);
	mig = running == next ? NULL : xp_steer_migration_find(running, next);
	memcpy(fds, s->fds, sizeof(fds));
	err = xp_steer_layout_check(s->ifname, fds, bo, running, next, mig);
	err = err ?: mig ? mig->run(fds, bo) : 0;
	for (int i = 0; !err && i < XP_M_NR; i++)
		err = bpf_map__reuse_fd(xp_steer_obj_map(bo, i), fds[i]);
	if (err)
		goto out;
	err = bpf_object__load(bo);
	if (err) {
		xp_err("%s: cannot load the new program from %s: %s\n", s->ifname, obj,
		       strerror(-err));
		goto out;
	}
	fd = bpf_program__fd(bp);
	/* The kernel swaps only if ours still runs: nobody else's program is replaced. */
	ao.old_prog_fd = s->prog_fd;
	if (bpf_xdp_attach(s->ifindex, fd,
			   XDP_FLAGS_REPLACE | (s->mode == XP_STEER_MODE_SKB ? XDP_FLAGS_SKB_MODE :
									       XDP_FLAGS_DRV_MODE),
			   &ao)) {
		err = -errno;
		xp_err("%s: replacing program id %u failed: %s%s\n", s->ifname, old_id,
		       strerror(-err),
		       err == -EEXIST ? " (another program replaced it meanwhile)" : "");
		goto out;
	}
	fd = dup(fd);
	if (fd < 0 || (err = repin_prog(s, fd))) {
		err = fd < 0 ? -errno : err;
		xp_err("%s: the new program runs but its pin at %s failed: %s; it runs unpinned "
		       "until xp_steer_repin() pins it again\n",
		       s->ifname, s->pin, strerror(-err));
	}
	if (fd >= 0) {
		close(s->prog_fd);
		s->prog_fd = fd;
		s->prog_id = xp_steer_fd_prog_id(fd);
		s->pin_ino = xp_steer_pin_inode(s);
	}
	if (mig) {
		memcpy(s->fds, fds, sizeof(fds));
		c.abi_version = next;
		xp_steer_write_cfg(s, &c);
	}
out:
	bpf_object__close(bo);
	return err;
}

int xp_steer_check(struct xp_steer *s, struct xp_steer_health *h)
{
	struct bpf_xdp_query_opts q = { .sz = sizeof(q) };
	char name[IF_NAMESIZE];
	__u32 id;

	memset(h, 0, sizeof(*h));
	if (!if_indextoname(s->ifindex, name)) {
		h->iface_gone = true;
		return 0;
	}
	if (bpf_xdp_query(s->ifindex, 0, &q))
		return -errno;
	id = q.prog_id ?: q.drv_prog_id ?: q.skb_prog_id;
	h->attached_id = id;
	/* The common case costs one netlink query: the same id as last time. */
	if (!id) {
		h->prog_gone = true;
	} else if (id != s->seen_attached) {
		int ours = id == s->prog_id || xp_steer_runs_on(s->ifindex, s->prog_id, NULL) ?
				   1 :
				   follow_replace(s, id);

		if (ours > 0)
			s->seen_attached = id;
		else if (ours == 0)
			h->prog_replaced = true;
		else /* -EAGAIN: nothing to tell yet, the pins neither: they move in a moment */
			return 0;
	}
	if (h->prog_replaced)
		xp_steer_prog_name(id, h->attached_name, sizeof(h->attached_name));
	if (xp_steer_pin_inode(s) != s->pin_ino) {
		h->pins_gone = !xp_steer_pin_inode(s);
		h->pins_replaced = !h->pins_gone;
	}
	return 0;
}

int xp_steer_reattach(struct xp_steer *s)
{
	__u32 flags = XDP_FLAGS_UPDATE_IF_NOEXIST |
		      (s->mode == XP_STEER_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	int err;

	if (s->link_fd >= 0) {
		/* The old link was detached (BPF_LINK_DETACH): a new one, pinned in its place. */
		LIBBPF_OPTS(bpf_link_create_opts, lo,
			    .flags = flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST);
		char p[PATH_MAX + 32];
		int fd = bpf_link_create(s->prog_fd, s->ifindex, BPF_XDP, &lo);

		err = fd < 0 ? -errno : 0;
		if (!err) {
			close(s->link_fd);
			s->link_fd = fd;
			xp_steer_pin_path(s, LINK_PIN, p, sizeof(p));
			unlink(p);
			if (bpf_obj_pin(fd, p))
				xp_warn("%s: cannot pin the new link at %s: %s\n", s->ifname, p,
					strerror(errno));
		}
	} else if (s->legacy) {
		err = bpf_xdp_attach(s->ifindex, s->prog_fd, flags, NULL) ? -errno : 0;
	} else if (s->prog) {
		err = xdp_program__attach(
			s->prog, s->ifindex,
			s->mode == XP_STEER_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	} else {
		err = -EOPNOTSUPP;
	}
	if (err) {
		xp_err("%s: cannot re-attach program id %u: %s\n", s->ifname, s->prog_id,
		       strerror(-err));
		return err;
	}
	s->seen_attached = 0;
	return 0;
}

int xp_steer_repin(struct xp_steer *s)
{
	char p[PATH_MAX + 32];
	int err = xp_mkdir_p(s->pin);

	for (int i = 0; !err && i < XP_M_NR; i++) {
		xp_steer_pin_path(s, xp_steer_map_names[i], p, sizeof(p));
		if (bpf_obj_pin(s->fds[i], p) && errno != EEXIST)
			err = -errno;
	}
	xp_steer_pin_path(s, PROG_PIN, p, sizeof(p));
	if (!err && bpf_obj_pin(s->prog_fd, p))
		err = -errno;
	if (err) {
		xp_err("%s: cannot pin again at %s: %s\n", s->ifname, s->pin, strerror(-err));
		return err;
	}
	s->pin_ino = xp_steer_pin_inode(s);
	return 0;
}

int xp_steer_owner_set(struct xp_steer *s, bool engine)
{
	struct xp_cfg c;
	int err = xp_steer_read_cfg(s, &c);

	if (err)
		return err;
	c.flags = engine ? c.flags | XP_CFG_F_ENGINE : c.flags & ~XP_CFG_F_ENGINE;
	return xp_steer_write_cfg(s, &c);
}

bool xp_steer_engine_loaded(struct xp_steer *s)
{
	struct xp_cfg c;

	return !xp_steer_read_cfg(s, &c) && (c.flags & XP_CFG_F_ENGINE);
}

__u32 xp_steer_prog_id(const struct xp_steer *s)
{
	return s->prog_id;
}
