// SPDX-License-Identifier: BSD-3-Clause
/*
 * unitrun: runs a command under the system-call filter of a systemd unit, for tests on
 * a machine where systemd is not PID 1 (so systemd-run cannot start the unit): the
 * unit's allow list (SystemCallFilter=, expanded by `systemd-analyze syscall-filter`
 * into FILE, one name a line), SystemCallErrorNumber= for a call outside it,
 * SystemCallArchitectures=native (libseccomp's filter holds the native architecture
 * only, so a call of another one kills), RestrictAddressFamilies= (socket() of another
 * family fails with EAFNOSUPPORT, as systemd has it) and NoNewPrivileges=. It uses
 * libseccomp, as systemd does.
 *
 *   unitrun --allow FILE [--errno N] [--families AF_UNIX,AF_INET,...] -- CMD [ARGS...]
 *
 * A name libseccomp does not know on this architecture is skipped, as systemd skips it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <seccomp.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

static const struct {
	const char *name;
	int af;
} families[] = {
	{ "AF_UNIX", AF_UNIX },	      { "AF_INET", AF_INET },	  { "AF_INET6", AF_INET6 },
	{ "AF_NETLINK", AF_NETLINK }, { "AF_PACKET", AF_PACKET }, { "AF_XDP", AF_XDP },
};

static int family(const char *name)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcmp(name, families[i].name))
			return families[i].af;
	return -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: unitrun --allow FILE [--errno N] [--families AF_X,...] -- CMD "
			"[ARGS...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *allow = NULL, *fams = NULL;
	bool fam_ok[AF_MAX] = { 0 };
	int err = EPERM, i, rc, nr_socket = seccomp_syscall_resolve_name("socket");
	scmp_filter_ctx ctx;
	char line[128];
	FILE *f;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(argv[i], "--allow"))
			allow = argv[++i];
		else if (!strcmp(argv[i], "--errno"))
			err = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--families"))
			fams = argv[++i];
		else
			return usage();
	}
	if (!allow || i + 1 >= argc || err <= 0)
		return usage();
	ctx = seccomp_init(SCMP_ACT_ERRNO((unsigned int)err));
	f = fopen(allow, "re");
	if (!ctx || !f) {
		fprintf(stderr, "unitrun: %s: %s\n", allow, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		int nr;

		line[strcspn(line, " \t\n")] = 0;
		nr = *line ? seccomp_syscall_resolve_name(line) : __NR_SCMP_ERROR;
		if (nr == __NR_SCMP_ERROR || (fams && nr == nr_socket))
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (rc) {
			fprintf(stderr, "unitrun: allow %s: %s\n", line, strerror(-rc));
			return 1;
		}
	}
	fclose(f);
	for (char *s = fams ? strdup(fams) : NULL, *sp, *w = s ? strtok_r(s, ",", &sp) : NULL; w;
	     w = strtok_r(NULL, ",", &sp)) {
		int af = family(w);

		if (af < 0) {
			fprintf(stderr, "unitrun: unknown address family %s\n", w);
			return 2;
		}
		fam_ok[af] = true;
	}
	for (int af = 0; fams && af < AF_MAX; af++) {
		rc = seccomp_rule_add(ctx,
				      fam_ok[af] ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EAFNOSUPPORT),
				      nr_socket, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)af));
		if (rc) {
			fprintf(stderr, "unitrun: socket family %d: %s\n", af, strerror(-rc));
			return 1;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || (rc = seccomp_load(ctx))) {
		fprintf(stderr, "unitrun: cannot load the filter: %s\n", strerror(errno));
		return 1;
	}
	seccomp_release(ctx);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "unitrun: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
