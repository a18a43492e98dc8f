/* SPDX-License-Identifier: BSD-3-Clause */
/* fwd (fwd.c): a mode of `xpile run` on the public API alone. */
#ifndef XPILE_ENG_MODE_FWD_H
#define XPILE_ENG_MODE_FWD_H

struct xp_engine_opts;

/* Sets the fields of @o that make the mode: its name, callback and port count. */
void eng_mode_fwd(struct xp_engine_opts *o);

#endif /* XPILE_ENG_MODE_FWD_H */
