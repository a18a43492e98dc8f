/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The programs' one event loop (loop.c): every wait is an operation (accept, recv,
 * recvmsg, a read of a signalfd, a poll, a timeout) whose completion calls back the
 * struct ut_ev it was given. Two back ends carry the operations out (loop_be.h):
 * io_uring, where the thread blocks in io_uring_enter, and epoll, for where io_uring
 * is refused (containerd's and podman's default seccomp profiles,
 * kernel.io_uring_disabled). Nothing polls or sleeps in either. The agent's one thread
 * runs on it; a server (server.h) is served by it.
 */
#ifndef XPILE_UTIL_LOOP_H
#define XPILE_UTIL_LOOP_H

#include <stddef.h>
#include <sys/socket.h>
#include <linux/time_types.h>

#include "loop_types.h"

/* AUTO: io_uring, else (io_uring_setup refused: seccomp, kernel.io_uring_disabled, no
 * io_uring in the kernel) epoll. 0, or -errno after one line. */
int ut_loop_init(struct ut_loop *l, enum ut_loop_kind kind, unsigned int entries);
/* Logs the one line naming the loop that runs and, for epoll, why: once the agent is
 * up, so that a start refused for another cause stays one line. */
void ut_loop_say(const struct ut_loop *l);
const char *ut_loop_name(const struct ut_loop *l); /* "io_uring", "epoll" */
/* Frees the loop; operations still pending are dropped without a completion. */
void ut_loop_fini(struct ut_loop *l);
/* One operation each, completed once through @ev; buffers (and @ts) stay valid until
 * then. 0, or -errno when it could not be queued (it will not run). */
int ut_loop_accept(struct ut_loop *l, struct ut_ev *ev, int fd); /* SOCK_CLOEXEC */
int ut_loop_recv(struct ut_loop *l, struct ut_ev *ev, int fd, void *buf, size_t len);
int ut_loop_recvmsg(struct ut_loop *l, struct ut_ev *ev, int fd, struct msghdr *msg, int flags);
int ut_loop_read(struct ut_loop *l, struct ut_ev *ev, int fd, void *buf, size_t len);
int ut_loop_poll_in(struct ut_loop *l, struct ut_ev *ev, int fd);
int ut_loop_poll_out(struct ut_loop *l, struct ut_ev *ev, int fd);
int ut_loop_timeout(struct ut_loop *l, struct ut_ev *ev, const struct __kernel_timespec *ts);
/* The pending operation of @ev (if any) completes with -ECANCELED. */
int ut_loop_cancel(struct ut_loop *l, struct ut_ev *ev);
/* Waits and dispatches until l->stop. */
int ut_loop_run(struct ut_loop *l);
/* After l->stop: dispatches what cancelled and shut-down operations complete with,
 * so that their owners free themselves. */
void ut_loop_drain(struct ut_loop *l);

#endif /* XPILE_UTIL_LOOP_H */
