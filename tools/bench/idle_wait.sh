#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# CPU per packet of an rxdrop worker serving K sockets on one core, its idle sleep on
# io_uring (multishot poll) against poll(), same run, interleaved (issue 11, section 3).
#
#   tools/bench/idle_wait.sh [K...]     (default: 1 4 8)
#   IW_RUNS 3, IW_SECONDS 4, IW_RATE 200000 (pps over all K), IW_GEN_BATCH 1 (frames per
#   burst: 1 is the prototypes' load, one frame on one socket at a time; txonly's own
#   default of 64 gives the receiver one wake-up per 64 frames), IW_GEN_CORE 0,
#   IW_DUT_CORE 1
#
# Topology: [gen] g0..gK-1 <-veth-> d0..dK-1 [dut], one xpile txonly sending on all K at
# IW_RATE from the gen core, one xpile rxdrop on the dut core. Packets are the kernel's
# XDP redirects into the sockets (veth rx_queue_0_xdp_redirect), CPU the receiver's
# run time (/proc/PID/task/*/schedstat), both over the same window. Prints per run
#   idle_wait k=K wait=W pps=P cpu_ns_per_pkt=C
# and per K the medians and ratio uring/poll.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh

runs=${IW_RUNS:-3}
win=${IW_SECONDS:-4}
rate=${IW_RATE:-200000}
gbatch=${IW_GEN_BATCH:-1}
gcore=${IW_GEN_CORE:-0}
dcore=${IW_DUT_CORE:-1}
xpile=${IW_XPILE:-$XT_BUILD/xpile}
ks=("$@")
[ ${#ks[@]} -gt 0 ] || ks=(1 4 8)
[ "$(id -u)" = 0 ] || { echo "idle_wait.sh: needs root" >&2; exit 2; }
[ -x "$xpile" ] || { echo "idle_wait.sh: $xpile missing: run make" >&2; exit 2; }
tmp=$(mktemp -d /tmp/xpile-iw.XXXXXX)
xt_on_exit "rm -rf '$tmp'"

redirects() { # ns k: sum of the XDP redirects over d0..dK-1
	local i s=0 v
	for ((i = 0; i < $2; i++)); do
		v=$(ip netns exec "$1" ethtool -S "d$i" | awk '/rx_queue_0_xdp_redirect:/ {print $2}')
		s=$((s + ${v:-0}))
	done
	echo "$s"
}
# CPU ns of every thread of PID: the scheduler's run time (precise), not utime+stime
# (sampled at ticks, which miss most of a wake-up that lasts a few microseconds).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

for k in "${ks[@]}"; do
	gns=$(xt_ns "iwg$k") dns=$(xt_ns "iwd$k")
	args_g=() args_d=()
	for ((i = 0; i < k; i++)); do
		xt_veth "$gns" "g$i" "$dns" "d$i"
		ip netns exec "$gns" sysctl -qw "net.ipv6.conf.g$i.disable_ipv6=1"
		ip netns exec "$dns" sysctl -qw "net.ipv6.conf.d$i.disable_ipv6=1"
		args_g+=(--iface "g$i")
		args_d+=(--iface "d$i")
	done
	ip netns exec "$gns" "$xpile" run "${args_g[@]}" --mode txonly --cores "$gcore" \
		--rate "$rate" --batch "$gbatch" --quiet >"$tmp/gen.out" 2>&1 &
	gpid=$!
	XT_PIDS+=("$gpid")
	sleep 1
	for ((r = 0; r < runs; r++)); do
		for w in poll uring; do
			ip netns exec "$dns" "$xpile" run "${args_d[@]}" --mode rxdrop --cores "$dcore" \
				--idle-wait "$w" --quiet >"$tmp/dut.out" 2>&1 &
			dpid=$!
			XT_PIDS+=("$dpid")
			xt_wait_for 10 grep -q 'ready' "$tmp/dut.out" || { cat "$tmp/dut.out" >&2; exit 1; }
			sleep 1
			p0=$(redirects "$dns" "$k") c0=$(cpu_ns "$dpid")
			sleep "$win"
			p1=$(redirects "$dns" "$k") c1=$(cpu_ns "$dpid")
			kill -INT "$dpid"
			wait "$dpid"
			pk=$((p1 - p0))
			ns=$(awk -v c=$((c1 - c0)) -v p="$pk" 'BEGIN {printf "%.0f", p ? c / p : 0}')
			echo "idle_wait k=$k wait=$w pps=$((pk / win)) cpu_ns_per_pkt=$ns"
			echo "$ns" >>"$tmp/k$k.$w"
		done
	done
	kill -INT "$gpid"
	wait "$gpid"
	mp=$(median <"$tmp/k$k.poll") mu=$(median <"$tmp/k$k.uring")
	echo "idle_wait median k=$k runs=$runs poll_ns=$mp uring_ns=$mu ratio=$(awk -v a="$mu" -v b="$mp" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
	for ((i = 0; i < k; i++)); do ip -n "$gns" link del "g$i" 2>/dev/null; done
done
