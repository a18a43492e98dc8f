#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What the control socket costs the workers (issue 25): one rxdrop engine on d0 fed by
# an xpile txonly generator on g0 (veth, unlimited rate), measured in windows of
# XB_SECONDS (default 3) alternating without and with a client that asks `stats` (and
# `workers`) 10 times a second on one connection. Each window counts the kernel's
# successful redirects into the engine's socket (veth rx_queue_0_xdp_redirect): an
# outside observer; and the worker's own busy cycles per packet in each window (its TSC
# accounts, read through `workers` at both edges of every window). A/B interleaved XB_RUNS times (default 7, ABBA order); prints each pair and its
# ratio (with / without), the medians and their ratio, and the median of the pair
# ratios (the figure: each pair's windows are seconds apart, so a drift of the shared
# machine's load cancels within a pair, not across them).
#
#   sudo tools/bench/ctl_cost.sh          (after make; XB_XPILE=build/xpile)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh
xt_require_root
xpile=${XB_XPILE:-build/xpile}
runs=${XB_RUNS:-7}
win=${XB_SECONDS:-3}
gcore=${XB_GEN_CORE:-0}
dcore=${XB_DUT_CORE:-1}
[ -x "$xpile" ] || xt_fail "$xpile missing: run make"
command -v jq >/dev/null || xt_fail "jq missing: apt-get install jq"

xt_ns_var G gen
xt_ns_var D dut
xt_veth "$G" g0 "$D" d0
name="xpcost$$"
dmac=$(ip -n "$D" -o link show d0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip netns exec "$D" "$xpile" run --iface d0 --mode rxdrop --cores "$dcore" --quiet --name "$name" \
	>/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 15 test -S "/run/xpile/$name.sock" || xt_fail "engine did not start"
ip netns exec "$G" "$xpile" run --iface g0 --cores "$gcore" --quiet --mode txonly --pkt-size 64 \
	--dst-mac "$dmac" --duration $((runs * 2 * (win + 1) + 30)) >/dev/null 2>&1 &
XT_PIDS+=($!)
sleep 2
redir() { ip netns exec "$D" ethtool -S d0 | awk '/rx_queue_0_xdp_redirect:/ {print $2}'; }
# The worker's own account (its TSC busy cycles and packets, `workers`): read at both
# edges of every window alike, so the two reads cost both arms the same.
wacct() { "$xpile" ctl "$name" workers | jq -r '.workers[0] | "\(.busy_cycles) \(.packets)"'; }
# One window: "PPS CYCLES_PER_PACKET" (the worker's busy cycles per packet in it).
# Every window starts after the same 0.3 s settle (the client, when there is one, is
# asking by then), so the first and second window of a pair are prepared alike.
window() {
	local a b c0 k0 c1 k1
	sleep 0.3
	read -r c0 k0 < <(wacct)
	a=$(redir)
	sleep "$win"
	b=$(redir)
	read -r c1 k1 < <(wacct)
	echo "$(((b - a) / win)) $(((c1 - c0) / (k1 - k0 > 0 ? k1 - k0 : 1)))"
}
poller() {
	python3 - "/run/xpile/$name.sock" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("r")
while True:
    for cmd in (b'{"cmd":"stats"}\n', b'{"cmd":"workers"}\n'):
        s.sendall(cmd); f.readline()
    time.sleep(0.1)
PY
	PPID_POLL=$!
}
off=() on=() ratios=() cratios=()
with_client() {
	poller
	window
	kill "$PPID_POLL" 2>/dev/null
	wait "$PPID_POLL" 2>/dev/null
}
# ABBA: odd pairs measure without the client first, even ones with it first, so a
# drift within a pair (the generator warming, a neighbour's load) favours neither.
for ((i = 0; i < runs; i++)); do
	if ((i % 2 == 0)); then
		read -r a ca < <(window)
		read -r b cb < <(with_client)
	else
		read -r b cb < <(with_client)
		read -r a ca < <(window)
	fi
	r=$(awk -v a="$b" -v b="$a" 'BEGIN {printf "%.3f", b ? a / b : 0}')
	# Cycles per packet inverted (without / with): like the pps ratio, below 1 is a cost.
	rc=$(awk -v a="$ca" -v b="$cb" 'BEGIN {printf "%.3f", b ? a / b : 0}')
	off+=("$a") on+=("$b") ratios+=("$r") cratios+=("$rc")
	echo "run $((i + 1)): without $a pps ($ca busy cycles/packet), with stats 10/s $b pps ($cb), ratio $r (cycles: $rc)"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
mo=$(median "${off[@]}") mn=$(median "${on[@]}")
echo "median without: $mo pps, with a client polling stats 10/s: $mn pps, ratio $(awk -v a="$mn" -v b="$mo" 'BEGIN {printf "%.3f", a / b}')"
lo=$(printf '%s\n' "${ratios[@]}" | sort -n | head -1) hi=$(printf '%s\n' "${ratios[@]}" | sort -n | tail -1)
echo "median of the $runs pair ratios (with / without): $(median "${ratios[@]}") (from $lo to $hi); load $(cut -d' ' -f1-3 /proc/loadavg)"
lo=$(printf '%s\n' "${cratios[@]}" | sort -n | head -1) hi=$(printf '%s\n' "${cratios[@]}" | sort -n | tail -1)
echo "the worker's busy cycles per packet, median of the pair ratios (without / with): $(median "${cratios[@]}") (from $lo to $hi)"
