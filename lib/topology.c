// SPDX-License-Identifier: BSD-3-Clause
/*
 * Best-effort probe of the memory topology (channels, ranks per channel) the
 * interleaved stride is made prime to. Sources, in order: the EDAC memory
 * controllers, the SMBIOS type 17 memory devices the kernel exports, dmidecode.
 * Virtual machines usually have none of them, so the probe always says where it
 * looked and what it found, and the caller falls back to 4 x 1.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xpile/layout.h" /* XP_CACHE_LINE */
#include "xpile/topology.h"
#include "xpile/text.h"

static __u32 sysconf_sets(int size_name, int assoc_name, __u32 fallback)
{
	long size = sysconf(size_name), assoc = sysconf(assoc_name);
	long sets;

	if (size <= 0 || assoc <= 0)
		return fallback;
	sets = size / (assoc * XP_CACHE_LINE);
	/* Set index bits: the count is a power of two on every x86 and arm64 core. */
	if (sets <= 0 || (sets & (sets - 1)))
		return fallback;
	return (__u32)sets;
}

void xp_topology_resolve(struct xp_topology *t)
{
	if (!t->channels)
		t->channels = XP_TOPO_DEFAULT_CHANNELS;
	if (!t->ranks)
		t->ranks = XP_TOPO_DEFAULT_RANKS;
	if (!t->interleave)
		t->interleave = XP_TOPO_DEFAULT_INTERLEAVE;
	if (!t->l1_sets)
		t->l1_sets = sysconf_sets(_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, 64);
	if (!t->l2_sets)
		t->l2_sets = sysconf_sets(_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, 1024);
}

#define CH_MAX 256 /* channels we tell apart; more are counted as found, not told apart */
#define KEY_LEN 64

struct chans {
	char key[CH_MAX][KEY_LEN];
	__u32 ranks[CH_MAX]; /* per channel: ranks seen (sum over its DIMMs) */
	__u32 n;
	bool rank_unknown; /* some populated DIMM did not say */
};

static __u32 chan_add(struct chans *c, const char *key, __u32 ranks)
{
	__u32 i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->key[i], key))
			break;
	if (i == c->n) {
		if (c->n == CH_MAX)
			return 0;
		snprintf(c->key[c->n++], KEY_LEN, "%s", key);
	}
	if (!ranks)
		c->rank_unknown = true;
	c->ranks[i] += ranks;
	return i;
}

static __u32 chan_ranks(const struct chans *c)
{
	__u32 r = 0;

	if (c->rank_unknown)
		return 0;
	for (__u32 i = 0; i < c->n; i++)
		r = c->ranks[i] > r ? c->ranks[i] : r;
	return r;
}

/* snprintf for paths: false (and nothing to read) when the path does not fit. */
__attribute__((format(printf, 3, 4))) static bool pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = 0;
		return false;
	}
	return true;
}

/* Reads a small text file into @buf (NUL-terminated, trailing space cut); length or -errno. */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -errno;
	n = (int)read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	return n;
}

static bool read_u32(const char *path, __u32 *out)
{
	char buf[32];

	return read_text(path, buf, sizeof(buf)) > 0 && !xp_parse_u32(buf, 0, UINT32_MAX, out);
}

/* "csrow 0 channel 1 slot 0": the number after @word, or -1. */
static long loc_field(const char *loc, const char *word)
{
	const char *p = strstr(loc, word);
	__u32 v;
	char num[16];
	size_t k = 0;

	if (!p)
		return -1;
	p += strlen(word);
	while (*p == ' ')
		p++;
	while (isdigit((unsigned char)*p) && k < sizeof(num) - 1)
		num[k++] = *p++;
	num[k] = 0;
	return k && !xp_parse_u32(num, 0, UINT32_MAX, &v) ? (long)v : -1;
}

/*
 * EDAC: mcN/dimmM/{size,dimm_location} (one entry per DIMM, or per rank where the
 * driver's layers are csrow x channel), or the older mcN/csrowR/{size_mb,chK_*}
 * (a csrow is a chip select: one rank across the channels).
 */
