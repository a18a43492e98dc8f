// SPDX-License-Identifier: BSD-3-Clause
/*
 * What an interface and this kernel support, probed rather than guessed: XDP features
 * from the netdev generic-netlink family (kernel >= 6.3, on libmnl as every netlink
 * reader of the tree), channel counts from the
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
#include <libmnl/libmnl.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/bpffs.h"
#include "xpile/features.h"

/* include/uapi/linux/netdev.h (not in Debian 12's headers) */
#define XP_NETDEV_CMD_DEV_GET 1
#define XP_NETDEV_A_DEV_IFINDEX 1
#define XP_NETDEV_A_DEV_XDP_FEATURES 3
#define XP_NETDEV_XDP_ACT_BASIC (1ULL << 0)
#define XP_NETDEV_XDP_ACT_NDO_XMIT (1ULL << 2)
#define XP_NETDEV_XDP_ACT_XSK_ZEROCOPY (1ULL << 3)
#define XP_NETDEV_XDP_ACT_RX_SG (1ULL << 5)

/* One request's buffer: a header, the genetlink header and an attribute or two. */
#define GENL_REQ_MAX 128

static struct nlmsghdr *genl_req(char *buf, __u16 type, __u8 cmd)
{
	struct nlmsghdr *nh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *gh;

	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST;
	gh = mnl_nlmsg_put_extra_header(nh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = 1;
	return nh;
}

struct genl_reply {
	mnl_attr_cb_t cb;
	void *ctx;
};

static int genl_msg(const struct nlmsghdr *nh, void *data)
{
	const struct genl_reply *g = data;

	mnl_attr_parse(nh, GENL_HDRLEN, g->cb, g->ctx);
	return MNL_CB_OK;
}

/* Sends @nh and calls back for each attribute of the answer; -errno from the kernel. */
static int genl_call(int fd, const struct nlmsghdr *nh, mnl_attr_cb_t cb, void *ctx)
{
	struct genl_reply g = { cb, ctx };
	char buf[8192];
	ssize_t n;

	if (send(fd, nh, nh->nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return mnl_cb_run(buf, (size_t)n, 0, 0, genl_msg, &g) == MNL_CB_ERROR ? -errno : 0;
}

static int family_cb(const struct nlattr *a, void *ctx)
{
	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID && mnl_attr_get_payload_len(a) >= 2)
		*(__u16 *)ctx = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static int features_cb(const struct nlattr *a, void *ctx)
{
	if (mnl_attr_get_type(a) == XP_NETDEV_A_DEV_XDP_FEATURES &&
	    mnl_attr_get_payload_len(a) >= sizeof(__u64))
		memcpy(ctx, mnl_attr_get_payload(a), sizeof(__u64));
	return MNL_CB_OK;
}

static int xdp_features(int ifindex, __u64 *out)
{
	char req[GENL_REQ_MAX] = { 0 };
	struct nlmsghdr *nh;
	__u16 fam = 0;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), err;

	if (fd < 0)
		return -errno;
	nh = genl_req(req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	mnl_attr_put_strz(nh, CTRL_ATTR_FAMILY_NAME, "netdev");
	err = genl_call(fd, nh, family_cb, &fam);
	if (!err && !fam)
		err = -ENOENT;
	if (!err) {
		memset(req, 0, sizeof(req));
		nh = genl_req(req, fam, XP_NETDEV_CMD_DEV_GET);
		mnl_attr_put_u32(nh, XP_NETDEV_A_DEV_IFINDEX, (__u32)ifindex);
		*out = 0;
		err = genl_call(fd, nh, features_cb, out);
	}
	close(fd);
	return err;
}

int xp_if_redirect_target(int ifindex)
{
	__u64 feat = 0;
	int err = xdp_features(ifindex, &feat);

	return err ? err : !!(feat & XP_NETDEV_XDP_ACT_NDO_XMIT);
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

static int sysctl_int(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		(void)fclose(f); /* read only: nothing to lose */
	}
	return v;
}

const char *xp_uring_refusal(int err, const char *call, char *buf, size_t len)
{
	const char *hint = "";

	if (err == -ENOSYS) {
		hint = "a seccomp profile without io_uring, as containerd's and podman's defaults, or a kernel without it";
	} else if (err == -EPERM || err == -EACCES) {
		switch (sysctl_int("/proc/sys/kernel/io_uring_disabled")) {
		case 2:
			hint = "kernel.io_uring_disabled = 2";
			break;
		case 1:
			hint = "kernel.io_uring_disabled = 1 and not in kernel.io_uring_group";
			break;
		default:
			hint = "a seccomp profile refuses it";
		}
	}
	snprintf(buf, len, "%s: %s%s%s", call, strerror(-err), *hint ? "; " : "", hint);
	return buf;
}
