#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Living with xdp-tools: xdp-loader loads build/bpf/steer.o, shows it and unloads it;
# xdp-loader status shows what xpile-loader attached; xpile-loader does not replace the
# program xdp-loader put there unless --force, and leaves nothing behind.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require
command -v xdp-loader >/dev/null || xt_skip "xdp-loader missing: apt-get install xdp-tools"

st_ns A xt
xt_veth "$A" x0 "$A" x1
X() { ip netns exec "$A" xdp-loader "$@" 2>&1; }

X load -m native x0 "$XT_BUILD/bpf/steer.o" >/dev/null || xt_fail "xdp-loader load steer.o: $(X load -m native x0 "$XT_BUILD/bpf/steer.o")"
X status x0 | grep -q "x0 .*xp_steer .*native" || xt_fail "xdp-loader status: $(X status x0)"
out=$(st_loader "$A" load x0 2>&1) && xt_fail "xpile-loader replaced xdp-loader's program"
echo "$out" | grep -q -- "--force" || xt_fail "refusal does not name --force: $out"
X unload x0 --all >/dev/null || xt_fail "xdp-loader unload"
ip -n "$A" link show x0 | grep -q xdp && xt_fail "xdp-loader unload left a program"

st_loader "$A" load x0 >/dev/null || xt_fail "xpile-loader load"
X status x0 | grep -q "x0 .*xp_steer" || xt_fail "xdp-loader does not see xpile's program: $(X status x0)"
st_loader "$A" unload x0 >/dev/null || xt_fail "xpile-loader unload"
st_no_trace "$A" x0 || xt_fail "traces left"
X status x0 | grep -q "x0 .*No XDP program" || xt_fail "xdp-loader still sees a program"
echo ok
