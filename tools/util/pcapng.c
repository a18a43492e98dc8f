// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pcapng blocks written once per file: the section header and one interface
 * description per port/queue. Packet blocks are inline in pcapng.h.
 */
#include <string.h>

#include "pcapng.h"

#define SHB_TYPE 0x0A0D0D0Au
#define IDB_TYPE 1u
#define BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define LINKTYPE_ETHERNET 1u
#define OPT_ENDOFOPT 0u
#define OPT_SHB_USERAPPL 4u
#define OPT_IF_NAME 2u
#define OPT_IF_TSRESOL 9u

struct blk {
	__u8 *p;
	size_t len, off;
	int full;
};

static void put(struct blk *b, const void *v, size_t n)
{
	if (b->off + n > b->len) {
		b->full = 1;
		return;
	}
	if (n)
		memcpy(b->p + b->off, v, n);
	b->off += n;
}

static void put32(struct blk *b, __u32 v)
{
	put(b, &v, 4);
}

static void put_opt(struct blk *b, __u16 code, const void *v, __u16 n)
{
	static const __u8 zero[4];
	__u16 h[2] = { code, n };

	put(b, h, sizeof(h));
	put(b, v, n);
	put(b, zero, pcapng_pad4(n) - n);
}

/* Closes the block started at @start: the total length at both ends. */
static size_t finish(struct blk *b, size_t start)
{
	__u32 total;

	put_opt(b, OPT_ENDOFOPT, NULL, 0);
	total = (__u32)(b->off - start + 4);
	put32(b, total);
	if (b->full)
		return 0;
	memcpy(b->p + start + 4, &total, 4);
	return total;
}

size_t pcapng_shb_put(void *buf, size_t len, const char *app)
{
	struct blk b = { .p = buf, .len = len };
	__u16 ver[2] = { 1, 0 };
	__u64 section_len = ~0ull; /* unknown: the file is written as a stream */

	put32(&b, SHB_TYPE);
	put32(&b, 0);
	put32(&b, BYTE_ORDER_MAGIC);
	put(&b, ver, sizeof(ver));
	put(&b, &section_len, sizeof(section_len));
	if (app)
		put_opt(&b, OPT_SHB_USERAPPL, app, (__u16)strnlen(app, 256));
	return finish(&b, 0);
}

size_t pcapng_idb_put(void *buf, size_t len, const char *name, __u32 snaplen)
{
	struct blk b = { .p = buf, .len = len };
	__u16 link[2] = { LINKTYPE_ETHERNET, 0 };
	__u8 tsresol = 9; /* 10^-9 s */

	put32(&b, IDB_TYPE);
	put32(&b, 0);
	put(&b, link, sizeof(link));
	put32(&b, snaplen);
	put_opt(&b, OPT_IF_NAME, name, (__u16)strnlen(name, 64));
	put_opt(&b, OPT_IF_TSRESOL, &tsresol, 1);
	return finish(&b, 0);
}
