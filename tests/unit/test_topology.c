// SPDX-License-Identifier: BSD-3-Clause
/*
 * xp_topology_probe() on fake sysfs trees: EDAC (per-rank csrow x channel layers,
 * per-DIMM slot layers, the old csrow files), SMBIOS type 17 raw entries (locator
 * names, rank nibble, empty slots, malformed entries), nothing at all (the 4 x 1
 * fallback and a note saying where it looked), and the note's bounds. The return
 * value says which numbers the machine gave (XP_TOPO_FOUND_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xpile/layout.h"
#include "xt.h"

static char root[64];

static void mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void put_file(const char *rel, const void *data, size_t len)
{
	char path[512], dir[512], *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		mkdirs(dir);
	}
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	XT_REQUIRE(fd >= 0);
	XT_EQ(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void put_text(const char *rel, const char *text)
{
	put_file(rel, text, strlen(text));
}

static void fresh_root(void)
{
	char cmd[128];

	if (root[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		XT_EQ(system(cmd), 0);
	}
	snprintf(root, sizeof(root), "/tmp/xt_topo.XXXXXX");
	XT_REQUIRE(mkdtemp(root));
}

/* An SMBIOS 2.8 type 17 entry: size in MiB (0 = empty), locators, rank nibble. */
static void smbios17(int i, unsigned size, const char *dev, const char *bank, unsigned rank)
{
	unsigned char raw[256] = { 0 };
	size_t n = 0x28, k;
	char rel[128];

	raw[0] = 17;
	raw[1] = 0x28;
	raw[2] = (unsigned char)(0x1100 + i);
	raw[3] = 0x11;
	raw[0x0C] = size & 0xff;
	raw[0x0D] = (size >> 8) & 0xff;
	raw[0x10] = 1;
	raw[0x11] = 2;
	raw[0x1B] = (unsigned char)rank;
	k = strlen(dev) + 1;
	memcpy(raw + n, dev, k);
	n += k;
	k = strlen(bank) + 1;
	memcpy(raw + n, bank, k);
	n += k;
	raw[n++] = 0;
	snprintf(rel, sizeof(rel), "sys/firmware/dmi/entries/17-%d/raw", i);
	put_file(rel, raw, n);
}

static void edac_dimm(int mc, int d, const char *size, const char *loc)
{
	char rel[160];

	snprintf(rel, sizeof(rel), "sys/devices/system/edac/mc/mc%d/dimm%d/size", mc, d);
	put_text(rel, size);
	snprintf(rel, sizeof(rel), "sys/devices/system/edac/mc/mc%d/dimm%d/dimm_location", mc, d);
	put_text(rel, loc);
}

static int probe(struct xp_topology *t, char *note, size_t len)
{
	int err;

	*t = (struct xp_topology){ .interleave = 256, .l1_sets = 7 };
	err = xp_topology_probe(root, t, note, len);
	fprintf(stderr, "  note: %s\n", note);
	/* Only channels and ranks are the probe's. */
	XT_EQ(t->interleave, 256);
	XT_EQ(t->l1_sets, 7);
	return err;
}

static void nothing(void)
{
	struct xp_topology t;
	char note[512];

	fresh_root();
	XT_EQ(probe(&t, note, sizeof(note)), 0);
	XT_EQ(t.channels, 4);
	XT_EQ(t.ranks, 1);
	XT_CHECK(strstr(note, "/sys/devices/system/edac/mc: no memory controllers"));
	XT_CHECK(strstr(note, "/sys/firmware/dmi/entries/17-*: no memory devices"));
	XT_CHECK(strstr(note, "4 channel(s) (default) x 1 rank(s) (default)"));
	XT_CHECK(strstr(note, root)); /* it names the tree it looked in */
	/* An EDAC directory with no controllers says so the same way. */
	mkdirs("sys/devices/system/edac/mc");
	XT_EQ(probe(&t, note, sizeof(note)), 0);
	XT_CHECK(strstr(note, "no memory controllers"));
}