static void probe_edac(const char *root, struct chans *c, __u32 *mcs, bool *ranks_from_csrow)
{
	char dir[512], path[1024], loc[128], key[KEY_LEN];
	DIR *d, *m;
	struct dirent *e, *f;

	pathf(dir, sizeof(dir), "%s/sys/devices/system/edac/mc", root);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		__u32 csrows = 0, size, mc;
		__u32 chmask_lo = 0, nch = 0;
		bool dimms = false;

		if (strncmp(e->d_name, "mc", 2) || !isdigit((unsigned char)e->d_name[2]) ||
		    xp_parse_u32(e->d_name + 2, 0, UINT32_MAX, &mc))
			continue;
		pathf(path, sizeof(path), "%s/%s", dir, e->d_name);
		m = opendir(path);
		if (!m)
			continue;
		(*mcs)++;
		while ((f = readdir(m))) {
			if (!strncmp(f->d_name, "dimm", 4) || !strncmp(f->d_name, "rank", 4)) {
				long ch, cs, br;

				pathf(path, sizeof(path), "%s/%s/%s/size", dir, e->d_name,
				      f->d_name);
				if (!read_u32(path, &size) || !size)
					continue;
				pathf(path, sizeof(path), "%s/%s/%s/dimm_location", dir, e->d_name,
				      f->d_name);
				if (read_text(path, loc, sizeof(loc)) <= 0)
					continue;
				ch = loc_field(loc, "channel");
				if (ch < 0)
					continue;
				dimms = true;
				cs = loc_field(loc, "csrow");
				br = loc_field(loc, "branch");
				snprintf(key, sizeof(key), "mc%u.%ld.%ld", mc, br, ch);
				/* csrow layers: an entry per rank; slot layers: ranks unknown. */
				chan_add(c, key, cs >= 0 ? 1 : 0);
				*ranks_from_csrow = cs >= 0;
			} else if (!strncmp(f->d_name, "csrow", 5)) {
				DIR *r;
				struct dirent *g;

				pathf(path, sizeof(path), "%s/%s/%s/size_mb", dir, e->d_name,
				      f->d_name);
				if (!read_u32(path, &size) || !size)
					continue;
				csrows++;
				pathf(path, sizeof(path), "%s/%s/%s", dir, e->d_name, f->d_name);
				r = opendir(path);
				if (!r)
					continue;
				while ((g = readdir(r))) {
					__u32 k;
					char num[8];
					size_t j = 0;

					if (strncmp(g->d_name, "ch", 2))
						continue;
					while (isdigit((unsigned char)g->d_name[2 + j]) &&
					       j < sizeof(num) - 1) {
						num[j] = g->d_name[2 + j];
						j++;
					}
					num[j] = 0;
					if (!j || g->d_name[2 + j] != '_' ||
					    xp_parse_u32(num, 0, 31, &k))
						continue;
					if (!(chmask_lo & (1u << k))) {
						chmask_lo |= 1u << k;
						nch++;
					}
				}
				closedir(r);
			}
		}
		closedir(m);
		if (!dimms && csrows && nch) {
			for (__u32 k = 0; k < 32; k++) {
				if (!(chmask_lo & (1u << k)))
					continue;
				snprintf(key, sizeof(key), "mc%u.csrow.%u", mc, k);
				chan_add(c, key, csrows);
			}
			*ranks_from_csrow = true;
		}
	}
	closedir(d);
}

/*
 * Channel name from SMBIOS locator strings: the text up to the token after
 * "channel" ("P0_Node0_Channel0_Dimm0" -> "P0_Node0_Channel0", "P0 CHANNEL A"), or
 * up to the letter of "DIMM_A1" / "CPU1_DIMM_B2" (letter = channel, digit = slot).
 */
static bool locator_channel(const char *s, char *key, size_t len)
{
	const char *p = strcasestr(s, "channel");

	if (p) {
		p += 7;
		while (*p == ' ' || *p == '_' || *p == '-')
			p++;
		if (!isalnum((unsigned char)*p))
			return false;
		while (isalnum((unsigned char)*p))
			p++;
		snprintf(key, len, "%.*s", (int)(p - s), s);
		return true;
	}
	for (p = s; (p = strcasestr(p, "dimm")); p += 4) {
		const char *q = p + 4;

		while (*q == ' ' || *q == '_' || *q == '-')
			q++;
		if (isalpha((unsigned char)q[0]) && isdigit((unsigned char)q[1])) {
			snprintf(key, len, "%.*s", (int)(q + 1 - s), s);
			return true;
		}
	}
	return false;
}

