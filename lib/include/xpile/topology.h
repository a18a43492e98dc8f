/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The machine's memory topology that a UMEM layout's stride is made prime to: channels,
 * ranks, interleave and cache sets, resolved to defaults or probed from EDAC, SMBIOS or
 * dmidecode (lib/topology.c).
 */
#ifndef XPILE_TOPOLOGY_H
#define XPILE_TOPOLOGY_H

#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Like DPDK without -n: 4 channels, 1 rank, channels interleaved every 64 bytes. */
#define XP_TOPO_DEFAULT_CHANNELS 4
#define XP_TOPO_DEFAULT_RANKS 1
#define XP_TOPO_DEFAULT_INTERLEAVE 64

/* Memory topology; zero fields take the documented defaults. */
struct xp_topology {
	__u32 channels; /* memory channels (default 4) */
	__u32 ranks; /* ranks per channel (default 1) */
	__u32 interleave; /* channel interleave granularity in bytes (default 64) */
	__u32 l1_sets; /* L1D sets (default: sysconf, else 64) */
	__u32 l2_sets; /* L2 sets (default: sysconf, else 1024) */
};

/* Resolves zero topology fields to the defaults (sysconf for cache sets). */
XP_API void xp_topology_resolve(struct xp_topology *t);

/*
 * Best-effort probe of this machine's memory channels and ranks per channel, the
 * numbers the interleaved stride is made prime to. @root is the file system root
 * to look under (NULL or "/": this machine; tests pass a fake tree). Looks, in order:
 * - <root>/sys/devices/system/edac/mc/mc* (EDAC): dimm*|rank* entries with memory
 *   (size > 0), channels from dimm_location ("channel N", per controller and
 *   branch), ranks where the driver's layers are csrow x channel (an entry per
 *   rank); or the older csrow* entries (a csrow is one rank, chK_* its channels);
 * - <root>/sys/firmware/dmi/entries/17-* /raw (SMBIOS type 17), if EDAC left channels
 *   or ranks unknown: populated devices (size != 0), the channel from the Bank or
 *   Device Locator string ("...Channel0...", "P0 CHANNEL A", "DIMM_A1" -> A), ranks
 *   from the attributes byte at 0x1B (bits 3:0; SMBIOS 2.6+), summed per channel;
 * - `dmidecode -t 17`, the same fields as text, only for this machine and only when
 *   the kernel exports no type 17 entries.
 * Sets t->channels and t->ranks (nothing else) to what it found, 4 and 1 (the
 * defaults) for what it did not, and writes one printable line to @note (if not
 * NULL; truncated to @note_len) naming each place, what it found there and the
 * result, e.g. "/sys/devices/system/edac/mc: no memory controllers; ... -> 4
 * channel(s) (default) x 1 rank(s) (default)". Returns which numbers came from the
 * machine (XP_TOPO_FOUND_*; 0: both are the defaults), or -EINVAL (NULL @t), -ENOMEM.
 */
#define XP_TOPO_FOUND_CHANNELS (1u << 0)
#define XP_TOPO_FOUND_RANKS (1u << 1)
XP_API int xp_topology_probe(const char *root, struct xp_topology *t, char *note, size_t note_len);

/* Channel (0..channels*ranks-1) of UMEM offset @addr at interleave @gran bytes. */
static inline __u32 xp_topo_channel(const struct xp_topology *t, __u64 addr, __u32 gran)
{
	return (__u32)((addr / gran) % ((__u64)t->channels * t->ranks));
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_TOPOLOGY_H */
