// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-cni's side of the agent's control socket (docs/agent.md): one JSON request
 * line, one reply line, a 5 s bound on both (a runtime waits on the plugin).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <jansson.h>

#include "cni.h"

/* Sends @req; the reply object in *@rep (the caller's), or -1 with why in @err. */
static int ask(const char *sock, json_t *req, json_t **rep, char *err, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	char line[65536], *text = json_dumps(req, JSON_COMPACT);
	size_t n = 0;
	ssize_t got;
	json_t *ok;
	int fd = -1, rc = -1;

	*rep = NULL;
	if (!text || strlen(sock) >= sizeof(sun.sun_path)) {
		snprintf(err, len, "bad request or socket path %s", sock);
		goto out;
	}
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		snprintf(
			err, len,
			"cannot reach the agent at %s: %s (is xpile-agent running? \"agent\" in the config)",
			sock, strerror(errno));
		goto out;
	}
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || write(fd, "\n", 1) != 1) {
		snprintf(err, len, "agent %s: write: %s", sock, strerror(errno));
		goto out;
	}
	while (n < sizeof(line) - 1 && (got = read(fd, line + n, sizeof(line) - 1 - n)) > 0) {
		n += (size_t)got;
		if (memchr(line, '\n', n))
			break;
	}
	line[n] = 0;
	*rep = json_loads(line, 0, NULL);
	if (!*rep) {
		snprintf(err, len, "agent %s: no reply", sock);
		goto out;
	}
	ok = json_object_get(*rep, "ok");
	if (!json_is_true(ok)) {
		const char *e = json_string_value(json_object_get(*rep, "error"));

		snprintf(err, len, "agent: %s", e ? e : "refused");
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}

static int simple(const char *sock, json_t *req, char *err, size_t len)
{
	json_t *rep = NULL;
	int rc = ask(sock, req, &rep, err, len);

	json_decref(rep);
	json_decref(req);
	return rc;
}

int cni_agent_lend(const char *sock, const char *iface, const char *netns, const char *container,
		   char *err, size_t len)
{
	return simple(sock,
		      json_pack("{s:s, s:s, s:s, s:s}", "cmd", "lend", "iface", iface, "netns",
				netns, "container", container),
		      err, len);
}

int cni_agent_reclaim(const char *sock, const char *iface, char *err, size_t len)
{
	return simple(sock, json_pack("{s:s, s:s}", "cmd", "reclaim", "iface", iface), err, len);
}

int cni_agent_prog_id(const char *sock, const char *iface, __u32 *prog_id, char *err, size_t len)
{
	json_t *req = json_pack("{s:s}", "cmd", "status"), *rep = NULL, *ifs, *v;
	size_t k;
	int rc = ask(sock, req, &rep, err, len);

	json_decref(req);
	if (rc) {
		json_decref(rep);
		return rc;
	}
	rc = -1;
	snprintf(err, len, "the agent does not serve %s (see xpile-agent ctl status)", iface);
	ifs = json_object_get(rep, "interfaces");
	json_array_foreach(ifs, k, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));

		if (name && !strcmp(name, iface)) {
			*prog_id = (__u32)json_integer_value(json_object_get(v, "prog_id"));
			rc = 0;
		}
	}
	json_decref(rep);
	return rc;
}
