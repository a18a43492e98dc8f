// SPDX-License-Identifier: BSD-3-Clause
/*
 * The main thread watches every port between stats lines: link down/up, the interface
 * deleted, the steer program removed or replaced, its pins removed. Each change is
 * told once, as an event (a JSON object with --json, a line on stderr otherwise), and
 * either repaired (--reattach, our own program only) or the engine stops with exit
 * status 4 and the reason. The workers never see any of it: a check costs one
 * if_indextoname(), one SIOCGIFFLAGS, one XDP query and one stat() per port, every
 * ENG_WATCH_NS.
 */
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "tap.h"
#include "watch.h"
#include "xpile/steer_owner.h"
#include "xpile/users.h"

#define ENG_WATCH_NS 200000000ull
/* --reattach: how long the program and its pins may be gone before it is an unload.
 * `xpile-loader load` removes stale pins first and pins the new program some 0.1-1 s
 * later (the verifier), so in between a load looks like an unload. */
#define ENG_RELOAD_WAIT_NS 3000000000ull

void eng_event(struct engine *e, const struct eng_port *p, const char *event, const char *fmt, ...)
{
	char detail[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	for (char *c = detail; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '\'';
	if (e->cfg.json) {
		printf("{\"type\":\"event\",\"time\":%.3f,\"port\":\"%s\",\"event\":\"%s\","
		       "\"detail\":\"%s\"}\n",
		       e->start_ns ? (eng_now_ns() - e->start_ns) / 1e9 : 0.0, p->ifname, event,
		       detail);
		fflush(stdout);
	} else {
		ut_say(0, "%s: %s", p->ifname, detail);
	}
}

/* The reason goes to stderr also with --json: a script sees the exit status, a person
 * the line. */
static int stop(struct engine *e, const struct eng_port *p, const char *why)
{
	if (e->cfg.json)
		ut_say(0, "%s: %s", p->ifname, why);
	e->fault_status = ENG_PORT_FAILED;
	return ENG_PORT_FAILED;
}

enum link_state { LINK_ADMIN_DOWN, LINK_NO_CARRIER, LINK_UP };

/*
 * Whether the port carries frames: administratively up, with a carrier. The carrier
 * is the driver's (ETHTOOL_GLINK: netif_carrier_ok() for most), which is right the
 * moment the link comes up; IFF_RUNNING, the operational state, follows it later
 * (linkwatch runs asynchronously, rate-limited), so it is the fallback only for a
 * driver without get_link. Cannot tell: up (say nothing).
 */
static enum link_state link_state(const char *ifname)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GLINK };
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	enum link_state st = LINK_UP;

	if (fd < 0)
		return st;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		short flags = ifr.ifr_flags;

		ifr.ifr_data = (void *)&ev;
		if (!(flags & IFF_UP))
			st = LINK_ADMIN_DOWN;
		else if (!ioctl(fd, SIOCETHTOOL, &ifr))
			st = ev.data ? LINK_UP : LINK_NO_CARRIER;
		else
			st = (flags & IFF_RUNNING) ? LINK_UP : LINK_NO_CARRIER;
	}
	close(fd);
	return st;
}

static bool link_running(const char *ifname)
{
	return link_state(ifname) == LINK_UP;
}

/* A NIC negotiates its link for a second or more after a reset (ethtool -L, xpile-loader
 * wire, attaching XDP): what is sent before the carrier is there is dropped, so the
 * workers wait for it, as DPDK's testpmd waits for its ports, this long at most. A port
 * that is down by `ip link set down` is not waited for. */
#define LINK_WAIT_NS 3000000000ull

void eng_watch_start(struct engine *e)
{
	__u64 t0 = eng_now_ns();
	bool waiting = !e->take_over;

	while (waiting && eng_now_ns() - t0 < LINK_WAIT_NS) {
		waiting = false;
		for (__u32 i = 0; i < e->cfg.nports; i++)
			waiting |= link_state(e->ports[i].ifname) == LINK_NO_CARRIER;
		if (waiting)
			usleep(20000);
	}
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];

		p->link_up = link_running(p->ifname);
		eng_tap_carrier(p, p->link_up);
		if (!p->link_up)
			eng_event(
				e, p, "link_down",
				"link is down: nothing is received or sent until it is up (ip link set dev %s up; a veth needs its peer up too)",
				p->ifname);
		else if (eng_now_ns() - t0 >= 100000000ull)
			eng_event(e, p, "link_up", "link came up after %.1f s; serving",
				  (eng_now_ns() - t0) / 1e9);
	}
}

static bool own_program(const struct engine *e, const struct eng_port *p)
{
	return !e->cfg.attach_existing && !p->steer_borrowed;
}

/* A new xpile program in place of ours (`xpile-loader load` after a removal): with
 * --reattach, serve through it instead of stopping. It is not ours: it stays at exit. */
static int adopt(struct engine *e, struct eng_port *p)
{
	struct xp_steer_opts so = { .sz = sizeof(so) };
	struct xp_steer *s;
	char why[256]; /* quietly: the watch says what it found itself */
	int err;

	so.ifname = p->ifname;
	so.pin_path = e->cfg.pin_path;
	so.attach_existing = true;
	so.errbuf = why;
	so.errbuf_sz = sizeof(why);
	err = xp_steer_open(&so, &s);
	if (err)
		return err;
	for (__u32 i = 0; i < e->nq; i++)
		if (e->qs[i].port == p && e->qs[i].xsk &&
		    (err = xp_steer_xsk_set(s, e->qs[i].queue, e->qs[i].xsk->fd))) {
			xp_steer_close(s, false);
			return err;
		}
	xp_steer_close(p->steer, false);
	p->steer = s;
	p->steer_borrowed = true;
	if (p->registered)
		xp_users_register(p->ifname, xp_steer_prog_id(s), p->queues, p->nqueues);
	return 0;
}

