/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hugepage pool for tests that need it a given size: grow it, or drain it to make a
 * shortage when the machine (or an earlier job) left pages reserved, and always put the
 * sysctl back at exit. Root only; a case that cannot get the pool it needs says why.
 */
#ifndef XT_HUGEPAGES_H
#define XT_HUGEPAGES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define XT_NR_HP "/proc/sys/vm/nr_hugepages"

static long xt_hp_saved = -1;

static inline long xt_hp_read(void)
{
	FILE *f = fopen(XT_NR_HP, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static inline long xt_hp_meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128], fmt[64];
	long v = 0;

	snprintf(fmt, sizeof(fmt), "%s: %%ld", key);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static inline int xt_hp_write(long v)
{
	FILE *f = fopen(XT_NR_HP, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

static inline void xt_hp_restore(void)
{
	if (xt_hp_saved >= 0)
		xt_hp_write(xt_hp_saved);
}

/* Remember the pool as the test found it, once, and put it back at exit. */
static inline int xt_hp_save(void)
{
	if (xt_hp_saved >= 0)
		return 0;
	xt_hp_saved = xt_hp_read();
	if (xt_hp_saved < 0)
		return -EIO;
	atexit(xt_hp_restore);
	return 0;
}

/* Give the free pages back to the kernel (pages in use stay, as surplus) so that a
 * shortage can be made; returns the pages still free (reserved ones cannot go). */
static inline long xt_hp_drain(void)
{
	if (xt_hp_save() < 0 || xt_hp_write(0) < 0)
		return -1;
	return xt_hp_meminfo("HugePages_Free");
}

#endif
