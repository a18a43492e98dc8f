/* SPDX-License-Identifier: BSD-3-Clause */
/* sockdir.c: the agent's Unix sockets, where nobody else can swap them. */
#ifndef XPILE_AGENT_SOCKDIR_H
#define XPILE_AGENT_SOCKDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

struct ag_sock {
	int dirfd, parentfd; /* O_PATH: its directory and that one's parent (-1: none) */
	char path[sizeof(
		((struct sockaddr_un *)0)->sun_path)]; /* DIR/NAME, for bind and messages */
	char name[64], dname[NAME_MAX + 1]; /* its name in dirfd; dirfd's in parentfd */
	dev_t dev;
	ino_t ino; /* the very file bound */
};
/*
 * Walks the absolute @dir from / without following a symbolic link, creating missing
 * directories (0755), and refuses a component that is not a directory, not owned by
 * root or the agent's uid, or writable by group or others (a sticky one passes, as
 * /tmp, except among the last @strict: the agent's own). Then binds @name there with
 * @mode from the start (a umask), gives it group @gid unless (gid_t)-1, and listens.
 * A stale socket file nobody listens on is replaced; a live one, or anything else,
 * refused. Returns the socket, or -1 with one line in @err.
 */
int ag_sock_listen(struct ag_sock *s, const char *dir, int strict, const char *name, int type,
		   mode_t mode, gid_t gid, int backlog, char *err, size_t len);
/* The socket file is still the one bound: not removed, not replaced. */
bool ag_sock_intact(const struct ag_sock *s);
/* Removes the file if it is still the one bound, then (@rmdir) its directory if it is
 * empty. Returns whether it was still ours. */
bool ag_sock_close(struct ag_sock *s, bool rmdir);

#endif /* XPILE_AGENT_SOCKDIR_H */
