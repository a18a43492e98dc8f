#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Coexistence in libxdp's multi-program dispatcher: xp_steer and xdp-filter on one
# interface, both listed by xdp-loader status and both running. The dispatcher needs
# freplace programs; where the kernel refuses them (EPERM here), libxdp falls back to
# a single program, and this suite reports a skip with the reason xpile-loader probed.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require
command -v xdp-filter >/dev/null || xt_skip "xdp-filter missing: apt-get install xdp-tools"

st_ns A disp
xt_veth "$A" x0 "$A" x1
f=$(st_loader "$A" features --json x0) || xt_fail "features failed"
if echo "$f" | grep -q '"dispatcher":false'; then
	why=$(echo "$f" | grep -o '"dispatcher_reason":"[^"]*"' | cut -d'"' -f4)
	xt_skip "libxdp dispatcher unavailable: $why; xpile runs as the only XDP program"
fi
export LIBXDP_BPFFS=$BPFFS
ip netns exec "$A" xdp-filter load -m skb x0 || xt_fail "xdp-filter load"
st_loader "$A" load --mode skb x0 || xt_fail "xpile-loader load next to xdp-filter"
s=$(ip netns exec "$A" xdp-loader status x0)
echo "$s" | grep -q xp_steer || xt_fail "xp_steer not in the dispatcher: $s"
echo "$s" | grep -q xdpfilt || xt_fail "xdp-filter gone: $s"
st_loader "$A" unload x0 || xt_fail "unload"
ip netns exec "$A" xdp-loader status x0 | grep -q xdpfilt || xt_fail "unload removed xdp-filter"
ip netns exec "$A" xdp-filter unload x0 --all
st_no_trace "$A" x0 || xt_fail "traces left"
echo ok
