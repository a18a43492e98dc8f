/* SPDX-License-Identifier: BSD-3-Clause */
/* rxdrop (rxdrop.c): a mode of `xpile run` on the public API alone. */
#ifndef XPILE_ENG_MODE_RXDROP_H
#define XPILE_ENG_MODE_RXDROP_H

struct xp_engine_opts;

/* Sets the fields of @o that make the mode: its name, callback and port count. */
void eng_mode_rxdrop(struct xp_engine_opts *o);

#endif /* XPILE_ENG_MODE_RXDROP_H */
