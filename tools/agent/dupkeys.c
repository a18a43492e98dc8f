// SPDX-License-Identifier: BSD-3-Clause
/*
 * The field path of a key given twice in one object. jansson refuses such a text
 * (JSON_REJECT_DUPLICATES: json-c, which the agent used first, has no such check and
 * keeps the last) but says only where: the position just after the second key, and
 * the key's token as written. That token is swapped for a marker no config holds,
 * jansson reads the text again without the check, and the marker's place in the tree
 * is the path. Nothing here parses JSON itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "dupkeys.h"

#define MARK "\x01xpile-dup"

static bool find_mark(json_t *v, char *path, size_t len)
{
	size_t n = strlen(path);

	if (json_is_object(v)) {
		const char *k;
		json_t *e;

		json_object_foreach(v, k, e)
		{
			if (!strcmp(k, MARK))
				return true;
			snprintf(path + n, len - n, "%s%s", n ? "." : "", k);
			if (find_mark(e, path, len))
				return true;
			path[n] = 0;
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			snprintf(path + n, len - n, "[%zu]", i);
			if (find_mark(json_array_get(v, i), path, len))
				return true;
			path[n] = 0;
		}
	}
	return false;
}

int ag_json_dupkey(const char *text, const json_error_t *e, struct ag_dupkey *d)
{
	size_t tlen = strlen(text), raw_len, at = (size_t)e->position;
	/* "duplicate object key near '<the key's token, as written>'" */
	const char *near = strstr(e->text, "near '"), *end = strrchr(e->text, '\'');
	char raw[sizeof(e->text)], *swapped;
	json_t *root, *k;

	memset(d, 0, sizeof(*d));
	if (!near || end <= near + 6 || e->position < 0)
		return 0;
	near += 6;
	raw_len = (size_t)(end - near);
	if (at > tlen || raw_len > at || memcmp(text + at - raw_len, near, raw_len))
		return 0; /* the token was cut short in the message */
	memcpy(raw, near, raw_len);
	raw[raw_len] = 0;
	k = json_loads(raw, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (json_is_string(k))
		snprintf(d->key, sizeof(d->key), "%s", json_string_value(k));
	json_decref(k);
	swapped = malloc(tlen + sizeof(MARK) + 8);
	if (!swapped)
		return 0;
	snprintf(swapped, tlen + sizeof(MARK) + 8, "%.*s\"\\u0001xpile-dup\"%s",
		 (int)(at - raw_len), text, text + at);
	/* The first duplicate is the one marked; a later one, if any, is accepted here. */
	root = json_loads(swapped, JSON_ALLOW_NUL, NULL);
	free(swapped);
	if (!root || !find_mark(root, d->path, sizeof(d->path))) {
		json_decref(root);
		return 0;
	}
	json_decref(root);
	return 1;
}
