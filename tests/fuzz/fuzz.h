/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c) and their replays.
 *
 * A target is one LLVMFuzzerTestOneInput() that feeds its input to the real code and
 * checks properties; a broken property aborts with one line naming it, which libFuzzer
 * reports as a crash and saves the input. The same file, built without libFuzzer and
 * with tests/fuzz/replay.h, runs every file of its seed corpus (tests/unit/test_fuzz_*.c),
 * so the regular suite replays each corpus and every crash once found.
 */
#ifndef XP_FUZZ_H
#define XP_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Called before abort(): a target holding kernel state (pins) releases it here. */
static void (*xp_fuzz_on_fail)(void) __attribute__((unused));

#define FUZZ_CHECK(cond, ...)                                                                   \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "FUZZ PROPERTY BROKEN %s:%d: %s: ", __FILE__, __LINE__, \
				#cond);                                                         \
			fprintf(stderr, __VA_ARGS__);                                           \
			fprintf(stderr, "\n");                                                  \
			if (xp_fuzz_on_fail)                                                    \
				xp_fuzz_on_fail();                                              \
			abort();                                                                \
		}                                                                               \
	} while (0)

/*
 * Open findings: a broken property that has been reported and not yet fixed is
 * tolerated by its tag, so fuzzing can look past it and the corpus file that shows it
 * can already be committed. The tags are the first words of the lines of
 * tests/fuzz/known (one line per finding: tag, owner, what), or $FUZZ_KNOWN
 * (comma-separated; set it empty to be strict about everything). Fixing one means
 * deleting its line: its corpus files then fail until the fix holds.
 */
static inline const char *fuzz_known_list(void)
{
	static char list[4096];
	static bool loaded;
	const char *env = getenv("FUZZ_KNOWN");
	char line[512];
	FILE *f;

	if (env)
		return env;
	if (loaded)
		return list;
	loaded = true;
	f = fopen("tests/fuzz/known", "r");
	if (!f)
		return list;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, " \t\r\n#"), have = strlen(list);

		if (n && line[0] != '#' && have + n + 2 < sizeof(list))
			snprintf(list + have, sizeof(list) - have, "%s%.*s", have ? "," : "",
				 (int)n, line);
	}
	fclose(f);
	return list;
}

static inline bool fuzz_known(const char *tag)
{
	const char *k = fuzz_known_list(), *p;
	size_t n = strlen(tag);

	for (p = k; (p = strstr(p, tag)); p += n)
		if ((p == k || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

#define FUZZ_CHECK_KNOWN(tag, cond, ...)                                                                                   \
	do {                                                                                                               \
		static bool seen_;                                                                                         \
		const char *tag_ = (tag);                                                                                  \
		if (!(cond) && fuzz_known(tag_)) {                                                                         \
			if (!seen_)                                                                                        \
				fprintf(stderr, "fuzz: known finding [%s] seen (tolerated)\n",                             \
					tag_);                                                                             \
			seen_ = true;                                                                                      \
		} else {                                                                                                   \
			if (!(cond))                                                                                       \
				fprintf(stderr,                                                                            \
					"fuzz: finding [%s] (FUZZ_KNOWN=%s or a line in tests/fuzz/known tolerates it)\n", \
					tag_, tag_);                                                                       \
			FUZZ_CHECK(cond, __VA_ARGS__);                                                                     \
		}                                                                                                          \
	} while (0)

/* A bounded reader over the fuzz input: takes bytes, zeros once it runs out. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	return (uint16_t)(fuzz_u8(in) | fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	return fuzz_u16(in) | (uint32_t)fuzz_u16(in) << 16;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	return fuzz_u32(in) | (uint64_t)fuzz_u32(in) << 32;
}

#endif /* XP_FUZZ_H */
