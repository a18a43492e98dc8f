#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# 9000-byte frames through fwd: MTU 9000 everywhere, 2048-byte UMEM frames, so every
# big packet crosses the engine as a chain of buffers (XDP_USE_SG, frags-aware steer
# program). Full-size pings are answered and an iperf3 TCP stream completes at MTU 9000.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

eng_wire_hosts 198.18.4 9000
H2_ADDR=198.18.4.2

eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --frame-size 2048 --ledger-debug
grep '"type":"socket"' "$XT_TMP/ENG.json" | grep -q '"multi_buffer":true' ||
	xt_fail "multi-buffer not enabled for MTU 9000"

ip netns exec "$H1" ping -c 10 -i 0.05 -W 2 -M "do" -s 8972 198.18.4.2 >"$XT_TMP/ping" 2>&1
grep -q '10 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping" "$XT_TMP/ENG.err"; xt_fail "9000-byte pings lost"; }

eng_iperf bytes 5202 2 -M 8900

eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
rxb=$(eng_sum "$XT_TMP/ENG.json" rx_bytes)
rxp=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
# shellcheck disable=SC2154 # eng_iperf sets it (printf -v)
echo "iperf3 $bytes bytes; engine rx $rxp packets, $rxb bytes ($((rxb / (rxp ? rxp : 1))) per packet)"
[ "$((rxb / (rxp ? rxp : 1)))" -gt 2048 ] || xt_fail "no packet larger than a frame crossed"
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
echo ok
