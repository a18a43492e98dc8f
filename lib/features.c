// SPDX-License-Identifier: BSD-3-Clause
/*
 * What an interface and this kernel support, probed rather than guessed: XDP features
 * from the netdev generic-netlink family (kernel >= 6.3), channel counts from the
 * ethtool ioctl, native XDP by attaching a trivial program when nothing is attached,
 * and libxdp's dispatcher by trying the freplace it depends on.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/host.h"

/* include/uapi/linux/netdev.h (not in Debian 12's headers) */
#define XP_NETDEV_CMD_DEV_GET 1
#define XP_NETDEV_A_DEV_IFINDEX 1
#define XP_NETDEV_A_DEV_XDP_FEATURES 3
#define XP_NETDEV_XDP_ACT_BASIC (1ULL << 0)
#define XP_NETDEV_XDP_ACT_NDO_XMIT (1ULL << 2)
#define XP_NETDEV_XDP_ACT_XSK_ZEROCOPY (1ULL << 3)
#define XP_NETDEV_XDP_ACT_RX_SG (1ULL << 5)

struct nlreq {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

static void put_attr(struct nlreq *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends @r and calls back for each attribute of the answer; -errno from the kernel. */
static int genl_call(int fd, struct nlreq *r, void (*cb)(struct nlattr *a, void *ctx), void *ctx)
{
	char buf[8192];
	struct nlmsghdr *nh;
	ssize_t n;

	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
		struct nlattr *a;
		int left;

		if (nh->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
		a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
		left = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
			cb(a, ctx);
			left -= NLA_ALIGN(a->nla_len);
			a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
		}
	}
	return 0;
}

static void family_cb(struct nlattr *a, void *ctx)
{
	if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
		*(__u16 *)ctx = *(__u16 *)((char *)a + NLA_HDRLEN);
}

static void features_cb(struct nlattr *a, void *ctx)
{
	if ((a->nla_type & NLA_TYPE_MASK) == XP_NETDEV_A_DEV_XDP_FEATURES)
		memcpy(ctx, (char *)a + NLA_HDRLEN, sizeof(__u64));
}

static int xdp_features(int ifindex, __u64 *out)
{
	struct nlreq r = { 0 };
	__u16 fam = 0;
	__u32 idx = ifindex;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), err;

	if (fd < 0)
		return -errno;
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = GENL_ID_CTRL;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.gh.cmd = CTRL_CMD_GETFAMILY;
	r.gh.version = 1;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	err = genl_call(fd, &r, family_cb, &fam);
	if (!err && !fam)
		err = -ENOENT;
	if (!err) {
		memset(&r, 0, sizeof(r));
		r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
		r.nh.nlmsg_type = fam;
		r.nh.nlmsg_flags = NLM_F_REQUEST;
		r.gh.cmd = XP_NETDEV_CMD_DEV_GET;
		r.gh.version = 1;
		put_attr(&r, XP_NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
		*out = 0;
		err = genl_call(fd, &r, features_cb, out);
	}
	close(fd);
	return err;
}

static int channels(const char *ifname, struct ethtool_channels *ch)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	ch->cmd = ETHTOOL_GCHANNELS;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

static int count_queues(const char *ifname, const char *prefix)
{
	char path[PATH_MAX];
	int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/%s-%d", ifname, prefix, n);
		if (access(path, F_OK))
			return n;
	}
}

/* A two-instruction "return XDP_PASS" program, optionally frags-capable. */
static int trivial_prog(bool frags)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = frags ? BPF_F_XDP_HAS_FRAGS : 0);

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "xp_probe", "GPL", insns, 2, &o);
}

static bool try_native(int ifindex, bool frags)
{
	int fd = trivial_prog(frags), err;

	if (fd < 0)
		return false;
	err = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (!err)
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	close(fd);
	return !err;
}

