/* SPDX-License-Identifier: BSD-3-Clause */
/* `xpile top` (top.c): a live view of every engine on the host, on their control
 * sockets (client.h). */
#ifndef XPILE_ENG_TOP_H
#define XPILE_ENG_TOP_H

#include "cli_types.h"

extern const struct cli_cmd eng_cmd_top;

int eng_top_main(const struct cli_prog *p, const struct cli_cmd *c, int argc, char **argv);

#endif /* XPILE_ENG_TOP_H */
