// SPDX-License-Identifier: BSD-3-Clause
/*
 * The benches' sink (tools/bench/router.sh): drops every frame at the receiving veth,
 * which still counts it (rx_packets), so what a forwarded frame costs the sink's side
 * of a veth pair (an skb and the stack, or nothing) is not charged to the router's core
 * it runs on: a sink on a wire costs the router nothing.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xp_sink_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
