/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txonly (txonly.c): a UDP/IPv4 generator. Exactly --count packets (split over the
 * sockets), at most --rate packets per second, over --flows UDP source ports, each a
 * copy of one packet built at set-up.
 */
#ifndef XPILE_ENG_TXONLY_H
#define XPILE_ENG_TXONLY_H

#include <stdbool.h>
#include <linux/types.h>

struct engine;
struct eng_port;

/* The txonly options (main.c; the engine's cfg.txonly points here in --mode txonly). */
struct eng_txonly_cfg {
	__u32 pkt_size, flows;
	__u64 count, rate;
	unsigned char dst_mac[6], src_mac[6];
	bool dst_mac_set, src_mac_set;
	__u32 src_ip, dst_ip; /* network order */
	__u16 src_port, dst_port;
};

/* Port @p with MTU @mtu can carry --pkt-size: 0, or refused. Nothing without txonly. */
int eng_txonly_check_port(struct engine *e, const struct eng_port *p, __u32 mtu);
/* Set-up stage, after the sockets: each socket's share of --count, the packet built. */
int eng_txonly_setup(struct engine *e);
void eng_txonly_free(struct engine *e);
/* After the workers stopped: --count packets the kernel never took fail the run. */
void eng_txonly_finish(struct engine *e);
/* Bytes of each packet sent (without the FCS); 0 without txonly. */
__u32 eng_txonly_frame_len(const struct engine *e);

#endif /* XPILE_ENG_TXONLY_H */