/* 3 channels x 2 ranks, layers csrow x channel (an entry per rank); an empty one. */
static void edac_ranks(void)
{
	struct xp_topology t;
	char note[512];
	int d = 0;

	fresh_root();
	for (int cs = 0; cs < 2; cs++)
		for (int ch = 0; ch < 3; ch++) {
			char loc[64];

			snprintf(loc, sizeof(loc), "csrow %d channel %d \n", cs, ch);
			edac_dimm(0, d++, "8192\n", loc);
		}
	edac_dimm(0, d++, "0\n", "csrow 2 channel 0 \n");
	XT_EQ(probe(&t, note, sizeof(note)), 3);
	XT_EQ(t.channels, 3);
	XT_EQ(t.ranks, 2);
	XT_CHECK(strstr(note, "1 controller(s), 3 channel(s) with memory, 2 rank(s) per channel"));
	XT_CHECK(strstr(note, "3 channel(s) (EDAC) x 2 rank(s) (EDAC)"));
}

/* Per-DIMM EDAC (2 controllers x 3 channels, empty slots) + SMBIOS for the ranks. */
static void edac_slots_smbios_ranks(void)
{
	struct xp_topology t;
	char note[768];
	int d, i = 0;

	fresh_root();
	for (int mc = 0; mc < 2; mc++) {
		d = 0;
		for (int ch = 0; ch < 3; ch++) {
			char loc[64];

			snprintf(loc, sizeof(loc), "channel %d slot 0 ", ch);
			edac_dimm(mc, d++, "16384", loc);
			snprintf(loc, sizeof(loc), "channel %d slot 1 ", ch);
			edac_dimm(mc, d++, "0", loc);
		}
	}
	XT_EQ(probe(&t, note, sizeof(note)), XP_TOPO_FOUND_CHANNELS); /* ranks: default */
	XT_EQ(t.channels, 6);
	XT_EQ(t.ranks, 1);
	XT_CHECK(strstr(note, "2 controller(s), 6 channel(s) with memory, ranks not reported"));
	XT_CHECK(strstr(note, "(EDAC) x 1 rank(s) (default)"));
	for (int s = 0; s < 2; s++)
		for (char ch = 'A'; ch <= 'C'; ch++) {
			char dev[32], bank[32];

			snprintf(dev, sizeof(dev), "CPU%d_DIMM_%c1", s, ch);
			snprintf(bank, sizeof(bank), "P%d_NODE%d", s, s);
			smbios17(i++, 16384, dev, bank, 2);
			snprintf(dev, sizeof(dev), "CPU%d_DIMM_%c2", s, ch);
			smbios17(i++, 0, dev, bank, 0); /* empty slot */
		}
	XT_EQ(probe(&t, note, sizeof(note)), 3);
	XT_EQ(t.channels, 6);
	XT_EQ(t.ranks, 2);
	XT_CHECK(strstr(note, "6 DIMM(s) on 6 named channel(s), 2 rank(s) per channel"));
	XT_CHECK(strstr(note, "6 channel(s) (EDAC) x 2 rank(s) (SMBIOS)"));
}

/* The older EDAC files: csrowR/size_mb and chK_* (2 channels, 2 populated csrows). */
static void edac_csrow_files(void)
{
	struct xp_topology t;
	char note[512];

	fresh_root();
	for (int cs = 0; cs < 3; cs++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "sys/devices/system/edac/mc/mc0/csrow%d/size_mb", cs);
		put_text(rel, cs < 2 ? "4096\n" : "0\n");
		for (int ch = 0; ch < 2; ch++) {
			snprintf(rel, sizeof(rel),
				 "sys/devices/system/edac/mc/mc0/csrow%d/ch%d_dimm_label", cs, ch);
			put_text(rel, "DIMM\n");
			snprintf(rel, sizeof(rel),
				 "sys/devices/system/edac/mc/mc0/csrow%d/ch%d_ce_count", cs, ch);
			put_text(rel, "0\n");
		}
	}
	XT_EQ(probe(&t, note, sizeof(note)), 3);
	XT_EQ(t.channels, 2);
	XT_EQ(t.ranks, 2);
}

