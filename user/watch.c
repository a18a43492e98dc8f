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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "xpile/log.h"
#include "xpile/owner.h"

#define ENG_WATCH_NS 200000000ull

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
		fprintf(stderr, "xpile: %s: %s\n", p->ifname, detail);
	}
}

/* The reason goes to stderr also with --json: a script sees the exit status, a person
 * the line. */
static int stop(struct engine *e, const struct eng_port *p, const char *why)
{
	if (e->cfg.json)
		fprintf(stderr, "xpile: %s: %s\n", p->ifname, why);
	e->fault_status = ENG_PORT_FAILED;
	return ENG_PORT_FAILED;
}

static bool link_running(const char *ifname)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up = true; /* cannot tell: say nothing */

	if (fd < 0)
		return up;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr))
		up = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	return up;
}

void eng_watch_start(struct engine *e)
{
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];

		p->link_up = link_running(p->ifname);
		if (!p->link_up)
			eng_event(
				e, p, "link_down",
				"link is down: nothing is received or sent until it is up (ip link set dev %s up; a veth needs its peer up too)",
				p->ifname);
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
	xp_log_fn prev;
	int err;

	so.ifname = p->ifname;
	so.pin_path = e->cfg.pin_path;
	so.attach_existing = true;
	prev = xp_set_log_fn(NULL);
	err = xp_steer_open(&so, &s);
	xp_set_log_fn(prev);
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
		p->prog_lost = true;
		snprintf(
			why, sizeof(why),
			"the steer program and its pins were removed (xpile-loader unload): stopping");
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

		if (p->gone || p->prog_lost)
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
			eng_event(e, p, up ? "link_up" : "link_down",
				  up ? "link is up again" :
				       "link is down: nothing is received or sent until it is up");
		}
		if (p->steer)
			status = watch_steer(e, p);
	}
	return status;
}