/* The @idx-th (1-based) string of an SMBIOS structure, or "". */
static const char *dmi_string(const unsigned char *raw, int n, int idx)
{
	int off = raw[1];

	if (!idx)
		return "";
	while (off < n && --idx) {
		off += (int)strnlen((const char *)raw + off, (size_t)(n - off)) + 1;
		if (off < n && !raw[off])
			return "";
	}
	if (off >= n || strnlen((const char *)raw + off, (size_t)(n - off)) == (size_t)(n - off))
		return "";
	return (const char *)raw + off;
}

struct dimm {
	char bank[64], dev[64];
	__u32 ranks; /* 0 unknown */
};

static void dimm_add(struct chans *c, const struct dimm *d, __u32 *unnamed, char *example,
		     size_t exlen)
{
	char key[KEY_LEN];

	if (locator_channel(d->bank, key, sizeof(key)) ||
	    locator_channel(d->dev, key, sizeof(key))) {
		chan_add(c, key, d->ranks);
		return;
	}
	if (!(*unnamed)++)
		snprintf(example, exlen, "%s%s%s", d->bank, *d->bank ? "/" : "", d->dev);
}

/* SMBIOS type 17 as the kernel exports it: entries/17-N/raw. */
static __u32 probe_smbios(const char *root, struct chans *c, __u32 *unnamed, char *ex, size_t exlen)
{
	char dir[512], path[1024];
	unsigned char raw[4096];
	struct dirent *e;
	__u32 populated = 0;
	DIR *d;

	pathf(dir, sizeof(dir), "%s/sys/firmware/dmi/entries", root);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct dimm dm = { .ranks = 0 };
		int fd, n;
		__u32 size;

		if (strncmp(e->d_name, "17-", 3))
			continue;
		pathf(path, sizeof(path), "%s/%s/raw", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = (int)read(fd, raw, sizeof(raw));
		close(fd);
		/* Type 17 from SMBIOS 2.1 on is at least 0x15 bytes. */
		if (n < 0x15 || raw[0] != 17 || raw[1] < 0x15 || raw[1] > n)
			continue;
		size = raw[0x0C] | raw[0x0D] << 8;
		if (!size)
			continue; /* empty slot */
		populated++;
		snprintf(dm.dev, sizeof(dm.dev), "%s", dmi_string(raw, n, raw[0x10]));
		snprintf(dm.bank, sizeof(dm.bank), "%s", dmi_string(raw, n, raw[0x11]));
		if (raw[1] > 0x1B)
			dm.ranks = raw[0x1B] & 0x0F; /* SMBIOS 2.6+: attributes, rank in bits 3:0 */
		dimm_add(c, &dm, unnamed, ex, exlen);
	}
	closedir(d);
	return populated;
}

/* `dmidecode -t 17` of this machine: the same fields, as text. */
static __u32 probe_dmidecode(struct chans *c, __u32 *unnamed, char *ex, size_t exlen, bool *ran)
{
	struct xp_lines lr;
	struct dimm dm = { .ranks = 0 };
	bool in = false, filled = false;
	__u32 populated = 0;
	FILE *f;
	char *line;

	f = popen("dmidecode -t 17 2>/dev/null", "r");
	if (!f)
		return 0;
	if (xp_lines_init(&lr, f, 4096)) {
		pclose(f);
		return 0;
	}
	for (;;) {
		int r = xp_lines_next(&lr, &line);
		char *v;

		if (r <= 0 || !strncmp(line, "Memory Device", 13)) {
			if (in && filled) {
				populated++;
				dimm_add(c, &dm, unnamed, ex, exlen);
			}
			if (r <= 0)
				break;
			in = true;
			filled = false;
			dm = (struct dimm){ .ranks = 0 };
			continue;
		}
		while (*line == '\t' || *line == ' ')
			line++;
		v = strchr(line, ':');
		if (!in || !v)
			continue;
		*v++ = 0;
		while (*v == ' ')
			v++;
		if (!strcmp(line, "Size"))
			filled = strncmp(v, "No Module", 9) && strncmp(v, "0", 1);
		else if (!strcmp(line, "Locator"))
			snprintf(dm.dev, sizeof(dm.dev), "%s", v);
		else if (!strcmp(line, "Bank Locator"))
			snprintf(dm.bank, sizeof(dm.bank), "%s", v);
		else if (!strcmp(line, "Rank") && xp_parse_u32(v, 1, 15, &dm.ranks))
			dm.ranks = 0;
	}
	xp_lines_free(&lr);
	*ran = pclose(f) == 0;
	return populated;
}

