// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double bench_median(double *v, __u32 n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

const char *bench_loadavg(void)
{
	static char load[64];
	FILE *f = fopen("/proc/loadavg", "r");

	strcpy(load, "?");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			strcpy(load, "?");
		(void)fclose(f); /* read only: nothing to lose */
		load[strcspn(load, " ")] = 0;
	}
	return load;
}

/* The script lives in the source tree: walk up from the binary (build/, build/asan/). */
static int find_script(const char *exe_dir, const char *name, char *out, size_t len)
{
	const char *env = getenv("XPILE_SRCDIR");
	char dir[PATH_MAX];

	if (env) {
		snprintf(out, len, "%s/tools/bench/%s", env, name);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	snprintf(dir, sizeof(dir), "%s", exe_dir);
	for (int up = 0; up < 4; up++) {
		char *slash;

		snprintf(out, len, "%s/tools/bench/%s", dir, name);
		if (!access(out, R_OK))
			return 0;
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	return -ENOENT;
}

int bench_exec_script(const char *cmd, const char *name)
{
	char exe[PATH_MAX], script[PATH_MAX + 64], xpile[PATH_MAX + 8], self[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		fprintf(stderr, "xpile-bench %s: cannot read /proc/self/exe: %s\n", cmd,
			strerror(errno));
		return 2;
	}
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	if (find_script(exe, name, script, sizeof(script))) {
		fprintf(stderr,
			"xpile-bench %s: tools/bench/%s not found above %s; "
			"run from the source tree or set XPILE_SRCDIR\n",
			cmd, name, exe);
		return 2;
	}
	snprintf(xpile, sizeof(xpile), "%s/xpile", exe);
	setenv("XB_XPILE", xpile, 0);
	snprintf(self, sizeof(self), "%s/xpile-bench", exe);
	setenv("XB_SELF", self, 1);
	fflush(stdout);
	execl("/bin/bash", "bash", script, (char *)NULL);
	fprintf(stderr, "xpile-bench %s: cannot run /bin/bash %s: %s\n", cmd, script,
		strerror(errno));
	return 2;
}
