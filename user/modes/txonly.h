/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txonly (txonly.c): a UDP/IPv4 generator on the public API alone (xpile/engine.h,
 * xpile/pkt.h): an engine with no RX whose poll callback fills each TX ring with copies
 * of one packet built after set-up. Exactly --count packets (split over the sockets),
 * at most --rate packets per second, over --flows UDP source ports.
 */
#ifndef XPILE_ENG_TXONLY_H
#define XPILE_ENG_TXONLY_H

#include <stdbool.h>
#include <linux/types.h>

struct xp_engine;
struct xp_engine_opts;
struct eng_txonly;

/* The txonly options (main.c). */
struct eng_txonly_cfg {
	__u32 pkt_size, flows;
	__u64 count, rate;
	unsigned char dst_mac[6], src_mac[6];
	bool dst_mac_set, src_mac_set;
	__u32 src_ip, dst_ip; /* network order */
	__u16 src_port, dst_port;
};

/* Makes @o the txonly mode of @c (kept by pointer): its state, the caller's to
 * eng_txonly_free(); NULL: out of memory (said). */
struct eng_txonly *eng_mode_txonly(struct xp_engine_opts *o, const struct eng_txonly_cfg *c);
/* After xp_engine_create(), before run: --pkt-size against every port's MTU and the
 * frame's room, each socket's share of --count, the packet built. 0, or -EOPNOTSUPP
 * (said: options that can never work, exit status 2). */
int eng_txonly_prepare(struct eng_txonly *t, struct xp_engine *e);
/* After xp_engine_run(): --count promises packets on the wire, what the kernel never
 * took fails the run: 0, or -ENETDOWN (said). */
int eng_txonly_finish(const struct eng_txonly *t, struct xp_engine *e);
void eng_txonly_free(struct eng_txonly *t);

#endif /* XPILE_ENG_TXONLY_H */
