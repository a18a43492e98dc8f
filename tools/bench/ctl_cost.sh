#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What the control socket costs the workers (issue 25): one rxdrop engine on d0 fed by
# an xpile txonly generator on g0 (veth, unlimited rate), measured in windows of
# XB_SECONDS (default 3) alternating without and with a client that asks `stats` (and
# `workers`) 10 times a second on one connection. Each window counts the kernel's
# successful redirects into the engine's socket (veth rx_queue_0_xdp_redirect): an
# outside observer. A/B interleaved XB_RUNS times (default 7); prints each pair and its
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
window() { local a b; a=$(redir); sleep "$win"; b=$(redir); echo $(((b - a) / win)); }
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
off=() on=() ratios=()
for ((i = 0; i < runs; i++)); do
	a=$(window)
	poller
	sleep 0.3
	b=$(window)
	kill "$PPID_POLL" 2>/dev/null
	wait "$PPID_POLL" 2>/dev/null
	r=$(awk -v a="$b" -v b="$a" 'BEGIN {printf "%.3f", b ? a / b : 0}')
	off+=("$a") on+=("$b") ratios+=("$r")
	echo "run $((i + 1)): without $a pps, with stats 10/s $b pps, ratio $r"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
mo=$(median "${off[@]}") mn=$(median "${on[@]}")
echo "median without: $mo pps, with a client polling stats 10/s: $mn pps, ratio $(awk -v a="$mn" -v b="$mo" 'BEGIN {printf "%.3f", a / b}')"
lo=$(printf '%s\n' "${ratios[@]}" | sort -n | head -1) hi=$(printf '%s\n' "${ratios[@]}" | sort -n | tail -1)
echo "median of the $runs pair ratios (with / without): $(median "${ratios[@]}") (from $lo to $hi); load $(cut -d' ' -f1-3 /proc/loadavg)"
