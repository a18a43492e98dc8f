/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --json errors (cli_json.c): when the command being parsed has a "json" option and it
 * was given (the parser says so with cli_json_want()), every usage error (exit 2) also
 * writes {"error":MESSAGE,"status":2} on stdout, and a program writes its own failures
 * the same way with cli_json_error(). A failing --json command thus always leaves one
 * valid JSON object on stdout.
 */
#ifndef XPILE_CLI_JSON_H
#define XPILE_CLI_JSON_H

#include <stdbool.h>
#include <stdio.h>

void cli_json_want(bool on);
bool cli_json_wanted(void);
void cli_json_error(FILE *f, int status, const char *msg);
/* Writes @s as a JSON string, quotes included. */
void cli_json_str(FILE *f, const char *s);
/* @s as a JSON string, quotes included, in @buf (cut to fit @len): for a %s in a line
 * printed whole. Returns @buf. */
const char *cli_json_quote(const char *s, char *buf, size_t len);
/*
 * --json on stdout: after cli_parse() has seen --json, the program calls
 * cli_json_begin(), and returns cli_json_finish(status): a failure (non-zero status)
 * that wrote nothing on stdout then writes {"error": the first error the reporter said
 * (say.h), "status": N}, so stdout holds valid JSON whatever happened. Without --json
 * both do nothing.
 */
void cli_json_begin(void);
int cli_json_finish(int status);

#endif /* XPILE_CLI_JSON_H */
