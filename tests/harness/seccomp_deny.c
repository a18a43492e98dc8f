// SPDX-License-Identifier: BSD-3-Clause
/*
 * Runs CMD under a seccomp filter (libseccomp) that refuses the named system calls
 * with an errno and allows every other, as a container runtime's profile without
 * them does: the tests' stand-in for containerd's and podman's default profiles,
 * which have no io_uring. The filter is inherited by CMD and everything it starts.
 *
 *   seccomp_deny SYSCALL[:ERRNO][,SYSCALL[:ERRNO]...] CMD [ARGS...]
 *
 * ERRNO is ENOSYS (the default: what a profile's default action returns), EPERM or
 * EACCES. Example: seccomp_deny io_uring_setup:EPERM xpile-agent run --config a.json
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <seccomp.h>

static int errno_named(const char *s)
{
	static const struct {
		const char *name;
		int value;
	} names[] = { { "ENOSYS", ENOSYS }, { "EPERM", EPERM }, { "EACCES", EACCES } };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(s, names[k].name))
			return names[k].value;
	return -1;
}

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	char *list, *tok, *save = NULL;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: seccomp_deny SYSCALL[:ERRNO][,...] CMD [ARGS...]\n");
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fprintf(stderr, "seccomp_deny: seccomp_init failed\n");
		return 1;
	}
	list = strdup(argv[1]);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		int e = ENOSYS, nr;

		if (colon) {
			*colon = 0;
			e = errno_named(colon + 1);
			if (e < 0) {
				fprintf(stderr,
					"seccomp_deny: %s: errno must be ENOSYS, EPERM or EACCES\n",
					colon + 1);
				return 2;
			}
		}
		nr = seccomp_syscall_resolve_name(tok);
		if (nr == __NR_SCMP_ERROR) {
			fprintf(stderr, "seccomp_deny: %s: no such system call\n", tok);
			return 2;
		}
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned int)e), nr, 0);
		if (err) {
			fprintf(stderr, "seccomp_deny: %s: %s\n", tok, strerror(-err));
			return 1;
		}
	}
	free(list);
	err = seccomp_load(ctx);
	seccomp_release(ctx);
	if (err) {
		fprintf(stderr, "seccomp_deny: seccomp_load: %s\n", strerror(-err));
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "seccomp_deny: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
