// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench gen's traffic source: run by BPF_PROG_TEST_RUN in live-frames mode on
 * the sending veth, it sends every frame straight back out of that device, whose
 * ndo_xdp_xmit hands it to the peer as an xdp_frame: no socket, no skb.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xp_gen_tx(struct xdp_md *ctx)
{
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
