/* SPDX-License-Identifier: BSD-3-Clause */
/* The XSKMAP every xpile XDP program redirects into: entry q is the socket of RX queue
 * q, entries after XP_STEER_MAX_QUEUES are named slots. BPF side only. */
#ifndef XPILE_BPF_XSKS_MAP_H
#define XPILE_BPF_XSKS_MAP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "steer_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XP_STEER_XSKMAP_SIZE);
	__type(key, __u32);
	__type(value, __u32);
} xp_xsks SEC(".maps");

#endif
