#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# CPU per packet of an rxdrop worker serving K sockets on one core, its idle sleep on
# io_uring (one-shot polls, armed at each sleep) against poll(), same run, interleaved (issue 11, section 3).
#
#   tools/bench/idle_wait.sh [K...]     (default: 1 4 8)
#   IW_RUNS 3, IW_SECONDS 4, IW_RATE 200000 (pps over all K), IW_GEN_BATCH 1 (frames per
#   burst: 1 is the prototypes' load, one frame on one socket at a time; txonly's own
#   default of 64 gives the receiver one wake-up per 64 frames), IW_GEN_CORE 0,
#   IW_DUT_CORE 1, IW_STRACE 0 (1: count the receiver's syscalls per packet over each
#   window with strace -c -f instead; strace slows it, so the CPU figures of such runs
#   are not comparable), IW_NAPI softirq (threaded: the receiving veths' NAPI runs in
#   kernel threads pinned to the dut core, as a NIC queue's interrupt on its worker's
#   core: the worker is woken from its own core, not by an interrupt from the other)
#
# Topology: [gen] g0..gK-1 <-veth-> d0..dK-1 [dut], one xpile txonly sending on all K at
# IW_RATE from the gen core, one xpile rxdrop on the dut core. Packets are the kernel's
# XDP redirects into the sockets (veth rx_queue_0_xdp_redirect), CPU the receiver's
# run time (/proc/PID/task/*/schedstat), both over the same window. Prints per run
#   idle_wait k=K wait=W pps=P cpu_ns_per_pkt=C worker_ns_per_pkt=WC sleeps_per_pkt=S preempted_per_pkt=I
# (C: every thread of the receiver; WC: its worker alone) and per K the medians and
# ratios uring/poll of both.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh

runs=${IW_RUNS:-3}
win=${IW_SECONDS:-4}
rate=${IW_RATE:-200000}
gbatch=${IW_GEN_BATCH:-1}
gcore=${IW_GEN_CORE:-0}
dcore=${IW_DUT_CORE:-1}
trace=${IW_STRACE:-0}
napi=${IW_NAPI:-softirq}
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
# ... of the worker alone: the threads pinned to the dut core (the main thread, which
# samples stats and watches the ports, is not), so the wait's own effect is not
# diluted by the engine's per-second work.
wcpu_ns() {
	local t s=0 v
	for t in /proc/"$1"/task/*; do
		grep -qx "Cpus_allowed_list:[[:space:]]*$dcore" "$t/status" 2>/dev/null || continue
		v=$(cut -d' ' -f1 "$t/schedstat" 2>/dev/null)
		s=$((s + ${v:-0}))
	done
	echo "$s"
}
# Context switches of every thread of PID: voluntary (each sleep that ends in a wake-up
# is one) and preemptions.
ctx_sw() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}'; }
ctx_inv() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^nonvoluntary_ctxt_switches/ {s += $2} END {print s + 0}'; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

for k in "${ks[@]}"; do
	gns=$(xt_ns "iwg$k") dns=$(xt_ns "iwd$k")
	args_g=() args_d=()
	for ((i = 0; i < k; i++)); do
		xt_veth "$gns" "g$i" "$dns" "d$i"
		ip netns exec "$gns" sysctl -qw "net.ipv6.conf.g$i.disable_ipv6=1"
		ip netns exec "$dns" sysctl -qw "net.ipv6.conf.d$i.disable_ipv6=1"
		# GRO gives a veth its NAPI before any XDP program, so it can be made threaded.
		[ "$napi" = threaded ] && ip netns exec "$dns" sh -c "ethtool -K d$i gro on && echo 1 >/sys/class/net/d$i/threaded"
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
			# Emptied first: the last run's ready line would pass the wait below
			# before this engine opened the file (its start-up in the window).
			: >"$tmp/dut.out"
			ip netns exec "$dns" "$xpile" run "${args_d[@]}" --mode rxdrop --cores "$dcore" \
				--idle-wait "$w" --quiet >"$tmp/dut.out" 2>&1 &
			dpid=$!
			XT_PIDS+=("$dpid")
			xt_wait_for 10 grep -q 'ready' "$tmp/dut.out" || { cat "$tmp/dut.out" >&2; exit 1; }
			if [ "$napi" = threaded ]; then # the NAPI threads come with the XDP program
				for t in $(pgrep '^napi/d[0-9]+-'); do taskset -pc "$dcore" "$t" >/dev/null; done
			fi
			sleep 1
			[ "$trace" = 1 ] && { strace -c -f -o "$tmp/st" -p "$dpid" 2>/dev/null & spid=$!; sleep 0.5; }
			p0=$(redirects "$dns" "$k") c0=$(cpu_ns "$dpid") s0=$(ctx_sw "$dpid") i0=$(ctx_inv "$dpid") q0=$(wcpu_ns "$dpid")
			sleep "$win"
			p1=$(redirects "$dns" "$k") c1=$(cpu_ns "$dpid") s1=$(ctx_sw "$dpid") i1=$(ctx_inv "$dpid") q1=$(wcpu_ns "$dpid")
			if [ "$trace" = 1 ]; then
				kill -INT "$spid"
				wait "$spid"
				awk -v p=$((p1 - p0)) -v k="$k" -v w="$w" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && p {
					printf "idle_wait k=%s wait=%s syscall=%s calls=%d per_pkt=%.3f\n", k, w, $NF, $4, $4 / p }' "$tmp/st"
			fi
			kill -INT "$dpid"
			wait "$dpid"
			pk=$((p1 - p0))
			ns=$(awk -v c=$((c1 - c0)) -v p="$pk" 'BEGIN {printf "%.0f", p ? c / p : 0}')
			sw=$(awk -v c=$((s1 - s0)) -v p="$pk" 'BEGIN {printf "%.3f", p ? c / p : 0}')
			iv=$(awk -v c=$((i1 - i0)) -v p="$pk" 'BEGIN {printf "%.4f", p ? c / p : 0}')
			wn=$(awk -v c=$((q1 - q0)) -v p="$pk" 'BEGIN {printf "%.0f", p ? c / p : 0}')
			echo "idle_wait k=$k wait=$w pps=$((pk / win)) cpu_ns_per_pkt=$ns worker_ns_per_pkt=$wn sleeps_per_pkt=$sw preempted_per_pkt=$iv"
			echo "$ns" >>"$tmp/k$k.$w"
			echo "$wn" >>"$tmp/wk$k.$w"
		done
	done
	kill -INT "$gpid"
	wait "$gpid"
	mp=$(median <"$tmp/k$k.poll") mu=$(median <"$tmp/k$k.uring")
	echo "idle_wait median k=$k runs=$runs poll_ns=$mp uring_ns=$mu ratio=$(awk -v a="$mu" -v b="$mp" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
	mp=$(median <"$tmp/wk$k.poll") mu=$(median <"$tmp/wk$k.uring")
	echo "idle_wait median k=$k runs=$runs worker poll_ns=$mp uring_ns=$mu ratio=$(awk -v a="$mu" -v b="$mp" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
	for ((i = 0; i < k; i++)); do ip -n "$gns" link del "g$i" 2>/dev/null; done
done
