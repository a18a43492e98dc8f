/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcapng blocks (draft-ietf-opsawg-pcapng): the section header, one interface
 * description per capture interface (name, snaplen, nanosecond timestamps) and the
 * enhanced packet block, in the host's byte order (the section header's byte-order
 * magic tells readers which). The packet block's header and trailer are inline: the
 * capture hot path writes them straight into its chunk.
 */
#ifndef XPILE_PCAPNG_H
#define XPILE_PCAPNG_H

#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#define PCAPNG_EPB_DIR_IN 1u /* epb_flags bits 0-1: inbound */
#define PCAPNG_EPB_DIR_OUT 2u /* outbound */
/* Header (28) + epb_flags option (8) + opt_endofopt (4) + trailing length (4). */
#define PCAPNG_EPB_OVERHEAD 44u
#define PCAPNG_SNAPLEN_MAX 65535u

static inline __u32 pcapng_pad4(__u32 n)
{
	return (n + 3) & ~3u;
}

/* Bytes an enhanced packet block of @caplen captured bytes takes. */
static inline __u32 pcapng_epb_size(__u32 caplen)
{
	return PCAPNG_EPB_OVERHEAD + pcapng_pad4(caplen);
}

/* Writes the block's header at @p for @caplen bytes of a @origlen-byte packet seen at
 * @ts_ns (nanoseconds since the epoch, if_tsresol 9); the caller copies the data to
 * p + 28 and then calls pcapng_epb_finish(). */
static inline void pcapng_epb_start(void *p, __u32 ifid, __u64 ts_ns, __u32 caplen, __u32 origlen)
{
	__u32 h[7] = {
		6,	pcapng_epb_size(caplen), ifid, (__u32)(ts_ns >> 32), (__u32)ts_ns, caplen,
		origlen
	};

	memcpy(p, h, sizeof(h));
}

static inline void pcapng_epb_finish(void *p, __u32 caplen, __u32 flags)
{
	__u8 *t = (__u8 *)p + 28 + caplen;
	__u32 pad = pcapng_pad4(caplen) - caplen;
	__u32 tail[4] = { 2 | (4u << 16), flags, 0, pcapng_epb_size(caplen) };

	memset(t, 0, 4); /* at most 3 bytes of padding; the option overwrites the rest */
	memcpy(t + pad, tail, sizeof(tail));
}

/* Each writes one block to @buf (@len bytes) and returns its size, or 0 when it does not
 * fit. @app: the shb_userappl option (NULL: none). */
size_t pcapng_shb_put(void *buf, size_t len, const char *app);
/* Ethernet (LINKTYPE_ETHERNET), if_name @name, if_tsresol 9. */
size_t pcapng_idb_put(void *buf, size_t len, const char *name, __u32 snaplen);

#endif /* XPILE_PCAPNG_H */