/* SMBIOS alone: channel names in several vendors' styles, two DIMMs per channel. */
static void smbios_only(void)
{
	struct xp_topology t;
	char note[512];
	int i = 0;

	fresh_root();
	smbios17(i++, 8192, "P0_Node0_Channel0_Dimm0", "P0 CHANNEL A", 1);
	smbios17(i++, 8192, "P0_Node0_Channel0_Dimm1", "P0 CHANNEL A", 1);
	smbios17(i++, 8192, "P0_Node0_Channel1_Dimm0", "P0 CHANNEL B", 1);
	smbios17(i++, 8192, "P0_Node0_Channel1_Dimm1", "P0 CHANNEL B", 1);
	smbios17(i++, 0x7fff, "P0_Node0_Channel2_Dimm0", "P0 CHANNEL C", 1); /* extended size */
	smbios17(i++, 8192, "P0_Node0_Channel2_Dimm1", "P0 CHANNEL C", 1);
	/* Malformed entries are skipped: wrong type, too short. */
	put_file("sys/firmware/dmi/entries/17-90/raw", "\x10\x28", 2);
	put_file("sys/firmware/dmi/entries/17-91/raw", "\x11\x05\x00\x00\x00", 5);
	put_text("sys/firmware/dmi/entries/16-0/raw", "not a memory device");
	XT_EQ(probe(&t, note, sizeof(note)), 3);
	XT_EQ(t.channels, 3);
	XT_EQ(t.ranks, 2); /* two single-rank DIMMs per channel */
	XT_CHECK(strstr(note, "6 DIMM(s) on 3 named channel(s), 2 rank(s) per channel"));
	XT_CHECK(strstr(note, "3 channel(s) (SMBIOS) x 2 rank(s) (SMBIOS)"));

	/* Device locators alone ("DIMM_A1" style; no bank), rank unknown on one. */
	fresh_root();
	smbios17(0, 4096, "DIMM_A1", "", 2);
	smbios17(1, 4096, "DIMM_B1", "", 2);
	smbios17(2, 4096, "DIMM_C1", "", 0);
	smbios17(3, 4096, "DIMM_D1", "", 2);
	XT_EQ(probe(&t, note, sizeof(note)), XP_TOPO_FOUND_CHANNELS);
	XT_EQ(t.channels, 4);
	XT_EQ(t.ranks, 1);
	XT_CHECK(strstr(note, "4 DIMM(s) on 4 named channel(s), ranks not reported"));
	XT_CHECK(strstr(note, "4 channel(s) (SMBIOS) x 1 rank(s) (default)"));

	/* A VM's locators name no channel: nothing is guessed. */
	fresh_root();
	smbios17(0, 16384, "DIMM 0", "", 0);
	smbios17(1, 16384, "DIMM 1", "", 0);
	XT_EQ(probe(&t, note, sizeof(note)), 0);
	XT_EQ(t.channels, 4);
	XT_EQ(t.ranks, 1);
	XT_CHECK(strstr(note, "2 DIMM(s), 2 with locators that name no channel (e.g. 'DIMM "));
	XT_CHECK(strstr(note, "(default) x 1 rank(s) (default)"));
}

/* Bounds and arguments: a short note is cut and terminated, quotes never get in. */
static void note_bounds(void)
{
	struct xp_topology t;
	char note[16];

	fresh_root();
	smbios17(0, 16384, "DIMM \"0\"", "", 0);
	memset(note, 'x', sizeof(note));
	XT_EQ(xp_topology_probe(root, &t, note, 10), 0);
	XT_EQ(strlen(note), 9);
	XT_EQ(note[10], 'x');
	XT_EQ(xp_topology_probe(root, &t, NULL, 0), 0);
	XT_EQ(t.channels, 4);
	XT_EQ(xp_topology_probe(root, NULL, note, sizeof(note)), -EINVAL);
	{
		char big[512];

		XT_EQ(xp_topology_probe(root, &t, big, sizeof(big)), 0);
		XT_CHECK(!strchr(big, '"'));
		XT_CHECK(strstr(big, "e.g. 'DIMM ?0?'"));
	}
}

/*
 * dmidecode's text, for this machine only and only when the kernel exports neither
 * EDAC nor type 17 entries (a fake dmidecode first on PATH); a failing one is named.
 */
