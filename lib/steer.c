// SPDX-License-Identifier: BSD-3-Clause
/*
 * Opening, attaching, pinning and finding the steer program; XSKMAP slots; atomic rule
 * replacement. The pin directory is the rendezvous point: whoever loads pins the
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
#include "xpile/owner.h"
#include "xpile/steer.h"

#define PROG_PIN "xp_steer"
#define LINK_PIN "xp_link"

const char *const xp_steer_map_names[XP_M_NR] = {
	[XP_M_CFG] = "xp_cfg",	   [XP_M_SETCFG] = "xp_setcfg",	    [XP_M_SETS] = "xp_sets",
	[XP_M_RULES] = "xp_rules", [XP_M_RULE_CNT] = "xp_rule_cnt", [XP_M_STATS] = "xp_stats",
	[XP_M_XSKS] = "xp_xsks",
};

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
};

static void grace_period(void)
{
	/* MEMBARRIER_CMD_GLOBAL runs synchronize_rcu(): every XDP program invocation
	 * that could have read the old active set has finished when it returns. */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0) {
		xp_dbg("membarrier: %s; falling back to a 100 ms wait\n", strerror(errno));
		usleep(100000);
	}
}

static void pin_path(const struct xp_steer *s, const char *name, char *buf, size_t len)
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
			pin_path(s, de->d_name, p, sizeof(p));
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

static __u32 fd_prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static __u64 pin_inode(const struct xp_steer *s)
{
	char p[PATH_MAX + 32];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", s->pin, PROG_PIN);
	return stat(p, &st) ? 0 : st.st_ino;
}

/* Whether program @id runs on @ifindex, alone or inside libxdp's dispatcher. */
static bool runs_on(int ifindex, __u32 id, bool *legacy)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p;
	bool found = false;

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

	pin_path(s, PROG_PIN, p, sizeof(p));
	s->prog_fd = bpf_obj_get(p);
	if (s->prog_fd < 0)
		return -errno;
	s->prog_id = fd_prog_id(s->prog_fd);
	s->pin_ino = pin_inode(s);
	pin_path(s, LINK_PIN, p, sizeof(p));
	s->link_fd = bpf_obj_get(p); /* none: attached through netlink */
	for (int i = 0; i < XP_M_NR; i++) {
		pin_path(s, xp_steer_map_names[i], p, sizeof(p));
		s->fds[i] = bpf_obj_get(p);
		if (s->fds[i] < 0) {
			int err = -errno;

			xp_err("%s: pin %s missing (%s); reload: xpile-loader unload %s; "
			       "xpile-loader load %s\n",
			       s->ifname, p, strerror(-err), s->ifname, s->ifname);
			return err;
		}
	}
	return 0;
}

static int read_cfg(struct xp_steer *s, struct xp_cfg *c)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(s->fds[XP_M_CFG], &zero, c) ? -errno : 0;
}

static int write_cfg(struct xp_steer *s, const struct xp_cfg *c)
{
	__u32 zero = 0;

	return bpf_map_update_elem(s->fds[XP_M_CFG], &zero, c, BPF_ANY) ? -errno : 0;
}