static int watch_steer(struct engine *e, struct eng_port *p)
{
	struct xp_steer_health h;
	char why[320];

	__u32 id = xp_steer_prog_id(p->steer);

	if (xp_steer_check(p->steer, &h))
		return 0;
	/* `xpile-loader replace` swapped a new build in on our maps: xp_steer_check followed
	 * it; register under the new id so `unload` still sees this engine. */
	if (id != xp_steer_prog_id(p->steer) && p->registered)
		xp_users_register(p->ifname, xp_steer_prog_id(p->steer), p->queues, p->nqueues);
	/* `xpile-loader unload` detaches, then removes the pins: seen between the two, an
	 * unload looks like `xdp off`. A half-changed state is judged one tick later. */
	bool half = h.prog_gone != h.pins_gone && !(h.pins_gone && p->pins_told);
	if (half && !p->half_seen) {
		p->half_seen = true;
		return 0;
	}
	p->half_seen = false;
	if (!(h.prog_gone && h.pins_gone))
		p->vanished_ns = 0;
	if (h.prog_replaced && h.pins_replaced && e->cfg.reattach && !adopt(e, p)) {
		eng_event(
			e, p, "program_adopted",
			"xpile's steer program was loaded again (id %u); serving through it, and it stays at exit (--reattach)",
			h.attached_id);
		return 0;
	}
	if (h.prog_replaced) {
		p->prog_lost = true;
		snprintf(
			why, sizeof(why),
			"XDP program %s (id %u) replaced the steer program: packets no longer reach the engine; stopping (%s)",
			h.attached_name, h.attached_id,
			h.pins_replaced ?
				"it is xpile's, loaded again: --reattach serves through it instead" :
				"remove it, ip link set dev IF xdp off, then start again");
		eng_event(e, p, "program_replaced", "%s", why);
		return stop(e, p, why);
	}
	if (h.prog_gone && h.pins_gone) {
		__u64 now = eng_now_ns();

		if (e->cfg.reattach && !p->vanished_ns) {
			p->vanished_ns = now;
			eng_event(
				e, p, "program_vanished",
				"the steer program and its pins were removed: waiting %.0f s for a program `xpile-loader load` puts in their place (--reattach)",
				ENG_RELOAD_WAIT_NS / 1e9);
			return 0;
		}
		if (e->cfg.reattach && now - p->vanished_ns < ENG_RELOAD_WAIT_NS)
			return 0;
		p->prog_lost = true;
		if (e->cfg.reattach)
			snprintf(
				why, sizeof(why),
				"the steer program and its pins were removed and no program was loaded in their place within %.0f s (xpile-loader unload?): stopping",
				ENG_RELOAD_WAIT_NS / 1e9);
		else
			snprintf(
				why, sizeof(why),
				"the steer program and its pins were removed (xpile-loader unload, or a load after xdp off: --reattach serves through what it loads): stopping");
		eng_event(e, p, "program_unloaded", "%s", why);
		return stop(e, p, why);
	}
	if (h.prog_gone) {
		if (e->cfg.reattach && own_program(e, p)) {
			if (!xp_steer_reattach(p->steer)) {
				eng_event(
					e, p, "program_reattached",
					"the steer program was detached (ip link set dev %s xdp off?); attached it again (--reattach)",
					p->ifname);
				return 0;
			}
		}
		p->prog_lost = true;
		snprintf(
			why, sizeof(why),
			"the steer program was detached (ip link set dev %s xdp off?): packets no longer reach the engine; stopping (%s)",
			p->ifname,
			!own_program(e, p) ? "it is not this engine's: load it again and restart" :
			e->cfg.reattach	   ? "re-attaching it failed, see above" :
					     "--reattach puts it back instead");
		eng_event(e, p, "program_removed", "%s", why);
		return stop(e, p, why);
	}
	if ((h.pins_gone || h.pins_replaced) && !p->pins_told) {
		p->pins_told = true;
		if (h.pins_gone && e->cfg.reattach && own_program(e, p) &&
		    !xp_steer_repin(p->steer)) {
			eng_event(
				e, p, "pins_restored",
				"the steer program's pins were removed; pinned them again (--reattach)");
			p->pins_told = false;
			return 0;
		}
		eng_event(
			e, p, h.pins_gone ? "pins_removed" : "pins_replaced",
			h.pins_gone ?
				"the steer program's pins were removed: it still serves, but xpile-loader cannot see it (--reattach pins them again)" :
				"another steer program is pinned where ours was: ours still serves; its pins stay at exit");
	}
	return 0;
}

int eng_watch(struct engine *e, __u64 now)
{
	char name[IF_NAMESIZE];
	int status = 0;

	if (now < e->next_watch_ns)
		return 0;
	e->next_watch_ns = now + ENG_WATCH_NS;
	for (__u32 i = 0; i < e->cfg.nports && !status; i++) {
		struct eng_port *p = &e->ports[i];
		bool up;

		if (p->gone || p->prog_lost || p->remote) /* remote: the node's, not ours to see */
			continue;
		if (!if_indextoname(p->ifindex, name)) {
			p->gone = true;
			eng_event(
				e, p, "deleted",
				"interface deleted: its sockets and XDP program went with it; stopping");
			status = stop(e, p, "interface deleted; stopping");
			break;
		}
		up = link_running(name);
		if (up != p->link_up) {
			p->link_up = up;
			eng_tap_carrier(p, up);
			eng_event(e, p, up ? "link_up" : "link_down",
				  up ? "link is up again" :
				       "link is down: nothing is received or sent until it is up");
		}
		if (p->steer)
			status = watch_steer(e, p);
	}
	return status;
}
