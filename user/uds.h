/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `xpile run --uds PATH` (uds.c): the XSKMAP from the AF_XDP device plugin's socket
 * (xpile-agent), for an engine that loads and attaches nothing; or, where the agent
 * offers /xsk_socket, AF_XDP sockets the agent made on the node, for an engine that
 * holds no capability and never the XSKMAP.
 */
#ifndef XPILE_ENG_UDS_H
#define XPILE_ENG_UDS_H

#include <stdbool.h>

struct engine;
struct eng_dom;
struct eng_q;
struct eng_port;

/* Every port's handshake, before the UMEMs (which may be registered on the agent's
 * sockets): 0 or -errno (said). */
int eng_uds_setup(struct engine *e);
/* An agent-made socket of @d's ports for a UMEM or a queue (and the ifindex to bind it
 * to), or -1: then make one (which takes CAP_NET_RAW). */
int eng_uds_take(struct engine *e, const struct eng_dom *d, int *ifindex);
void eng_uds_xskmap_set(struct engine *e, struct eng_q *q, bool on);
void eng_uds_close(struct eng_port *p);

#endif /* XPILE_ENG_UDS_H */
