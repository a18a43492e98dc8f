// SPDX-License-Identifier: BSD-3-Clause
/*
 * Opening, attaching, pinning and finding the steer program; XSKMAP slots (the rule
 * transactions are lib/steer_rules.c's). The pin directory is the rendezvous point: whoever loads pins the
 * program and every map there, and anyone else (loader subcommands, the engine,
 * possibly in other `ip netns exec` invocations) opens the pins.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/if_link.h>
#include <linux/membarrier.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "steer_internal.h"
#include "steer_priv.h"
#include "xpile/bpffs.h"
#include "xpile/steer.h"

const char *const xp_steer_map_names[XP_M_NR] = {
	[XP_M_CFG] = "xp_cfg",	   [XP_M_SETCFG] = "xp_setcfg",	    [XP_M_SETS] = "xp_sets",
	[XP_M_RULES] = "xp_rules", [XP_M_RULE_CNT] = "xp_rule_cnt", [XP_M_XSKS] = "xp_xsks",
};

struct bpf_map *xp_steer_obj_map(const struct bpf_object *bo, int i)
{
	return bpf_object__find_map_by_name(bo,
					    i == XP_M_CFG ? XP_CFG_SECTION : xp_steer_map_names[i]);
}

void xp_steer_grace_period(void)
{
	/* MEMBARRIER_CMD_GLOBAL runs synchronize_rcu(): every XDP program invocation
	 * that could have read the old active set has finished when it returns. */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0) {
		xp_dbg("membarrier: %s; falling back to a 100 ms wait\n", strerror(errno));
		usleep(100000);
	}
}

void xp_steer_pin_path(const struct xp_steer *s, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", s->pin, name);
}

/* Removes every xp_* pin in our directory (also those of an older layout) and the
 * directories that become empty, up to the bpffs root. */
static void unpin_all(struct xp_steer *s)
{
	char p[PATH_MAX + 300], stop[PATH_MAX + 8];
	DIR *d = opendir(s->pin);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "xp_", 3)) {
			xp_steer_pin_path(s, de->d_name, p, sizeof(p));
			unlink(p);
		}
	if (d)
		closedir(d);
	snprintf(stop, sizeof(stop), "%s", s->root);
	xp_rmdir_up(s->pin, stop);
	/* libxdp's lock directory, if it made one and nothing else uses it. */
	snprintf(p, sizeof(p), "%s/xdp", s->root);
	rmdir(p);
}

static void close_fds(struct xp_steer *s)
{
	/* libxdp and libbpf own the fds of what they loaded */
	bool owned = s->prog || s->obj;

	for (int i = 0; i < XP_M_NR; i++)
		if (s->fds[i] >= 0 && !owned)
			close(s->fds[i]);
	if (s->prog_fd >= 0 && !owned)
		close(s->prog_fd);
	if (s->link_fd >= 0)
		close(s->link_fd);
	for (int i = 0; i < XP_M_NR; i++)
		s->fds[i] = -1;
	s->prog_fd = -1;
	s->link_fd = -1;
}

__u32 xp_steer_fd_prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

__u64 xp_steer_pin_inode(const struct xp_steer *s)
{
	char p[PATH_MAX + 32];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", s->pin, PROG_PIN);
	return stat(p, &st) ? 0 : st.st_ino;
}

/* Whether program @id runs on @ifindex, alone or inside libxdp's dispatcher. */
bool xp_steer_runs_on(int ifindex, __u32 id, bool *legacy)
{
	struct bpf_xdp_query_opts q = { .sz = sizeof(q) };
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	bool found = false;

	/* Attached by itself (a bpf_link, netlink): the kernel's own answer, for which
	 * CAP_NET_ADMIN is enough. libxdp's look takes each program by id, which needs
	 * CAP_SYS_ADMIN; without it an agent with the DaemonSet's capabilities took its
	 * own program for a stranger and its pins for stale ones. */
	if (!bpf_xdp_query(ifindex, 0, &q) && id &&
	    (q.prog_id == id || q.drv_prog_id == id || q.skb_prog_id == id)) {
		if (legacy)
			*legacy = true;
		return true;
	}
	mp = xdp_multiprog__get_from_ifindex(ifindex); /* in a dispatcher, then */
	if (libxdp_get_error(mp) || !mp)
		return false;
	if (legacy)
		*legacy = xdp_multiprog__is_legacy(mp);
	p = xdp_multiprog__main_prog(mp);
	if (p && xdp_program__id(p) == id)
		found = true;
	for (p = NULL; !found && (p = xdp_multiprog__next_prog(p, mp));)
		found = xdp_program__id(p) == id;
	xdp_multiprog__close(mp);
	return found;
}

