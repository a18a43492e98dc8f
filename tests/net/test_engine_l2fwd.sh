#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# l2fwd round trip: A sends K UDP packets (src MAC a0, dst MAC b0) to its own address;
# xpile l2fwd on b0 swaps the MACs and sends them back, so A's kernel takes every one
# as addressed to itself and counts it in Udp NoPorts (a packet whose MACs were not
# swapped would be dropped as for another host before UDP). Then the same with the
# aligned layout and a headroom; with busy-poll; without need_wakeup; with M3's random
# dispersal. Every refill must have been channel-even.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

K=${K:-20000}
eng_pair 198.18.2
# Port-unreachable replies go to .3, a fixed neighbour: no ARP crosses the engine.
ip -n "$A" neigh add 198.18.2.3 lladdr 02:00:00:00:00:03 dev a0

# shellcheck disable=SC2016 # $3 is awk's
noports() { ip netns exec "$A" awk '/^Udp: [0-9]/ {print $3}' /proc/net/snmp; }

round_trip() { # label, engine options...
	local label=$1 before after
	shift
	# Deep rings: a worker starved of CPU for a while by other load must not drop.
	eng_start L2 "$B" --iface b0 --mode l2fwd --cores 1 --ledger-debug --rx-ring 8192 --fill-ring 8192 "$@"
	before=$(noports)
	ip netns exec "$A" timeout 30 "$XPILE" run --iface a0 --mode txonly --cores 0 \
		--count "$K" --rate 20000 --dst-mac "$BMAC" --src-ip 198.18.2.3 \
		--dst-ip 198.18.2.1 --dst-port 9 --quiet >"$XT_TMP/tx.out" 2>&1 ||
		{ rc=$?; cat "$XT_TMP/tx.out"; xt_fail "$label: txonly exited $rc"; }
	back() { [ "$(($(noports) - before))" -ge "$K" ]; }
	xt_wait_for 5 back
	after=$(noports)
	eng_stop "$L2" || { rc=$?; cat "$XT_TMP/L2.err"; xt_fail "$label: l2fwd exited with status $rc"; }
	local rx tx
	rx=$(eng_sum "$XT_TMP/L2.json" rx_packets)
	tx=$(eng_sum "$XT_TMP/L2.json" tx_packets)
	echo "$label: sent $K, l2fwd rx $rx tx $tx, back at A: $((after - before))"
	[ "$((after - before))" = "$K" ] || { grep summary "$XT_TMP/L2.json"; ip netns exec "$B" ethtool -S b0; ip -n "$A" -s link show a0; ip -n "$B" -s link show b0; xt_fail "$label: $((after - before)) of $K came back"; }
	[ "$rx" -ge "$K" ] && [ "$tx" = "$rx" ] || xt_fail "$label: l2fwd rx $rx tx $tx"
	eng_ledger_ok "$XT_TMP/L2.json" || xt_fail "$label: ledger not clean"
	eng_deals_even "$XT_TMP/L2.json" || { grep allocator "$XT_TMP/L2.json" | tail -1; xt_fail "$label: a refill was not channel-even"; }
	eng_no_xdp "$B" b0 || xt_fail "$label: XDP program left attached"
	# --busy-poll probes the queue's NAPI id once traffic flowed (veth here has none).
	local idle
	idle=$(grep -c 'has nothing to poll' "$XT_TMP/L2.err")
	case "$label" in
	*busy-poll*) [ "$idle" -le 1 ] || xt_fail "$label: the NAPI id warning repeated" ;;
	*) [ "$idle" = 0 ] || xt_fail "$label: NAPI id warning without --busy-poll" ;;
	esac
	grep 'has nothing to poll' "$XT_TMP/L2.err" || true
}

round_trip interleaved+busy-poll+m3-seed --busy-poll --m3-seed 7
round_trip interleaved+headroom+no-need-wakeup --headroom 192 --no-need-wakeup --batch 16
round_trip aligned+headroom --layout aligned --headroom 128 --frame-size 4096
echo ok