static void dmidecode_text(void)
{
	static const char out[] = "# dmidecode 3.4\n"
				  "Getting SMBIOS data from sysfs.\n"
				  "SMBIOS 3.3.0 present.\n\n"
				  "Handle 0x1100, DMI type 17, 92 bytes\n"
				  "Memory Device\n"
				  "\tSize: 32 GB\n"
				  "\tLocator: DIMM_A1\n"
				  "\tBank Locator: P0_Node0_Channel0_Dimm0\n"
				  "\tRank: 2\n\n"
				  "Handle 0x1101, DMI type 17, 92 bytes\n"
				  "Memory Device\n"
				  "\tSize: No Module Installed\n"
				  "\tLocator: DIMM_A2\n"
				  "\tBank Locator: P0_Node0_Channel0_Dimm1\n"
				  "\tRank: Unknown\n\n"
				  "Handle 0x1102, DMI type 17, 92 bytes\n"
				  "Memory Device\n"
				  "\tSize: 32 GB\n"
				  "\tLocator: DIMM_B1\n"
				  "\tBank Locator: P0_Node0_Channel1_Dimm0\n"
				  "\tRank: 2\n";
	struct xp_topology t;
	char note[768], path[256], *old = getenv("PATH"), *saved = strdup(old ? old : "");

	if (!access("/sys/devices/system/edac/mc", F_OK) ||
	    !access("/sys/firmware/dmi/entries/17-0", F_OK)) {
		fprintf(stderr, "  (this machine exports EDAC or type 17 entries: not run)\n");
		free(saved);
		return;
	}
	fresh_root();
	put_text("out.txt", out);
	snprintf(path, sizeof(path),
		 "#!/bin/sh\n[ \"$*\" = \"-t 17\" ] || exit 9\ncat %s/out.txt\n", root);
	put_text("bin/dmidecode", path);
	snprintf(path, sizeof(path), "%s/bin/dmidecode", root);
	XT_EQ(chmod(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/bin:%s", root, saved);
	setenv("PATH", path, 1);
	t = (struct xp_topology){ 0 };
	XT_EQ(xp_topology_probe(NULL, &t, note, sizeof(note)), 3);
	fprintf(stderr, "  note: %s\n", note);
	XT_EQ(t.channels, 2);
	XT_EQ(t.ranks, 2);
	XT_CHECK(strstr(note,
			"dmidecode -t 17: 2 DIMM(s) on 2 named channel(s), 2 rank(s) per channel"));
	XT_CHECK(strstr(note, "2 channel(s) (dmidecode) x 2 rank(s) (dmidecode)"));
	put_text("bin/dmidecode", "#!/bin/sh\necho '/dev/mem: Permission denied' >&2\nexit 1\n");
	XT_EQ(xp_topology_probe(NULL, &t, note, sizeof(note)), 0);
	fprintf(stderr, "  note: %s\n", note);
	XT_CHECK(strstr(note, "dmidecode -t 17: failed (not root?) -> 4 channel(s) (default)"));
	setenv("PATH", saved, 1);
	free(saved);
}

/* This machine: whatever it has, the call succeeds or falls back, with a note. */
static void this_machine(void)
{
	struct xp_topology t = { 0 };
	char note[512];
	int err = xp_topology_probe(NULL, &t, note, sizeof(note));

	fprintf(stderr, "  this machine: %d: %s\n", err, note);
	XT_CHECK(err >= 0 && err <= 3);
	XT_CHECK(t.channels >= 1 && t.ranks >= 1);
	XT_CHECK(strstr(note, "/sys/devices/system/edac/mc: "));
	XT_CHECK(strstr(note, " -> "));
}

int main(void)
{
	XT_RUN(nothing);
	XT_RUN(edac_ranks);
	XT_RUN(edac_slots_smbios_ranks);
	XT_RUN(edac_csrow_files);
	XT_RUN(smbios_only);
	XT_RUN(note_bounds);
	XT_RUN(dmidecode_text);
	XT_RUN(this_machine);
	if (root[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", root);
	}
	return xt_done();
}