static int open_existing(struct xp_steer *s)
{
	struct xp_cfg c;
	int err = open_pins(s);

	if (err == -ENOENT) {
		xp_err("%s: xpile steer program not loaded (nothing pinned at %s); run: "
		       "xpile-loader load %s\n",
		       s->ifname, s->pin, s->ifname);
		return err;
	}
	if (err)
		return err;
	err = read_cfg(s, &c);
	if (err)
		return err;
	if (c.ifindex != (__u32)s->ifindex || !runs_on(s->ifindex, s->prog_id, &s->legacy)) {
		xp_err("%s: pins at %s are stale (program not attached to this interface); "
		       "run: xpile-loader unload %s; xpile-loader load %s\n",
		       s->ifname, s->pin, s->ifname, s->ifname);
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

static void prog_name(__u32 id, char *buf, size_t len)
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
static int check_obj_file(const char *obj)
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

static int check_obj_maps(struct xdp_program *prog, const char *obj)
{
	struct bpf_object *bo = xdp_program__bpf_obj(prog);

	for (int i = 0; i < XP_M_NR; i++)
		if (!bo || !bpf_object__find_map_by_name(bo, xp_steer_map_names[i])) {
			xp_err("%s is a BPF object but not xpile's steer program (it has no map %s); "
			       "give the steer.o that `make` builds (build/bpf/steer.o)\n",
			       obj, xp_steer_map_names[i]);
			return -ENOEXEC;
		}
	return 0;
}

/* The program of section @sec alone, loaded by libbpf and attached through a bpf_link
 * in the mode asked (auto: native, else generic). */
static int attach_link(struct xp_steer *s, const struct xp_steer_opts *o, const char *obj,
		       const char *sec)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
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
		if (!bpf_object__find_map_by_name(s->obj, xp_steer_map_names[i]))
			want = NULL;
	if (!want) {
		xp_err("%s is a BPF object but not xpile's steer program (no %s program or a "
		       "map missing); give the steer.o that `make` builds (build/bpf/steer.o)\n",
		       obj, sec);
		return -ENOEXEC;
	}
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
	s->prog_id = fd_prog_id(s->prog_fd);
	s->legacy = true;
	return 0;
}

static int attach(struct xp_steer *s, const struct xp_steer_opts *o)
{
	enum xdp_attach_mode m = o->mode == XP_STEER_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	char obj[PATH_MAX];
	int err, frags;

	if (o->bpf_obj)
		snprintf(obj, sizeof(obj), "%s", o->bpf_obj);
	else if ((err = xp_bpf_obj_path("steer.o", obj, sizeof(obj))))
		return err;
	frags = o->sz > offsetof(struct xp_steer_opts, frags) ? o->frags : 0;
	if (!frags)
		frags = ifmtu(s->ifname) > XP_ONE_PAGE_MTU ? 1 : -1;
	err = check_obj_file(obj);
	if (err)
		return err;
	if (o->link)
		return attach_link(s, o, obj, frags > 0 ? "xdp.frags" : "xdp");
	s->prog = xdp_program__open_file(obj, frags > 0 ? "xdp.frags" : "xdp", NULL);
	err = libxdp_get_error(s->prog);
	if (err) {
		char why[128];

		s->prog = NULL;
		libbpf_strerror(err, why, sizeof(why));
		xp_err("cannot open BPF object %s: %s; give the steer.o that `make` builds "
		       "(build/bpf/steer.o)\n",
		       obj, why);
		return err;
	}
	err = check_obj_maps(s->prog, obj);
	if (err) {
		xdp_program__close(s->prog);
		s->prog = NULL;
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
	runs_on(s->ifindex, s->prog_id, &s->legacy);
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
		struct bpf_map *m = bpf_object__find_map_by_name(obj, xp_steer_map_names[i]);

		if (!m) {
			xp_err("BPF object lacks map %s: rebuild it\n", xp_steer_map_names[i]);
			return -ENOENT;
		}
		s->fds[i] = bpf_map__fd(m);
		pin_path(s, xp_steer_map_names[i], p, sizeof(p));
		if (bpf_obj_pin(s->fds[i], p))
			goto fail;
	}
	pin_path(s, LINK_PIN, p, sizeof(p));
	if (s->link_fd >= 0 && bpf_obj_pin(s->link_fd, p))
		goto fail;
	pin_path(s, PROG_PIN, p, sizeof(p));
	if (!bpf_obj_pin(s->prog_fd, p)) {
		s->pin_ino = pin_inode(s);
		return 0;
	}
fail:
	err = -errno;
	xp_err("cannot pin %s: %s\n", p, strerror(-err));
	return err;
}

static int ns_inode(__u64 *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

static int load(struct xp_steer *s, const struct xp_steer_opts *o)
{
	struct xp_action dflt = { .kind = XP_ACT_XSK }, perr = { .kind = XP_ACT_PASS };
	struct bpf_xdp_query_opts q = { .sz = sizeof(q) };
	struct xp_cfg c = { 0 };
	int err;

	/* Pins of ours that still run here mean someone else owns this interface's steer. */
	if (!open_pins(s)) {
		if (runs_on(s->ifindex, s->prog_id, NULL)) {
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

		prog_name(id, name, sizeof(name));
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
	err = ns_inode(&c.netns_ino);
	err = err ?: write_cfg(s, &c);
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

static bool have_cap(int cap)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return true; /* cannot tell: let the kernel decide */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	(void)fclose(f); /* read only: nothing to lose */
	return eff & (1ULL << cap);
}

/* Says which capability is missing before anything fails in a less obvious way (the
 * host's bpffs is out of reach without them, for one). */
static int check_caps(const char *ifname, bool load)
{
	bool bpf = have_cap(39 /* CAP_BPF */) || have_cap(21 /* CAP_SYS_ADMIN */);

	if (bpf && (!load || have_cap(12 /* CAP_NET_ADMIN */)))
		return 0;
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

int xp_steer_open(const struct xp_steer_opts *opts, struct xp_steer **out)
{
	struct xp_steer_opts oc;
	const struct xp_steer_opts *o = &oc;
	struct xp_steer *s;
	int err;

	if (!XP_OPTS_LOAD_LOG("steer", &oc, opts, xp_steer_opts))
		return -EINVAL;
	if (!o->ifname || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (int i = 0; i < XP_M_NR; i++)
		s->fds[i] = -1;
	s->prog_fd = -1;
	s->link_fd = -1;
	s->ncpu = libbpf_num_possible_cpus();
	snprintf(s->ifname, sizeof(s->ifname), "%s", o->ifname);
	s->ifindex = if_nametoindex(o->ifname);
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

	pin_path(s, PROG_PIN, p, sizeof(p));
	fd = bpf_obj_get(p);
	if (fd < 0)
		return errno == ENOENT; /* gone: the stale map pins around it are ours */
	ours = fd_prog_id(fd) == s->prog_id;
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
		} else if (!runs_on(s->ifindex, s->prog_id, NULL)) {
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

/* Serializes rule-set writers across processes; the pin directory is the one object
 * every user of this interface's steer shares. */
static int lock_rules(struct xp_steer *s)
{
	int fd = open(s->pin, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int percpu_sum(struct xp_steer *s, int fd, __u32 key, size_t vsz, void *sum)
{
	size_t stride = (vsz + 7) & ~7UL;
	__u8 *buf = calloc(s->ncpu, stride);
	int err;

	if (!buf)
		return -ENOMEM;
	memset(sum, 0, vsz);
	err = bpf_map_lookup_elem(fd, &key, buf) ? -errno : 0;
	for (int c = 0; !err && c < s->ncpu; c++)
		for (size_t w = 0; w < vsz / 8; w++)
			((__u64 *)sum)[w] += ((__u64 *)(buf + c * stride))[w];
	free(buf);
	return err;
}

/* Per-CPU counters of the rules that survive a replace move with them. */
static int move_counters(struct xp_steer *s, __u32 oldset, const struct xp_rule *old, __u32 nold,
			 __u32 newset, const struct xp_rule *rules, __u32 n)
{
	struct xp_rule_counters *src = calloc(s->ncpu, sizeof(*src)),
				*dst = calloc(s->ncpu, sizeof(*dst));
	int err = 0;

	if (!src || !dst) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(s->fds[XP_M_RULE_CNT], &oldset, src)) {
		err = -errno;
		goto out;
	}
	for (__u32 i = 0; i < n; i++)
		for (__u32 j = 0; j < nold; j++) {
			if (old[j].id != rules[i].id)
				continue;
			for (int c = 0; c < s->ncpu; c++)
				dst[c].r[i] = src[c].r[j];
			break;
		}
	if (bpf_map_update_elem(s->fds[XP_M_RULE_CNT], &newset, dst, BPF_ANY))
		err = -errno;
out:
	free(src);
	free(dst);
	return err;
}

static int get_set(struct xp_steer *s, __u32 set, struct xp_rule *rules, __u32 max, __u32 *n,
		   struct xp_set_cfg *sc)
{
	if (bpf_map_lookup_elem(s->fds[XP_M_SETCFG], &set, sc))
		return -errno;
	*n = sc->nrules < max ? sc->nrules : max;
	for (__u32 i = 0; i < *n; i++) {
		__u32 k = set * XP_STEER_MAX_RULES + i;

		if (bpf_map_lookup_elem(s->fds[XP_M_RULES], &k, &rules[i]))
			return -errno;
	}
	return 0;
}

/* The one writer path: sort, number, compile into the idle set, flip, wait. */
static int replace_locked(struct xp_steer *s, const struct xp_rule *in, __u32 n,
			  const struct xp_action *dflt, const struct xp_action *perr)
{
	struct xp_rule *rules = NULL, *old = NULL;
	struct xp_set_cfg osc;
	__u32 cur, next, nold = 0;
	struct xp_cfg c;
	char why[160];
	int err;

	if (n > XP_STEER_MAX_RULES) {
		xp_err("%u rules: at most %d fit\n", n, XP_STEER_MAX_RULES);
		return -E2BIG;
	}
	rules = calloc(n + 1, sizeof(*rules));
	old = calloc(XP_STEER_MAX_RULES, sizeof(*old));
	if (!rules || !old) {
		err = -ENOMEM;
		goto out;
	}
	err = read_cfg(s, &c);
	if (err)
		goto out;
	cur = c.active & 1;
	next = !cur;
	err = get_set(s, cur, old, XP_STEER_MAX_RULES, &nold, &osc);
	if (err)
		goto out;
	if (c.next_id == 0)
		c.next_id = 1;
	/* Stable insertion by priority: equal priorities keep their order. */
	for (__u32 i = 0; i < n; i++) {
		struct xp_rule r = in[i];
		__u32 j;

		err = xp_rule_check(&r, why, sizeof(why));
		if (err) {
			xp_err("rule %u: %s\n", i + 1, why);
			goto out;
		}
		if (!r.id)
			r.id = c.next_id++;
		for (j = i; j > 0 && rules[j - 1].prio > r.prio; j--)
			rules[j] = rules[j - 1];
		rules[j] = r;
	}
	/* Nothing may still be reading the idle set (a writer that died mid-way). */
	grace_period();
	err = xp_rules_compile(s->fds, next, rules, n, dflt ?: &osc.dflt, perr ?: &osc.parse_err);
	err = err ?: move_counters(s, cur, old, nold, next, rules, n);
	if (err)
		goto out;
	c.active = next;
	err = write_cfg(s, &c);
	if (!err)
		grace_period();
out:
	free(rules);
	free(old);
	return err;
}

int xp_steer_rules_replace(struct xp_steer *s, const struct xp_rule *rules, __u32 n)
{
	int lk = lock_rules(s), err;

	if (lk < 0)
		return lk;
	err = replace_locked(s, rules, n, NULL, NULL);
	close(lk);
	return err;
}

/* The set packets see now, and up to @max of its rules (@max 0: only its config). */
static int get_active_set(struct xp_steer *s, __u32 *set, struct xp_rule *rules, __u32 max,
			  __u32 *n, struct xp_set_cfg *sc)
{
	struct xp_cfg c;
	int err = read_cfg(s, &c);

	if (err)
		return err;
	*set = c.active & 1;
	return get_set(s, *set, rules, max, n, sc);
}

int xp_steer_default_get(struct xp_steer *s, struct xp_action *dflt, struct xp_action *perr)
{
	struct xp_set_cfg sc;
	__u32 set, n;
	int err = get_active_set(s, &set, NULL, 0, &n, &sc);

	if (err)
		return err;
	if (dflt)
		*dflt = sc.dflt;
	if (perr)
		*perr = sc.parse_err;
	return 0;
}

int xp_steer_rules_get(struct xp_steer *s, struct xp_rule *rules, struct xp_counter *counters,
		       __u32 max, __u32 *n)
{
	struct xp_set_cfg sc;
	__u32 set;
	int err = get_active_set(s, &set, rules, max, n, &sc);

	struct xp_rule_counters *rc;

	if (err || !counters)
		return err;
	rc = calloc(s->ncpu, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	if (bpf_map_lookup_elem(s->fds[XP_M_RULE_CNT], &set, rc))
		err = -errno;
	for (__u32 i = 0; !err && i < *n; i++) {
		memset(&counters[i], 0, sizeof(counters[i]));
		for (int c = 0; c < s->ncpu; c++) {
			counters[i].packets += rc[c].r[i].packets;
			counters[i].bytes += rc[c].r[i].bytes;
		}
	}
	free(rc);
	return err;
}

/* Read-modify-write of the rule set under the lock: add one rule, delete one by id
 * (@del != 0), and/or change the default actions (NULL: keep). */
static int edit_rules(struct xp_steer *s, const struct xp_rule *add, __u32 del, __u32 *id,
		      const struct xp_action *dflt, const struct xp_action *perr)
{
	struct xp_rule *rules = calloc(XP_STEER_MAX_RULES + 1, sizeof(*rules));
	__u32 n = 0, m = 0;
	struct xp_cfg c;
	int lk, err;

	if (!rules)
		return -ENOMEM;
	lk = lock_rules(s);
	if (lk < 0) {
		free(rules);
		return lk;
	}
	err = xp_steer_rules_get(s, rules, NULL, XP_STEER_MAX_RULES, &n);
	err = err ?: read_cfg(s, &c);
	if (err)
		goto out;
	if (add) {
		rules[n] = *add;
		rules[n].id = 0; /* the only one without: replace_locked numbers it next_id */
		if (id)
			*id = c.next_id ?: 1;
		n++;
	}
	for (__u32 i = 0; i < n; i++)
		if (!del || rules[i].id != del)
			rules[m++] = rules[i];
	if (del && m == n) {
		xp_err("%s: no rule with id %u; see: xpile-loader rule list %s\n", s->ifname, del,
		       s->ifname);
		err = -ENOENT;
		goto out;
	}
	err = replace_locked(s, rules, m, dflt, perr);
out:
	close(lk);
	free(rules);
	return err;
}

int xp_steer_default_set(struct xp_steer *s, const struct xp_action *dflt,
			 const struct xp_action *parse_err)
{
	return edit_rules(s, NULL, 0, NULL, dflt, parse_err);
}

int xp_steer_rule_add(struct xp_steer *s, const struct xp_rule *r, __u32 *id)
{
	return edit_rules(s, r, 0, id, NULL, NULL);
}

int xp_steer_rule_del(struct xp_steer *s, __u32 id)
{
	return edit_rules(s, NULL, id, NULL, NULL, NULL);
}

int xp_steer_stats_read(struct xp_steer *s, struct xp_steer_stats *out)
{
	struct xp_stats st;
	int err = percpu_sum(s, s->fds[XP_M_STATS], 0, sizeof(st), &st);

	if (err)
		return err;
	memcpy(out->verdict, st.verdict, sizeof(out->verdict));
	memcpy(out->parse_err, st.perr, sizeof(out->parse_err));
	return 0;
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
	struct xp_steer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	for (int i = 0; i < XP_M_NR; i++)
		s->fds[i] = -1;
	s->prog_fd = -1;
	s->link_fd = -1;
	s->ifindex = if_nametoindex(ifname);
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	err = resolve_pin(s, pin_path, false);
	if (!err && !open_pins(s) && s->ifindex && runs_on(s->ifindex, s->prog_id, NULL))
		err = -EBUSY;
	close_fds(s);
	if (!err)
		unpin_all(s);
	free(s);
	return err;
}

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
	xdp_program__close(s->prog);
	s->prog = NULL;
	memcpy(s->fds, fds, sizeof(s->fds));
	s->prog_fd = fds[XP_M_NR];
	return 0;
}

/* After `xpile-loader replace` the program at our pin runs here on our maps: it is ours
 * now, so whoever holds this steer (an engine) follows it instead of seeing a stranger. */
static bool follow_replace(struct xp_steer *s, __u32 id)
{
	char p[PATH_MAX + 32];
	int fd;

	if (!s->legacy || !prog_uses_map(id, fd_map_id(s->fds[XP_M_XSKS])) || take_fds(s))
		return false;
	pin_path(s, PROG_PIN, p, sizeof(p));
	fd = bpf_obj_get(p);
	if (fd < 0)
		return false;
	if (fd_prog_id(fd) != id) {
		close(fd);
		return false;
	}
	close(s->prog_fd);
	s->prog_fd = fd;
	s->prog_id = id;
	s->pin_ino = pin_inode(s);
	return true;
}

/* Opens @obj for a replace: plain libbpf (the single-program case attaches through
 * netlink), the program of the running one's name, maps still unbound. */
static int replace_open(struct xp_steer *s, const char *obj, struct bpf_object **bo,
			struct bpf_program **bp)
{
	char name[BPF_OBJ_NAME_LEN] = XP_STEER_PROG_NAME, why[128];
	struct bpf_program *p;
	int err = check_obj_file(obj);

	if (err)
		return err;
	prog_name(s->prog_id, name, sizeof(name));
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

	pin_path(s, PROG_PIN, p, sizeof(p));
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
	err = err ?: read_cfg(s, &c);
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
		err = bpf_map__reuse_fd(bpf_object__find_map_by_name(bo, xp_steer_map_names[i]),
					fds[i]);
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
		       err == -EEXIST ? " (another program replaced it meanwhile; see "
					"xpile-loader status)" :
					"");
		goto out;
	}
	fd = dup(fd);
	if (fd < 0 || (err = repin_prog(s, fd))) {
		err = fd < 0 ? -errno : err;
		xp_err("%s: the new program runs but its pin at %s failed: %s; xpile-loader "
		       "status shows it\n",
		       s->ifname, s->pin, strerror(-err));
	}
	if (fd >= 0) {
		close(s->prog_fd);
		s->prog_fd = fd;
		s->prog_id = fd_prog_id(fd);
		s->pin_ino = pin_inode(s);
	}
	if (mig) {
		memcpy(s->fds, fds, sizeof(fds));
		c.abi_version = next;
		write_cfg(s, &c);
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
		if (id == s->prog_id || runs_on(s->ifindex, s->prog_id, NULL) ||
		    follow_replace(s, id))
			s->seen_attached = id;
		else
			h->prog_replaced = true;
	}
	if (h->prog_replaced)
		prog_name(id, h->attached_name, sizeof(h->attached_name));
	if (pin_inode(s) != s->pin_ino) {
		h->pins_gone = !pin_inode(s);
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
			pin_path(s, LINK_PIN, p, sizeof(p));
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
		pin_path(s, xp_steer_map_names[i], p, sizeof(p));
		if (bpf_obj_pin(s->fds[i], p) && errno != EEXIST)
			err = -errno;
	}
	pin_path(s, PROG_PIN, p, sizeof(p));
	if (!err && bpf_obj_pin(s->prog_fd, p))
		err = -errno;
	if (err) {
		xp_err("%s: cannot pin again at %s: %s\n", s->ifname, s->pin, strerror(-err));
		return err;
	}
	s->pin_ino = pin_inode(s);
	return 0;
}

int xp_steer_owner_set(struct xp_steer *s, bool engine)
{
	struct xp_cfg c;
	int err = read_cfg(s, &c);

	if (err)
		return err;
	c.flags = engine ? c.flags | XP_CFG_F_ENGINE : c.flags & ~XP_CFG_F_ENGINE;
	return write_cfg(s, &c);
}

bool xp_steer_engine_loaded(struct xp_steer *s)
{
	struct xp_cfg c;

	return !read_cfg(s, &c) && (c.flags & XP_CFG_F_ENGINE);
}

__u32 xp_steer_prog_id(const struct xp_steer *s)
{
	return s->prog_id;
}
