/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's handover protocol (handover.h) inside: the messages both sides exchange
 * and what the two share (handover_proto.c); the serving side is handover_serve.c
 * (hello check, offer, state, serve), the taking side handover_take.c (offer and state
 * taken, the pause line). The failure cases: docs/engine.md, "Handover".
 */
#ifndef XPILE_ENG_HANDOVER_PROTO_H
#define XPILE_ENG_HANDOVER_PROTO_H

#include <errno.h>

#include "engine.h"
#include "xpile/handover.h"

/* A handover step that cannot go on: one line, -EPROTO (the other side keeps or gets
 * nothing of ours). */
#define fail(...) ut_say(-EPROTO, __VA_ARGS__)

/* How long each side waits for the other's next message (ms). The old engine's wait
 * for OK is its pause's bound when the new one hangs. */
#define HO_HELLO_MS 2000
#define HO_READY_MS 5000
#define HO_STATE_MS 2000
#define HO_OK_MS 1000
#define HO_COMMIT_MS 2000

enum { HO_HELLO = 1, HO_OFFER, HO_READY, HO_STATE, HO_OK, HO_COMMIT };

/* XPILE_HANDOVER_FAULT (tests): where this process dies (SIGKILL) or misbehaves. */
enum ho_fault {
	HO_FAULT_NONE,
	HO_FAULT_NEW_HELLO, /* new: after sending HELLO */
	HO_FAULT_NEW_OFFER, /* new: after taking the OFFER (everything mapped) */
	HO_FAULT_NEW_READY, /* new: after READY: the old engine is pausing */
	HO_FAULT_NEW_STATE, /* new: after STATE, before OK */
	HO_FAULT_NEW_REFUSE, /* new: answers the STATE with an error */
	HO_FAULT_NEW_STALL, /* new: never answers the STATE (the old one times out) */
	HO_FAULT_OLD_OFFER, /* old: after sending the OFFER */
	HO_FAULT_OLD_STATE, /* old: after sending the STATE, paused */
	HO_FAULT_NEW_OK, /* new: after sending OK, before COMMIT */
};

struct ho_port {
	char ifname[16];
	__u32 nqueues;
	__u32 queues[ENG_MAX_QUEUES];
};

/* HELLO: what the new engine was asked to serve, to be compared with what is served. */
struct ho_hello {
	__u32 pid;
	__u32 nports;
	char mode[16];
	struct ho_port ports[ENG_MAX_PORTS];
	__u32 frame_size, headroom, frames, layout;
	__u32 rx_ring, tx_ring, fill_ring, comp_ring;
	__u8 no_need_wakeup, multi_buffer, multi_buffer_set, busy_poll;
	char pin_path[256];
	__u32 umem; /* enum eng_umem (dom.h) */
	__u32 xsk_mode; /* enum xp_xsk_mode asked for */
	__u32 tx_budget, busy_budget; /* socket options, set once by the first engine */
	__u32 pad_;
};

/* One UMEM: where it lies in the memfd sent with it, its layout and its frames. */
struct ho_umem {
	struct xp_umem_rec rec;
	struct xp_layout layout;
	__s32 numa_node;
	__u32 hugepages;
};

struct ho_sock {
	struct xp_xsk_rec rec;
	__u32 umem; /* index into the UMEM records */
	__u32 pad_;
};

/* OFFER: fds are the UMEMs' memfds, then the sockets', in record order. */
struct ho_offer {
	__u32 pid, numems, nsocks, pad_;
	struct ho_umem umems[ENG_MAX_PORTS];
	struct ho_sock socks[ENG_MAX_PORTS * ENG_MAX_QUEUES];
};

/* STATE, at the pause: this header, nsocks socket states, then each UMEM's state
 * bytes (enum xp_place), nframes[i] of them in frame index order. */
struct ho_sock_state {
	struct xp_xsk_rec rec; /* the indices at the pause */
	__u64 fill_held; /* fill_posted - rx_descs: in the fill ring, the kernel, RX */
	__u64 tx_inflight; /* posted to TX, not completed */
};

struct ho_state {
	__u64 park_ns; /* the last worker parked */
	__u64 last_work_ns; /* the last turn that moved packets */
	__u32 numems, nsocks;
	__u32 nframes[ENG_MAX_PORTS];
};

struct eng_ho {
	const char *handover; /* --handover PATH, else NULL (struct eng_ho_cfg) */
	const char *take_over; /* --take-over PATH, else NULL */
	int lfd; /* --handover listener, -1 */
	__u64 lino; /* its socket file's inode, to unlink only our own */
	int sfd; /* signalfd the main loop polls beside lfd */
	int conn; /* --take-over: the connection to the old engine */
	pid_t peer;
	enum ho_fault fault;
	__u16 version; /* XPILE_HANDOVER_VERSION (tests), else 0: the library's */
	struct ho_offer offer; /* taken over */
	int fds[XP_HO_MAX_FDS];
	__u32 nfds;
	bool fd_used[XP_HO_MAX_FDS];
	__u64 commit_ns; /* new: when the workers were let go */
	__u64 state_ns, ok_ns; /* new: STATE received, OK sent */
	__u64 old_park_ns, old_last_work_ns;
	bool told; /* new: the pause line was printed */
};

/* One UMEM of the engine and what goes with it. Today an engine has one; the records
 * are an array so that an engine with several (one per port) is this one loop. */
struct ho_dom {
	struct xp_layout *layout;
	struct xp_ledger *ledger;
	struct xp_umem **umem;
	int memfd;
	__u64 off;
	__u32 page_size;
	int numa_node;
};

__u32 ho_doms(struct engine *e, struct ho_dom *d);
__u32 ho_dom_of(const struct engine *e, const struct eng_q *q);
/* XPILE_HANDOVER_FAULT: this process dies here when asked to. */
void ho_die_at(const struct eng_ho *h, enum ho_fault f);
void ho_say(const struct engine *e, const char *json, const char *text);
/* HELLO: what this engine was asked to serve. */
void ho_hello_fill(const struct engine *e, struct ho_hello *m);
const char *ho_recv_why(int err);

#endif
