/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "PROG --bash-completion" (cli_complete.c): a bash completion script for PROG from its
 * option tables: commands, options, option values, interface names, files.
 */
#ifndef XPILE_CLI_COMPLETE_H
#define XPILE_CLI_COMPLETE_H

#include "cli_types.h"

void cli_complete_bash(FILE *f, const struct cli_prog *p);

#endif /* XPILE_CLI_COMPLETE_H */