bool xp_dispatcher_probe(char *why, size_t len)
{
	struct bpf_object *tgt = NULL, *ext = NULL;
	struct bpf_program *tp, *ep;
	struct bpf_link *link = NULL;
	char obj[PATH_MAX];
	bool ok = false;
	int err;

	snprintf(why, len, "%s", "");
	if (xp_bpf_obj_path("steer.o", obj, sizeof(obj))) {
		snprintf(why, len, "steer.o not found");
		return false;
	}
	/* libxdp's dispatcher runs each program as an freplace (BPF_PROG_TYPE_EXT) of one
	 * of its slots: do exactly that, with our program as its own target. */
	tgt = bpf_object__open_file(obj, NULL);
	ext = bpf_object__open_file(obj, NULL);
	if (libbpf_get_error(tgt) || libbpf_get_error(ext)) {
		snprintf(why, len, "cannot open %s", obj);
		goto out;
	}
	tp = bpf_object__next_program(tgt, NULL);
	ep = bpf_object__next_program(ext, NULL);
	err = bpf_object__load(tgt);
	if (err) {
		snprintf(why, len, "loading the target program failed: %s", strerror(-err));
		goto out;
	}
	bpf_program__set_type(ep, BPF_PROG_TYPE_EXT);
	bpf_program__set_expected_attach_type(ep, 0);
	bpf_program__set_attach_target(ep, bpf_program__fd(tp), bpf_program__name(tp));
	err = bpf_object__load(ext);
	if (err) {
		snprintf(why, len, "the kernel refuses freplace programs (load: %s)",
			 strerror(-err));
		goto out;
	}
	link = bpf_program__attach_freplace(ep, bpf_program__fd(tp), bpf_program__name(tp));
	err = libbpf_get_error(link);
	if (err) {
		link = NULL;
		snprintf(why, len, "the kernel refuses freplace attachment (%s)", strerror(-err));
		goto out;
	}
	ok = true;
out:
	bpf_link__destroy(link);
	if (!libbpf_get_error(ext))
		bpf_object__close(ext);
	if (!libbpf_get_error(tgt))
		bpf_object__close(tgt);
	return ok;
}

int xp_if_features_probe(const char *ifname, struct xp_if_features *f)
{
	struct bpf_xdp_query_opts q = { .sz = sizeof(q) };
	struct ethtool_channels ch = { 0 };
	int ifindex = if_nametoindex(ifname);
	__u64 feat = 0;

	memset(f, 0, sizeof(*f));
	if (!ifindex) {
		xp_err("interface %s not found in this network namespace\n", ifname);
		return -ENODEV;
	}
	if (!xdp_features(ifindex, &feat)) {
		f->features_known = true;
		f->native_xdp = feat & XP_NETDEV_XDP_ACT_BASIC;
		f->xsk_zerocopy = feat & XP_NETDEV_XDP_ACT_XSK_ZEROCOPY;
		f->multibuf = feat & XP_NETDEV_XDP_ACT_RX_SG;
		f->redirect_target = feat & XP_NETDEV_XDP_ACT_NDO_XMIT;
	} else if (!bpf_xdp_query(ifindex, 0, &q) && q.attach_mode != XDP_ATTACHED_NONE) {
		/* Cannot attach a probe over a live program: report what its mode shows. */
		f->native_xdp = q.drv_prog_id || q.attach_mode == XDP_ATTACHED_DRV;
	} else {
		f->native_xdp = try_native(ifindex, false);
		f->multibuf = f->native_xdp && try_native(ifindex, true);
	}
	if (!channels(ifname, &ch)) {
		f->channels_known = true;
		f->rx_queues = ch.rx_count;
		f->tx_queues = ch.tx_count;
		f->combined = ch.combined_count;
		f->max_combined = ch.max_combined;
		f->max_rx = ch.max_rx;
		f->max_tx = ch.max_tx;
	}
	if (!f->rx_queues && !f->combined) {
		f->rx_queues = count_queues(ifname, "rx");
		f->tx_queues = count_queues(ifname, "tx");
	}
	f->dispatcher = xp_dispatcher_probe(f->dispatcher_why, sizeof(f->dispatcher_why));
	return 0;
}