static int open_pins(struct xp_steer *s)
{
	char p[PATH_MAX + 32];

	xp_steer_pin_path(s, PROG_PIN, p, sizeof(p));
	s->prog_fd = bpf_obj_get(p);
	if (s->prog_fd < 0)
		return -errno;
	s->prog_id = xp_steer_fd_prog_id(s->prog_fd);
	s->pin_ino = xp_steer_pin_inode(s);
	xp_steer_pin_path(s, LINK_PIN, p, sizeof(p));
	s->link_fd = bpf_obj_get(p); /* none: attached through netlink */
	for (int i = 0; i < XP_M_NR; i++) {
		xp_steer_pin_path(s, xp_steer_map_names[i], p, sizeof(p));
		s->fds[i] = bpf_obj_get(p);
		if (s->fds[i] < 0) {
			int err = -errno;

			xp_err("%s: pin %s missing (%s)\n", s->ifname, p, strerror(-err));
			return err;
		}
	}
	return 0;
}

int xp_steer_read_cfg(struct xp_steer *s, struct xp_cfg *c)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(s->fds[XP_M_CFG], &zero, c) ? -errno : 0;
}

int xp_steer_write_cfg(struct xp_steer *s, const struct xp_cfg *c)
{
	__u32 zero = 0;

	return bpf_map_update_elem(s->fds[XP_M_CFG], &zero, c, BPF_ANY) ? -errno : 0;
}

static int open_existing(struct xp_steer *s)
{
	struct xp_cfg c;
	int err = open_pins(s);

	if (err == -ENOENT) {
		xp_err("%s: xpile steer program not loaded (nothing pinned at %s)\n", s->ifname,
		       s->pin);
		return err;
	}
	if (err)
		return err;
	err = xp_steer_read_cfg(s, &c);
	if (err)
		return err;
	if (c.ifindex != (__u32)s->ifindex ||
	    !xp_steer_runs_on(s->ifindex, s->prog_id, &s->legacy)) {
		xp_err("%s: pins at %s are stale (program not attached to this interface)\n",
		       s->ifname, s->pin);
		return -ESTALE;
	}
	s->mode = c.mode;
	return 0;
}

static bool in_dispatcher(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	bool multi;

	if (libxdp_get_error(mp) || !mp)
		return false;
	multi = !xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return multi;
}

void xp_steer_prog_name(__u32 id, char *buf, size_t len)
{
	struct bpf_prog_info info = { 0 };
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen))
		snprintf(buf, len, "%s", info.name);
	close(fd);
}

static int detach_foreign(struct xp_steer *s)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(s->ifindex);
	int err;

	if (libxdp_get_error(mp) || !mp)
		return 0;
	err = xdp_multiprog__detach(mp);
	xdp_multiprog__close(mp);
	if (err)
		xp_err("%s: cannot detach the XDP program in place: %s\n", s->ifname,
		       strerror(-err));
	return err;
}

/* Largest MTU whose frames fit one page after XDP headroom and skb_shared_info. */
#define XP_ONE_PAGE_MTU 3498

