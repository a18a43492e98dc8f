/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a duplicate key stands (dupkeys.c). */
#ifndef XPILE_AGENT_DUPKEYS_H
#define XPILE_AGENT_DUPKEYS_H

#include <jansson.h>

/* dupkeys.c: where the duplicate key jansson refused (@e, json_error_duplicate_key)
 * stands in @text: 1 and @d filled, or 0 when its path cannot be told. */
struct ag_dupkey {
	char path[256]; /* of the object holding it: "" (the top), "interfaces[1]" */
	char key[128];
};
int ag_json_dupkey(const char *text, const json_error_t *e, struct ag_dupkey *d);

#endif /* XPILE_AGENT_DUPKEYS_H */
