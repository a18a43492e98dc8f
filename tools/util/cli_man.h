/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Man pages generated from the option tables (cli_man.c), for the hidden program-level
 * options "PROG --man [COMMAND]" (a man(7) page on stdout: the program's, or a
 * command's, named PROG-COMMAND(8)) and "PROG --commands" (the command names, one a
 * line: which pages there are).
 */
#ifndef XPILE_CLI_MAN_H
#define XPILE_CLI_MAN_H

#include "cli_types.h"

void cli_man_prog(FILE *f, const struct cli_prog *p);
void cli_man_cmd(FILE *f, const struct cli_prog *p, const struct cli_cmd *c);

#endif /* XPILE_CLI_MAN_H */