static int ifmtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;

	if (fd < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/* A wrong --obj fails here with the cause, not as libbpf's "Unknown error 4001". */
int xp_steer_check_obj_file(const char *obj)
{
	unsigned char magic[4] = { 0 };
	int fd = open(obj, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0) {
		err = -errno;
		xp_err("cannot open BPF object %s: %s\n", obj, strerror(-err));
		return err;
	}
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n != sizeof(magic) || memcmp(magic, "\177ELF", 4)) {
		xp_err("%s is not a BPF ELF object (no ELF header); give the steer.o that `make` "
		       "builds (build/bpf/steer.o)\n",
		       obj);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * The one open of both attach paths: @obj as a BPF object into s->obj, only the program
 * of section @sec to be loaded, every map of xpile's steer program there. The libxdp
 * path makes its program of this object (which stays ours to close), the bpf_link path
 * loads it itself, so a bad file gets the same line whichever path asked.
 */
static int open_obj(struct xp_steer *s, const char *obj, const char *sec, struct bpf_program **out)
{
	struct bpf_program *p, *want = NULL;
	char why[128];
	int err;

	s->obj = bpf_object__open_file(obj, NULL);
	err = libbpf_get_error(s->obj);
	if (err) {
		s->obj = NULL;
		libbpf_strerror(err, why, sizeof(why));
		xp_err("cannot open BPF object %s: %s; give the steer.o that `make` builds "
		       "(build/bpf/steer.o)\n",
		       obj, why);
		return err;
	}
	bpf_object__for_each_program(p, s->obj)
	{
		bool match = !strcmp(bpf_program__section_name(p), sec);

		bpf_program__set_autoload(p, match);
		if (match && !want)
			want = p;
	}
	for (int i = 0; want && i < XP_M_NR; i++)
		if (!xp_steer_obj_map(s->obj, i)) {
			xp_err("%s is a BPF object but not xpile's steer program (it has no map %s); "
			       "give the steer.o that `make` builds (build/bpf/steer.o)\n",
			       obj, xp_steer_map_names[i]);
			return -ENOEXEC;
		}
	if (!want) {
		xp_err("%s is a BPF object but not xpile's steer program (no %s program); give the "
		       "steer.o that `make` builds (build/bpf/steer.o)\n",
		       obj, sec);
		return -ENOEXEC;
	}
	*out = want;
	return 0;
}

/* The program @want of s->obj alone, loaded by libbpf and attached through a bpf_link
 * in the mode asked (auto: native, else generic). */
static int attach_link(struct xp_steer *s, const struct xp_steer_opts *o, const char *obj,
		       struct bpf_program *want)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	char why[128];
	int err;

	err = bpf_object__load(s->obj);
	if (err) {
		libbpf_strerror(err, why, sizeof(why));
		xp_err("%s: cannot load %s: %s\n", s->ifname, obj, why);
		return err;
	}
	s->prog_fd = bpf_program__fd(want);
	lo.flags = o->mode == XP_STEER_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	s->link_fd = bpf_link_create(s->prog_fd, s->ifindex, BPF_XDP, &lo);
	if (s->link_fd < 0 && o->mode == XP_STEER_MODE_AUTO && errno != EBUSY) {
		xp_info("%s: native XDP link failed (%s), using generic (skb) mode\n", s->ifname,
			strerror(errno));
		lo.flags = XDP_FLAGS_SKB_MODE;
		s->link_fd = bpf_link_create(s->prog_fd, s->ifindex, BPF_XDP, &lo);
	}
	if (s->link_fd < 0) {
		err = -errno;
		if (err == -EPERM)
			xp_err("%s: attaching XDP needs CAP_NET_ADMIN and CAP_BPF; run as root\n",
			       s->ifname);
		else if (err == -EBUSY)
			xp_err("%s: an XDP program is attached already (a bpf_link cannot replace "
			       "a netlink attach); remove it: ip link set dev %s xdp off\n",
			       s->ifname, s->ifname);
		else
			xp_err("%s: XDP link attach failed: %s\n", s->ifname, strerror(-err));
		return err;
	}
	s->mode = lo.flags == XDP_FLAGS_SKB_MODE ? XP_STEER_MODE_SKB : XP_STEER_MODE_NATIVE;
	s->prog_id = xp_steer_fd_prog_id(s->prog_fd);
	s->legacy = true;
	return 0;
}

static int attach(struct xp_steer *s, const struct xp_steer_opts *o)
{
	enum xdp_attach_mode m = o->mode == XP_STEER_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	struct bpf_program *want;
	char obj[PATH_MAX];
	int err, frags;

	if (o->bpf_obj)
		snprintf(obj, sizeof(obj), "%s", o->bpf_obj);
	else if ((err = xp_bpf_obj_path("steer.o", obj, sizeof(obj))))
		return err;
	frags = o->sz > offsetof(struct xp_steer_opts, frags) ? o->frags : 0;
	if (!frags)
		frags = ifmtu(s->ifname) > XP_ONE_PAGE_MTU ? 1 : -1;
	err = xp_steer_check_obj_file(obj);
	if (err)
		return err;
	err = open_obj(s, obj, frags > 0 ? "xdp.frags" : "xdp", &want);
	if (err)
		return err;
	if (o->link)
		return attach_link(s, o, obj, want);
	s->prog = xdp_program__from_bpf_obj(s->obj, bpf_program__section_name(want));
	err = libxdp_get_error(s->prog);
	if (err) {
		s->prog = NULL;
		xp_err("%s: libxdp cannot take the program of %s: %s\n", s->ifname, obj,
		       strerror(-err));
		return err;
	}
	/* libbpf applies the xdp.frags flag only at load time; tell libxdp up front so a
	 * dispatcher, where there is one, is built frags-capable too. */
	if (frags > 0)
		xdp_program__set_xdp_frags_support(s->prog, true);
	err = xdp_program__attach(s->prog, s->ifindex, m, 0);
	if (err && o->mode == XP_STEER_MODE_AUTO) {
		xp_info("%s: native XDP failed (%s), using generic (skb) mode\n", s->ifname,
			strerror(-err));
		m = XDP_MODE_SKB;
		err = xdp_program__attach(s->prog, s->ifindex, m, 0);
	}
	if (err) {
		if (err == -EPERM)
			xp_err("%s: attaching XDP needs CAP_NET_ADMIN and CAP_BPF; run as root\n",
			       s->ifname);
		else if (m == XDP_MODE_NATIVE)
			xp_err("%s: native XDP attach failed (%s); the driver may lack native "
			       "XDP: use --mode skb\n",
			       s->ifname, strerror(-err));
		else
			xp_err("%s: XDP attach failed: %s\n", s->ifname, strerror(-err));
		xdp_program__close(s->prog);
		s->prog = NULL;
		return err;
	}
	s->mode = m == XDP_MODE_SKB ? XP_STEER_MODE_SKB : XP_STEER_MODE_NATIVE;
	s->prog_fd = xdp_program__fd(s->prog);
	s->prog_id = xdp_program__id(s->prog);
	xp_steer_runs_on(s->ifindex, s->prog_id, &s->legacy);
	return 0;
}

static int detach(struct xp_steer *s)
{
	struct xdp_program *p = s->prog;
	int err;

	if (s->link_fd >= 0)
		return bpf_link_detach(s->link_fd) ? -errno : 0;
	if (!p) {
		p = xdp_program__from_id(s->prog_id);
		if (libxdp_get_error(p))
			return libxdp_get_error(p);
	}
	err = xdp_program__detach(p, s->ifindex,
				  s->mode == XP_STEER_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	if (p != s->prog)
		xdp_program__close(p);
	return err;
}

static int pin_all(struct xp_steer *s)
{
	struct bpf_object *obj = s->obj ?: xdp_program__bpf_obj(s->prog);
	char p[PATH_MAX + 32];
	int err = xp_mkdir_p(s->pin);

	if (err) {
		xp_err("cannot create pin directory %s: %s\n", s->pin, strerror(-err));
		return err;
	}
	for (int i = 0; i < XP_M_NR; i++) {
		struct bpf_map *m = xp_steer_obj_map(obj, i);

		if (!m) {
			xp_err("BPF object lacks map %s: rebuild it\n", xp_steer_map_names[i]);
			return -ENOENT;
		}
		s->fds[i] = bpf_map__fd(m);
		xp_steer_pin_path(s, xp_steer_map_names[i], p, sizeof(p));
		if (bpf_obj_pin(s->fds[i], p))
			goto fail;
	}
	xp_steer_pin_path(s, LINK_PIN, p, sizeof(p));
	if (s->link_fd >= 0 && bpf_obj_pin(s->link_fd, p))
		goto fail;
	xp_steer_pin_path(s, PROG_PIN, p, sizeof(p));
	if (!bpf_obj_pin(s->prog_fd, p)) {
		s->pin_ino = xp_steer_pin_inode(s);
		return 0;
	}
fail:
	err = -errno;
	xp_err("cannot pin %s: %s\n", p, strerror(-err));
	return err;
}

static int load(struct xp_steer *s, const struct xp_steer_opts *o)
{
	struct xp_action dflt = { .kind = XP_ACT_XSK }, perr = { .kind = XP_ACT_PASS };
	struct bpf_xdp_query_opts q = { .sz = sizeof(q) };
	struct xp_cfg c = { 0 };
	int err;

	/* Pins of ours that still run here mean someone else owns this interface's steer. */
	if (!open_pins(s)) {
		if (xp_steer_runs_on(s->ifindex, s->prog_id, NULL)) {
			xp_err("%s: xpile steer already loaded (program id %u, pins at %s); "
			       "unload it first, or open it with attach_existing\n",
			       s->ifname, s->prog_id, s->pin);
			close_fds(s);
			return -EEXIST;
		}
		xp_info("%s: removing stale pins at %s\n", s->ifname, s->pin);
	}
	close_fds(s);
	unpin_all(s);

	/* libxdp's dispatcher is shared: we join it. Anything else there is not ours. */
	if (!bpf_xdp_query(s->ifindex, 0, &q) && q.attach_mode != XDP_ATTACHED_NONE &&
	    !in_dispatcher(s->ifindex)) {
		__u32 id = q.prog_id ?: q.drv_prog_id ?: q.skb_prog_id;
		char name[BPF_OBJ_NAME_LEN] = "?";

		xp_steer_prog_name(id, name, sizeof(name));
		if (!o->force) {
			xp_err("%s: another XDP program (%s, id %u) is attached and is not ours; "
			       "remove it (xdp-loader unload %s --all) or use --force\n",
			       s->ifname, name, id, s->ifname);
			return -EBUSY;
		}
		xp_info("%s: replacing XDP program %s (id %u) as told (--force)\n", s->ifname, name,
			id);
		err = detach_foreign(s);
		if (err)
			return err;
	}
	/* libxdp keeps its own pins in a bpffs; point it at the host's one when `ip netns
	 * exec` hid /sys/fs/bpf. */
	if (strcmp(s->root, "/sys/fs/bpf"))
		setenv("LIBXDP_BPFFS", s->root, 0);
	err = attach(s, o);
	if (err)
		return err;
	err = pin_all(s);
	if (err)
		goto fail;
	c.ifindex = s->ifindex;
	c.mode = s->mode;
	c.flags = s->legacy ? XP_CFG_F_LEGACY : 0;
	c.next_id = 1;
	/* Loaded through libxdp, or by libbpf for a bpf_link (s->prog is NULL then). */
	c.abi_version = xp_steer_obj_version(s->prog ? xdp_program__bpf_obj(s->prog) : s->obj);
	err = xp_netns_ino(&c.netns_ino);
	err = err ?: xp_steer_write_cfg(s, &c);
	if (o->default_action)
		dflt = *o->default_action;
	err = err ?: xp_steer_default_set(s, &dflt, &perr);
	if (!err)
		return 0;
fail:
	detach(s);
	unpin_all(s);
	return err;
}

/* A hexadecimal field of /proc/self/status (@fmt: "CapEff: %llx"), or @dflt. */
static unsigned long long status_field(const char *fmt, unsigned long long dflt)
{
	char line[256];
	unsigned long long v = dflt;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return dflt;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	(void)fclose(f); /* read only: nothing to lose */
	return v;
}

static bool have_cap(int cap)
{
	/* cannot tell: let the kernel decide */
	return status_field("CapEff: %llx", ~0ULL) & (1ULL << cap);
}

/* Says which capability is missing before anything fails in a less obvious way (the
 * host's bpffs is out of reach without them, for one). */
static int check_caps(const char *ifname, bool load)
{
	bool bpf = have_cap(39 /* CAP_BPF */) || have_cap(21 /* CAP_SYS_ADMIN */);

	if (bpf && (!load || have_cap(12 /* CAP_NET_ADMIN */))) {
		/* A command no kernel has: EINVAL where bpf() is allowed, the filter's errno
		 * where a seccomp profile refuses it (containerd's and podman's defaults do
		 * without CAP_SYS_ADMIN, whatever CAP_BPF says). */
		long r = syscall(__NR_bpf, 0x7fff, NULL, 0);

		if (r >= 0 || (errno != EPERM && errno != ENOSYS))
			return 0;
		r = errno;
		xp_err("%s: bpf() is refused (%s) by %s although the capabilities are there: "
		       "run with a profile that allows bpf (the agent's: tools/deploy/seccomp/xpile-agent.json)\n",
		       ifname, strerror((int)r),
		       status_field("Seccomp: %llx", 0) == 2 ? "a seccomp profile" :
							       "a security module");
		return -EPERM;
	}
	xp_err("%s: %s needs CAP_BPF%s (and CAP_SYS_ADMIN to reach the host's bpffs from "
	       "another namespace): run as root\n",
	       ifname, load ? "attaching XDP" : "opening the pinned steer program",
	       load ? " and CAP_NET_ADMIN" : "");
	return -EPERM;
}

/* The pin directory and the bpffs root above which nothing is ours to remove. */
static int resolve_pin(struct xp_steer *s, const char *pin_path, bool mount)
{
	char key[64];
	int err;

	if (pin_path) {
		if (snprintf(s->pin, sizeof(s->pin), "%s", pin_path) >= (int)sizeof(s->pin))
			return -ENAMETOOLONG;
		return xp_pin_dir_check(s->pin, s->root, sizeof(s->root));
	}
	err = xp_bpffs_root(s->root, sizeof(s->root), mount);
	err = err ?: xp_netns_key(key, sizeof(key));
	if (err)
		return err;
	if (snprintf(s->pin, sizeof(s->pin), "%s/xpile/%s%s", s->root, key, s->ifname) >=
	    (int)sizeof(s->pin))
		return -ENAMETOOLONG;
	return 0;
}

static int steer_open(const struct xp_steer_opts *o, struct xp_steer **out);

int xp_steer_open(const struct xp_steer_opts *opts, struct xp_steer **out)
{
	struct xp_steer_opts oc;
	struct xp_errsink es;
	int err;

	if (!XP_OPTS_LOAD_LOG("steer", &oc, opts, xp_steer_opts))
		return -EINVAL;
	if (!oc.ifname || !out || !XP_OPTS_RESERVED_CLEAR(oc.reserved_))
		return -EINVAL;
	xp_errsink_begin(&es, oc.errbuf, oc.errbuf_sz);
	err = steer_open(&oc, out);
	xp_errsink_end(&es);
	return err;
}

/* A handle holding nothing yet: every fd -1, so one close_fds() undoes any stage. */
static struct xp_steer *steer_new(const char *ifname)
{
	struct xp_steer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	for (int i = 0; i < XP_M_NR; i++)
		s->fds[i] = -1;
	s->prog_fd = -1;
	s->link_fd = -1;
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	s->ifindex = if_nametoindex(ifname);
	return s;
}

static int steer_open(const struct xp_steer_opts *o, struct xp_steer **out)
{
	struct xp_steer *s = steer_new(o->ifname);
	int err;

	if (!s)
		return -ENOMEM;
	s->ncpu = libbpf_num_possible_cpus();
	if (!s->ifindex) {
		xp_err("interface %s not found in this network namespace; check `ip link` (or "
		       "run inside the right one: ip netns exec NS ...)\n",
		       o->ifname);
		err = -ENODEV;
		goto fail;
	}
	err = check_caps(s->ifname, !o->attach_existing);
	err = err ?: resolve_pin(s, o->pin_path, !o->attach_existing);
	if (err)
		goto fail;
	err = o->attach_existing ? open_existing(s) : load(s, o);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	close_fds(s);
	if (s->prog)
		xdp_program__close(s->prog);
	bpf_object__close(s->obj);
	free(s);
	return err;
}

/* Whether the pins in our directory are still ours: a `load` after our program was
 * removed pins a new program there, which is not ours to unpin. */
static bool pins_ours(struct xp_steer *s)
{
	char p[PATH_MAX + 32];
	int fd;
	bool ours;

	xp_steer_pin_path(s, PROG_PIN, p, sizeof(p));
	fd = bpf_obj_get(p);
	if (fd < 0)
		return errno == ENOENT; /* gone: the stale map pins around it are ours */
	ours = xp_steer_fd_prog_id(fd) == s->prog_id;
	close(fd);
	return ours;
}

void xp_steer_close(struct xp_steer *s, bool detach_too)
{
	char name[IF_NAMESIZE];

	if (!s)
		return;
	if (detach_too) {
		/* Detach only what still runs here and unpin only what is still ours: the
		 * interface, the program or the pins may have gone or changed meanwhile. */
		if (!if_indextoname(s->ifindex, name)) {
			xp_info("%s: interface gone; its XDP program went with it\n", s->ifname);
		} else if (!xp_steer_runs_on(s->ifindex, s->prog_id, NULL)) {
			xp_info("%s: program id %u no longer attached; nothing to detach\n",
				s->ifname, s->prog_id);
		} else {
			int err = detach(s);

			if (err)
				xp_warn("%s: detach of program id %u failed: %s\n", s->ifname,
					s->prog_id, strerror(-err));
		}
		if (pins_ours(s))
			unpin_all(s);
		else
			xp_info("%s: pins at %s belong to another program now; left in place\n",
				s->ifname, s->pin);
	}
	close_fds(s);
	if (s->prog)
		xdp_program__close(s->prog);
	bpf_object__close(s->obj);
	free(s);
}

static int xsk_update(struct xp_steer *s, __u32 key, int fd)
{
	int err = fd >= 0 ? bpf_map_update_elem(s->fds[XP_M_XSKS], &key, &fd, BPF_ANY) :
			    bpf_map_delete_elem(s->fds[XP_M_XSKS], &key);

	if (err && !(fd < 0 && errno == ENOENT)) {
		err = -errno;
		xp_err("%s: XSKMAP update of entry %u failed: %s\n", s->ifname, key,
		       strerror(-err));
		return err;
	}
	return 0;
}

int xp_steer_xsk_set(struct xp_steer *s, __u32 queue, int xsk_fd)
{
	if (queue >= XP_STEER_MAX_QUEUES || xsk_fd < 0)
		return -EINVAL;
	return xsk_update(s, queue, xsk_fd);
}

int xp_steer_xsk_clear(struct xp_steer *s, __u32 queue)
{
	if (queue >= XP_STEER_MAX_QUEUES)
		return -EINVAL;
	return xsk_update(s, queue, -1);
}

int xp_steer_slot_set(struct xp_steer *s, __u32 slot, int xsk_fd)
{
	if (slot >= XP_STEER_XSK_SLOTS || xsk_fd < 0)
		return -EINVAL;
	return xsk_update(s, XP_STEER_MAX_QUEUES + slot, xsk_fd);
}

int xp_steer_slot_clear(struct xp_steer *s, __u32 slot)
{
	if (slot >= XP_STEER_XSK_SLOTS)
		return -EINVAL;
	return xsk_update(s, XP_STEER_MAX_QUEUES + slot, -1);
}

int xp_steer_xskmap_fd(const struct xp_steer *s)
{
	return s->fds[XP_M_XSKS];
}

int xp_steer_prog_fd(const struct xp_steer *s)
{
	return s->prog_fd;
}

int xp_steer_link_fd(const struct xp_steer *s)
{
	return s->link_fd >= 0 ? s->link_fd : -ENOENT;
}

int xp_steer_info_get(const struct xp_steer *s, struct xp_steer_info *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->ifname, sizeof(out->ifname), "%s", s->ifname);
	out->ifindex = s->ifindex;
	out->prog_id = s->prog_id;
	out->mode = s->mode;
	out->legacy = s->legacy;
	const char *pin = s->pin;
	int skip = 0;

	/* Show the host path, not the /proc/PID/root detour it was reached through. */
	if (sscanf(pin, "/proc/%*d/root%n", &skip) >= 0 && skip > 0 && pin[skip] == '/')
		pin += skip;
	if (snprintf(out->pin_path, sizeof(out->pin_path), "%s", pin) >= (int)sizeof(out->pin_path))
		return -ENAMETOOLONG;
	return 0;
}

int xp_steer_remove_stale(const char *ifname, const char *pin_path)
{
	struct xp_steer *s = steer_new(ifname);
	int err;

	if (!s)
		return -ENOMEM;
	err = resolve_pin(s, pin_path, false);
	if (!err && !open_pins(s) && s->ifindex && xp_steer_runs_on(s->ifindex, s->prog_id, NULL))
		err = -EBUSY;
	close_fds(s);
	if (!err)
		unpin_all(s);
	free(s);
	return err;
}
