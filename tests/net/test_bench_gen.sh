#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-bench gen, the engine benchmark's XDP live-frames source: exactly --count frames
# leave g0 and reach d0's XDP program (steer, default action drop, whose per-CPU
# counters see every frame before any ring could drop it), with the UDP/IPv4 header
# it promises; bad arguments get one line and exit 2; nothing is left attached.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require
BENCH=$XT_BUILD/xpile-bench
[ -x "$BENCH" ] && [ -f "$XT_BUILD/bpf/gen_tx.o" ] || xt_skip "xpile-bench not built: run make"

st_ns A gen
st_ns B dut
# No IPv6: a router or neighbour solicitation from g0 would be one frame too many.
for ns in "$A" "$B"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 || xt_fail "cannot disable IPv6 in $ns"
done
xt_veth "$A" g0 "$B" d0
DMAC=$(ip netns exec "$B" cat /sys/class/net/d0/address)

# Bad input: one line naming the cause, exit 2.
expect_usage() { # pattern args...
	local pat=$1 out rc
	shift
	out=$(ip netns exec "$A" "$BENCH" gen "$@" 2>&1)
	rc=$?
	[ "$rc" = 2 ] || xt_fail "gen $*: exit $rc, expected 2 ($out)"
	[ "$(echo "$out" | wc -l)" = 1 ] || xt_fail "gen $*: more than one line: $out"
	echo "$out" | grep -qi -- "$pat" || xt_fail "gen $*: said '$out', expected '$pat'"
}
expect_usage "required" --iface g0
expect_usage "--dst-mac nonsense: expected a MAC address" --iface g0 --dst-mac nonsense
expect_usage "no interface 'nosuch0'" --iface nosuch0 --dst-mac "$DMAC"
expect_usage "60" --iface g0 --dst-mac "$DMAC" --pkt-size 20
"$BENCH" gen --help | grep -q "^    xpile-bench gen " || xt_fail "gen --help"

st_loader "$B" load d0 >/dev/null || xt_fail "load steer on d0"
st_loader "$B" rule default d0 drop || xt_fail "default drop"

K=200000
out=$(ip netns exec "$A" timeout 20 "$BENCH" gen --iface g0 --dst-mac "$DMAC" --count $K \
	--pkt-size 64 --seconds 10) || xt_fail "gen exited $?: $out"
echo "$out"
echo "$out" | grep -q "packets=$K " || xt_fail "gen did not report $K packets"

# What arrived, as the receiving XDP program counted it: every frame, parsed as UDP/IPv4
# (no parse error), hitting the default action.
stats=$(st_loader "$B" stats --json d0)
got() { echo "$stats" | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
echo "d0 saw: default $(got default_packets) drop $(got drop_packets) parse_error $(got parse_error_packets)"
[ "$(got default_packets)" = "$K" ] || xt_fail "d0's program saw $(got default_packets) of $K frames"
[ "$(got parse_error_packets)" = 0 ] || xt_fail "gen's frames did not parse as UDP/IPv4"
[ "$(got drop_packets)" = "$K" ] || xt_fail "dropped $(got drop_packets) of $K"
[ "$(got default_bytes)" = "$((K * 64))" ] || xt_fail "bytes $(got default_bytes), expected $((K * 64))"

st_loader "$B" unload d0 || xt_fail "unload"
st_no_trace "$B" d0 || xt_fail "steer left behind on d0"
ip -n "$A" link show g0 | grep -q "prog/xdp" && xt_fail "gen left a program on g0"
echo ok
