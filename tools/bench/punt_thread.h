/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-bench punt: a shared slow-path thread writing the punts (punt_thread.c). */
#ifndef XPILE_BENCH_PUNT_THREAD_H
#define XPILE_BENCH_PUNT_THREAD_H

#include <stddef.h>
#include <linux/types.h>

struct punt_thread;

/* Set-up for a thread on another core (started per run), writing to @tap_fd from @buf (@bytes, registered) in
 * @slot-byte frames; 0 or a negative errno. */
int punt_thread_start(struct punt_thread **p, int tap_fd, __u8 *buf, size_t bytes, size_t slot);
/* @n frames of @len bytes through it, over @nframes frames in flight: wall ns per frame
 * (-1 on a failed write), and in @handoff_ns what the handoff cost the caller per frame. */
double punt_thread_run(struct punt_thread *p, __u32 len, __u32 nframes, __u64 n,
		       double *handoff_ns);
void punt_thread_stop(struct punt_thread *p);

#endif
