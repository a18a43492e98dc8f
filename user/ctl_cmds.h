/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control socket's lines mean (ctl_cmds.c), and the control thread's state
 * they read (ctl.c owns it). Everything here runs on the control thread and only reads
 * what the workers write (relaxed loads, as stats.c does).
 */
#ifndef XPILE_ENG_CTL_CMDS_H
#define XPILE_ENG_CTL_CMDS_H

#include <pthread.h>
#include <sys/types.h>
#include <jansson.h>

#include "ctl_ledger.h"
#include "engine.h"
#include "jline.h"

/* A queue's counters at the last two samples (one a second): its rates. */
struct eng_ctl_rate {
	__u64 rx_packets, tx_packets, rx_bytes, tx_bytes;
	double rx_pps, tx_pps, rx_bps, tx_bps;
};

struct eng_ctl {
	struct engine *e;
	char name[96];
	char path[200];
	char why[256]; /* why the socket could not be had */
	dev_t dev; /* the socket file bound, so that only ours is removed */
	ino_t ino;
	pthread_t thread;
	bool started;
	struct ut_loop loop;
	struct ut_line_srv *ls;
	int efd; /* eventfd: the main thread's stop */
	struct ut_ev stop_ev, tick_ev;
	__u64 stop_buf;
	struct __kernel_timespec tick_ts;
	__u64 sample_ns; /* when the rates were last sampled */
	__u64 t0_ns, t0_cycles; /* at start: the cycle counter's rate */
	int log_level; /* 0 error, 1 info, 2 debug */
	__u64 requests;
	int peer_fd; /* the connection of the request being served */
	struct eng_ctl_rate rate[ENG_MAX_PORTS * ENG_MAX_QUEUES];
	pthread_mutex_t mu; /* ledger: written by the main thread (audit.c) */
	struct eng_ctl_ledger ledger[ENG_MAX_DOMS];
};

/* One request object: its reply object. */
json_t *eng_ctl_handle(struct eng_ctl *c, json_t *req);
/* Once a second: the queues' rates. */
void eng_ctl_sample(struct eng_ctl *c);

#endif /* XPILE_ENG_CTL_CMDS_H */
