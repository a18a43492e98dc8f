// SPDX-License-Identifier: BSD-3-Clause
/*
 * The baseline xpile-bench measures the steer program against: nothing but the
 * redirect of every packet to the socket of its RX queue.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "steer_abi.h"
#include "xsks_map.h"

SEC("xdp")
int xp_redirect_min(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xp_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
