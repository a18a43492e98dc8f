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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Called before abort(): a target holding kernel state (pins) releases it here. */
static void (*xp_fuzz_on_fail)(void);

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
