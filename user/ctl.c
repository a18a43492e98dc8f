// SPDX-License-Identifier: BSD-3-Clause
/*
 * The control socket's thread (ctl.h): binds the socket, runs the shared event loop
 * with the line server on it (tools/util/lines.h, the agent's core), samples the rates
 * once a second and stops when the main thread writes its eventfd. What the lines mean
 * is ctl_cmds.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <dirent.h>

#include "ctl.h"
#include "ctl_cmds.h"
#include "jclient.h"
#include "jline.h"
#include "capture.h"
#include "punt.h"

#define CTL_LINE_MAX 4096
#define CTL_IDLE_S 60.0
#define CTL_DRAIN_S 2.0

static void serve_line(struct ut_line_conn *lc, char *line)
{
	json_t *rep, *req = ut_jl_parse(line, &rep);
	struct eng_ctl *c = lc->conn.ctx;

	c->peer_fd = lc->conn.fd; /* whose request it is (eng_ctl_peer_uid()) */
	if (req)
		rep = eng_ctl_handle(c, req);
	ut_jl_send(lc, rep);
	json_decref(req);
}

static void line_error(struct ut_line_conn *lc, enum ut_line_err err, const struct ucred *cr)
{
	switch (err) {
	case UT_LINE_PEER:
		ut_jl_send(
			lc,
			ut_jl_err(
				"peer uid %u gid %u is not allowed: start the engine with --ctl-allow-uid %u or --ctl-allow-gid %u",
				cr->uid, cr->gid, cr->uid, cr->gid));
		break;
	case UT_LINE_NUL:
		ut_jl_send(lc, ut_jl_err("a request holds a NUL byte"));
		break;
	case UT_LINE_EMPTY:
		ut_jl_send(
			lc,
			ut_jl_err(
				"empty request: one JSON object per line, e.g. {\"cmd\":\"stats\"}"));
		break;
	default:
		ut_jl_send(lc, ut_jl_err("request longer than %d bytes: refused, connection closed",
					 CTL_LINE_MAX));
		break;
	}
}

static bool peer_ok(struct ut_line_srv *ls, const struct ucred *cr)
{
	const struct eng_ctl *c = ls->srv.ctx;
	const struct eng_ctl_cfg *cfg = c->e->cfg.ctl;

	if (cr->uid == 0 || cr->uid == geteuid())
		return true;
	for (__u32 k = 0; cfg && k < cfg->nuids; k++)
		if (cfg->uids[k] == cr->uid)
			return true;
	for (__u32 k = 0; cfg && k < cfg->ngids; k++)
		if (cfg->gids[k] == cr->gid)
			return true;
	return false;
}

static void srv_release(struct ut_srv *s)
{
	free((struct ut_line_srv *)s);
}

static void arm_tick(struct eng_ctl *c)
{
	c->tick_ts.tv_sec = 1;
	c->tick_ts.tv_nsec = 0;
	ut_loop_timeout(&c->loop, &c->tick_ev, &c->tick_ts);
}

static void on_tick(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct eng_ctl *c = (struct eng_ctl *)((char *)ev - offsetof(struct eng_ctl, tick_ev));

	if (res == -ECANCELED || l->stop)
		return;
	eng_ctl_sample(c);
	eng_punt_reclaim(c->e); /* replaced sets whose grace period passed since */
	eng_capture_reclaim(c->e);
	ut_line_expire(c->ls, ut_now());
	arm_tick(c);
}

static void on_stop(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct eng_ctl *c = (struct eng_ctl *)((char *)ev - offsetof(struct eng_ctl, stop_ev));

	l->stop = true;
	ut_loop_cancel(l, &c->tick_ev);
}

static void *ctl_main(void *arg)
{
	struct eng_ctl *c = arg;

	ut_loop_run(&c->loop);
	ut_srv_stop(&c->ls->srv);
	c->ls = NULL;
	ut_loop_drain(&c->loop);
	return NULL;
}

/* A socket file already there: stale (nobody listens, or its listener is a process
 * that is gone) is removed; a live engine's is refused. */
static int clear_stale(const char *path, const struct sockaddr_un *sa)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);
	struct stat st;
	int fd, err = 0;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) &&
	    !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) &&
	    (kill(cr.pid, 0) == 0 || errno != ESRCH))
		err = -EADDRINUSE;
	close(fd);
	if (!err && unlink(path) && errno != ENOENT)
		err = -errno;
	return err;
}

/* Fails with @err, the reason in c->why (said by the caller). */
#define ctl_fail(c, err, ...) (snprintf((c)->why, sizeof((c)->why), __VA_ARGS__), (err))

