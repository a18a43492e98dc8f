/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main() for a corpus replay: include after the target, with FUZZ_CORPUS naming its
 * seed directory (relative to the repository root, where tests/run.sh runs). Each file
 * goes through LLVMFuzzerTestOneInput() once; a broken property aborts, so the suite
 * fails and names the file. Arguments, when given, replace the directory (files or
 * directories), e.g. to rerun one crash file.
 */
#ifndef XP_FUZZ_REPLAY_H
#define XP_FUZZ_REPLAY_H

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	fprintf(stderr, "  %s (%zu bytes)\n", path, n);
	/* A copy of exactly n bytes, so ASan sees reads past the input. */
	uint8_t *copy = malloc(n ? n : 1);

	if (!copy)
		return -1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

static int replay_dir(const char *dir, int *count)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort), err = 0;

	if (n < 0) {
		fprintf(stderr, "replay: cannot read %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];

		if (ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			if (replay_file(path))
				err = -1;
			else
				(*count)++;
		}
		free(ents[i]);
	}
	free(ents);
	return err;
}

static int replay_path(const char *path, int *count)
{
	struct stat sb;

	if (stat(path, &sb)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(sb.st_mode))
		return replay_dir(path, count);
	(*count)++;
	return replay_file(path);
}

int main(int argc, char **argv)
{
	int count = 0, err = 0;

	if (LLVMFuzzerInitialize(&argc, &argv))
		return 1;
	if (argc < 2)
		err = replay_path(FUZZ_CORPUS, &count);
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count))
			err = -1;
	if (!err && !count) {
		fprintf(stderr, "replay: no inputs: the seed corpus is missing\n");
		return 1;
	}
	fprintf(stderr, "%d inputs replayed%s\n", count, err ? ", some unreadable" : ", all held");
	return err ? 1 : 0;
}

#endif /* XP_FUZZ_REPLAY_H */
