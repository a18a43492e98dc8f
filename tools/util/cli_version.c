// SPDX-License-Identifier: BSD-3-Clause
/*
 * --version: the program, its version, and the versions of libbpf, libxdp and liburing
 * as loaded into this process. Neither libxdp 1.3 nor liburing 2.3 has a version call,
 * and libbpf's says only major.minor, so the version is read where the dynamic linker
 * found each library: the file the soname link resolves to (libbpf.so.1 ->
 * libbpf.so.1.1.2). A library the program does not link is not loaded and not named.
 */
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cli_version.h"

#define NLIBS 3

struct lib_version {
	const char *name;
	char version[32];
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_version *libs = arg;
	char real[PATH_MAX];
	const char *base;

	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	if (!realpath(info->dlpi_name, real))
		snprintf(real, sizeof(real), "%s", info->dlpi_name);
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	for (int i = 0; i < NLIBS; i++) {
		size_t n = strlen(libs[i].name);

		if (!strncmp(base, libs[i].name, n) && !strncmp(base + n, ".so.", 4))
			snprintf(libs[i].version, sizeof(libs[i].version), "%s", base + n + 4);
	}
	return 0;
}

void cli_version(FILE *f, const struct cli_prog *p, bool json)
{
	struct lib_version libs[NLIBS] = { { .name = "libbpf" },
					   { .name = "libxdp" },
					   { .name = "liburing" } };
	int shown = 0;

	dl_iterate_phdr(find_lib, libs);
	if (json) {
		fprintf(f, "{\"name\":");
		cli_json_str(f, p->name);
		fprintf(f, ",\"version\":");
		cli_json_str(f, p->version ? p->version : "");
		for (int i = 0; i < NLIBS; i++) {
			fprintf(f, ",\"%s\":", libs[i].name);
			if (*libs[i].version)
				cli_json_str(f, libs[i].version);
			else
				fputs("null", f);
		}
		fputs("}\n", f);
		return;
	}
	fprintf(f, "%s %s", p->name, p->version ? p->version : "");
	for (int i = 0; i < NLIBS; i++)
		if (*libs[i].version)
			fprintf(f, "%s%s %s", shown++ ? ", " : " (", libs[i].name, libs[i].version);
	fputs(shown ? ")\n" : "\n", f);
}
