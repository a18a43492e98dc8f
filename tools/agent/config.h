/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON config (config.c). */
#ifndef XPILE_AGENT_CONFIG_H
#define XPILE_AGENT_CONFIG_H

#include "agent.h"

/* Reads and checks @path into @c (zeroed first). 0, or -1 with ONE line "FILE:
 * FIELD.PATH: what is wrong" in @err. */
int ag_config_load(const char *path, struct ag_config *c, char *err, size_t len);
void ag_config_free(struct ag_config *c);
/* "object", "string", "int"...: what a JSON value is, for errors. */
const char *ag_json_type(const json_t *o);

#endif /* XPILE_AGENT_CONFIG_H */
