/* SPDX-License-Identifier: BSD-3-Clause */
/* What the live audit (audit.c) tells the control socket (ctl_cmds.c answers ledger). */
#ifndef XPILE_ENG_CTL_LEDGER_H
#define XPILE_ENG_CTL_LEDGER_H

#include <stdbool.h>
#include <linux/types.h>

struct engine;

/* The live audit's places of one UMEM (audit.c tells each; ledger answers the last). */
struct eng_ctl_ledger {
	double time; /* seconds since the engine was ready */
	bool ok, free_checked;
	__u32 frames;
	__s64 free, fill, kernel_rx, rx, app, tx, kernel_tx, completion, uring, total;
	__u64 audits, failures;
	char why[256];
};

/* The live audit of UMEM @dom found @l (no control socket: nothing). */
void eng_ctl_ledger_note(struct engine *e, __u32 dom, const struct eng_ctl_ledger *l);

#endif /* XPILE_ENG_CTL_LEDGER_H */