static bool have_dmidecode(void)
{
	const char *path = getenv("PATH");
	char buf[512];

	if (!path)
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		size_t k = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/dmidecode", (int)k, path);
		if (k && !access(buf, X_OK))
			return true;
		path += k + (path[k] == ':');
	}
	return false;
}

/* Printable ASCII only, no quotes or backslashes: the note goes into JSON as it is. */
static void note_clean(char *s)
{
	for (; *s; s++)
		if (!isprint((unsigned char)*s) || *s == '"' || *s == '\\')
			*s = '?';
}

#define NOTE(...)                                                                            \
	do {                                                                                 \
		if (note && note_len > used)                                                 \
			used += (size_t)snprintf(note + used, note_len - used, __VA_ARGS__); \
		if (used > note_len)                                                         \
			used = note_len;                                                     \
	} while (0)

int xp_topology_probe(const char *root, struct xp_topology *t, char *note, size_t note_len)
{
	bool self = !root || !*root || !strcmp(root, "/"), ran = false, csr = false;
	struct chans *c;
	__u32 mcs = 0, dimms, unnamed = 0, ch = 0, rk = 0;
	char ex[130] = "";
	const char *r = self ? "" : root, *from_ch = NULL, *from_rk = NULL, *src = "SMBIOS";
	size_t used = 0;

	if (!t)
		return -EINVAL;
	if (note && note_len)
		note[0] = 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	probe_edac(r, c, &mcs, &csr);
	NOTE("%s/sys/devices/system/edac/mc: ", r);
	if (!mcs) {
		NOTE("no memory controllers");
	} else {
		NOTE("%u controller(s), %u channel(s) with memory", mcs, c->n);
		if (c->n) {
			ch = c->n;
			from_ch = "EDAC";
			rk = chan_ranks(c);
			if (rk && csr) {
				from_rk = "EDAC";
				NOTE(", %u rank(s) per channel", rk);
			} else {
				rk = 0;
				NOTE(", ranks not reported");
			}
		}
	}
	if (!ch || !rk) {
		memset(c, 0, sizeof(*c));
		dimms = probe_smbios(r, c, &unnamed, ex, sizeof(ex));
		NOTE("; %s/sys/firmware/dmi/entries/17-*: ", r);
		if (!dimms && self && have_dmidecode()) {
			NOTE("no memory devices; dmidecode -t 17: ");
			dimms = probe_dmidecode(c, &unnamed, ex, sizeof(ex), &ran);
			src = "dmidecode";
			if (!dimms)
				NOTE(ran ? "no memory devices" : "failed (not root?)");
		} else if (!dimms && self) {
			NOTE("no memory devices; dmidecode: not installed");
		}
		if (dimms) {
			NOTE("%u DIMM(s)", dimms);
			if (c->n)
				NOTE(" on %u named channel(s)", c->n);
			if (unnamed)
				NOTE(", %u with locators that name no channel (e.g. '%s')", unnamed,
				     ex);
			rk = rk ? rk : chan_ranks(c);
			if (c->n && !unnamed && !ch) {
				ch = c->n;
				from_ch = src;
			}
			if (rk && !from_rk && c->n && !unnamed) {
				from_rk = src;
				NOTE(", %u rank(s) per channel", rk);
			} else if (!from_rk) {
				rk = 0;
				NOTE(", ranks not reported");
			}
		} else if (!self) {
			NOTE("no memory devices");
		}
	}
	free(c);
	t->channels = ch ? ch : XP_TOPO_DEFAULT_CHANNELS;
	t->ranks = rk ? rk : XP_TOPO_DEFAULT_RANKS;
	NOTE(" -> %u channel(s) (%s) x %u rank(s) (%s)", t->channels, from_ch ? from_ch : "default",
	     t->ranks, from_rk ? from_rk : "default");
	if (note && note_len)
		note_clean(note);
	return (from_ch ? XP_TOPO_FOUND_CHANNELS : 0) | (from_rk ? XP_TOPO_FOUND_RANKS : 0);
}
