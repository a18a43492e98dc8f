/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An idle worker's sleep: one wait for all its sockets. With io_uring, a one-shot
 * POLL_ADD per socket is armed as the worker goes to sleep and stays armed until it
 * fires, and the sleep is one io_uring_enter whatever the number of sockets (poll()
 * pays ~80 ns per fd per call and arms every fd each time). Nothing stays on a busy
 * worker's sockets' wait queues, so the producer's flush wakes no one (uring_wait.c).
 * Where io_uring is disabled (kernel.io_uring_disabled, seccomp) or --idle-wait poll,
 * it is poll().
 */
#ifndef XPILE_URING_WAIT_H
#define XPILE_URING_WAIT_H

#include <stdbool.h>
#include <linux/types.h>

struct eng_worker;

enum eng_idle_wait { ENG_WAIT_AUTO, ENG_WAIT_URING, ENG_WAIT_POLL };

struct eng_uwait; /* a worker's ring and what is armed on it (uring_wait.c) */

/* In the worker's thread, before its loop: 0, or -errno when --idle-wait uring was
 * asked and io_uring cannot be had (told once). Auto falls back to poll() quietly
 * but for one line saying which wait is in use. */
int eng_uwait_init(struct eng_worker *w);
/* Sleeps until a socket is readable or @timeout_ms passed. */
void eng_uwait_sleep(struct eng_worker *w, int timeout_ms);
void eng_uwait_fini(struct eng_worker *w);

#endif /* XPILE_URING_WAIT_H */