static int ctl_bind(struct eng_ctl *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, err;

	if (strlen(c->path) >= sizeof(sa.sun_path))
		return ctl_fail(
			c, -ENAMETOOLONG,
			"control socket %s: longer than %zu bytes: give --ctl a shorter path",
			c->path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
	if (!c->e->cfg.ctl || !c->e->cfg.ctl->path)
		mkdir(eng_ctl_dir(), 0700); /* an error shows at the bind */
	err = clear_stale(c->path, &sa);
	/* Taking over: the predecessor gives the path up right after the commit. */
	for (int i = 0; err == -EADDRINUSE && c->e->take_over && i < 400; i++) {
		usleep(5000);
		err = clear_stale(c->path, &sa);
	}
	if (err == -EADDRINUSE)
		return ctl_fail(
			c, err,
			"control socket %s: another engine serves it: give this one --name NAME (or --no-ctl)",
			c->path);
	if (err)
		return ctl_fail(c, err,
				"control socket %s: %s: remove it or give --ctl another path",
				c->path, strerror(-err));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ctl_fail(c, -errno, "control socket: %s", strerror(errno));
	/* Nobody can connect before listen(), so the mode is set before anyone can. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(c->path, 0600) ||
	    stat(c->path, &st) || listen(fd, 16)) {
		err = -errno;
		unlink(c->path);
		close(fd);
		return ctl_fail(
			c, err, "control socket %s: %s%s", c->path, strerror(-err),
			err == -EACCES || err == -ENOENT ?
				" (run as root, or give --ctl a path in a directory you own)" :
				"");
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	return fd;
}

/* The ports joined by '+', and in a named network namespace (ip netns) "@NS": the
 * same interface names in two namespaces are two engines. */
const char *eng_ctl_dir(void)
{
	return ut_run_dir();
}

static void default_name(struct engine *e, char *buf, size_t len)
{
	struct stat self, init, st;
	char path[300];
	size_t k = 0;
	struct dirent *de;
	DIR *d;

	buf[0] = 0;
	for (__u32 i = 0; i < e->cfg.nports && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "+" : "", e->ports[i].ifname);
	/* PID 1's may be closed to us (then a name under /run/netns says it). */
	if (stat("/proc/self/ns/net", &self) ||
	    (!stat("/proc/1/ns/net", &init) && self.st_ino == init.st_ino) ||
	    !(d = opendir("/run/netns")))
		return;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) && st.st_ino == self.st_ino &&
		    st.st_dev == self.st_dev) {
			if (k < len)
				snprintf(buf + k, len - k, "@%.40s", de->d_name);
			break;
		}
	}
	closedir(d);
}

int eng_ctl_start(struct engine *e)
{
	const struct eng_ctl_cfg *cfg = e->cfg.ctl;
	bool asked = cfg && (cfg->name || cfg->path);
	struct eng_ctl *c;
	int fd, err;

	if (cfg && cfg->off)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->e = e;
	c->efd = -1;
	pthread_mutex_init(&c->mu, NULL);
	c->log_level = e->cfg.verbose ? 1 : 0;
	if (cfg && cfg->name)
		snprintf(c->name, sizeof(c->name), "%s", cfg->name);
	else
		default_name(e, c->name, sizeof(c->name));
	if (cfg && cfg->path)
		snprintf(c->path, sizeof(c->path), "%s", cfg->path);
	else
		snprintf(c->path, sizeof(c->path), "%s/%s.sock", eng_ctl_dir(), c->name);
	fd = ctl_bind(c);
	if (fd < 0) {
		err = fd;
		if (asked)
			ut_say(err, "%s", c->why);
		else
			ut_warn("%s; the engine runs without one", c->why);
		goto fail;
	}
	c->ls = calloc(1, sizeof(*c->ls));
	err = c->ls ? ut_loop_init(&c->loop, UT_LOOP_AUTO, 64) : -ENOMEM;
	if (!err) {
		c->efd = eventfd(0, EFD_CLOEXEC);
		err = c->efd < 0 ? -errno : 0;
	}
	if (err) {
		close(fd);
		unlink(c->path);
		goto fail;
	}
	snprintf(c->ls->srv.name, sizeof(c->ls->srv.name), "control");
	c->ls->srv.release = srv_release;
	c->ls->max = CTL_LINE_MAX;
	c->ls->idle_s = CTL_IDLE_S;
	c->ls->drain_s = CTL_DRAIN_S;
	c->ls->peer_ok = peer_ok;
	c->ls->line = serve_line;
	c->ls->error = line_error;
	ut_line_serve(c->ls, &c->loop, c, fd);
	c->stop_ev.fn = on_stop;
	ut_loop_read(&c->loop, &c->stop_ev, c->efd, &c->stop_buf, sizeof(c->stop_buf));
	c->tick_ev.fn = on_tick;
	c->t0_ns = eng_now_ns();
	c->t0_cycles = eng_cycles();
	eng_ctl_sample(c);
	arm_tick(c);
	if (pthread_create(&c->thread, NULL, ctl_main, c)) {
		err = ut_say(-EAGAIN, "control socket: cannot start its thread");
		ut_srv_stop(&c->ls->srv);
		ut_loop_fini(&c->loop);
		close(c->efd);
		unlink(c->path);
		goto fail_nofree_ls;
	}
	c->started = true;
	e->ctl = c;
	return 0;
fail:
	free(c->ls);
fail_nofree_ls:
	pthread_mutex_destroy(&c->mu);
	free(c);
	return asked ? err : 0;
}

void eng_ctl_stop(struct engine *e)
{
	struct eng_ctl *c = e->ctl;
	__u64 one = 1;
	struct stat st;

	if (!c)
		return;
	if (write(c->efd, &one, sizeof(one)) != sizeof(one))
		ut_warn("control socket: cannot stop its thread");
	else
		pthread_join(c->thread, NULL);
	ut_loop_fini(&c->loop);
	close(c->efd);
	/* Only the very file bound: a successor may have bound the path since. */
	if (!stat(c->path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	e->ctl = NULL;
	pthread_mutex_destroy(&c->mu);
	free(c);
}
