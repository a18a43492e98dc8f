#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# 9000-byte frames through fwd: MTU 9000 everywhere, 2048-byte UMEM frames, so every
# big packet crosses the engine as a chain of buffers (XDP_USE_SG, frags-aware steer
# program). Full-size pings are answered and an iperf3 TCP stream completes at MTU 9000.
set -u
cd "$(dirname "$0")/../.."
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

eng_ns H1 h1; eng_ns H2 h2; eng_ns E eng
xt_veth "$H1" h1 "$E" e1
xt_veth "$H2" h2 "$E" e2
for p in "$H1 h1" "$E e1" "$E e2" "$H2 h2"; do
	set -- $p
	ip -n "$1" link set "$2" mtu 9000 || xt_skip "veth refuses MTU 9000 here"
done
eng_host "$H1" h1 198.18.4.1/24
eng_host "$H2" h2 198.18.4.2/24
eng_quiet "$E" e1
eng_quiet "$E" e2

eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --frame-size 2048 --ledger-debug
grep '"type":"socket"' "$XT_TMP/ENG.json" | grep -q '"multi_buffer":true' ||
	xt_fail "multi-buffer not enabled for MTU 9000"

ip netns exec "$H1" ping -c 10 -i 0.05 -W 2 -M do -s 8972 198.18.4.2 >"$XT_TMP/ping" 2>&1
grep -q '10 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping" "$XT_TMP/ENG.err"; xt_fail "9000-byte pings lost"; }

ip netns exec "$H2" iperf3 -s -1 -p 5202 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c 'ss -ltn | grep -q :5202' || xt_fail "iperf3 server did not start"
ip netns exec "$H1" timeout 20 iperf3 -c 198.18.4.2 -p 5202 -t 2 -M 8900 -J >"$XT_TMP/iperf" 2>&1 ||
	{ tail -5 "$XT_TMP/iperf"; xt_fail "iperf3 TCP at MTU 9000 failed"; }
bytes=$(grep -o '"bytes":[[:space:]]*[0-9]*' "$XT_TMP/iperf" | tail -1 | grep -o '[0-9]*$')
[ "${bytes:-0}" -gt 1000000 ] || xt_fail "iperf3 moved only ${bytes:-0} bytes"

eng_stop "$ENG" || { cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $?"; }
rxb=$(eng_sum "$XT_TMP/ENG.json" rx_bytes)
rxp=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
echo "iperf3 $bytes bytes; engine rx $rxp packets, $rxb bytes ($((rxb / (rxp ? rxp : 1))) per packet)"
[ "$((rxb / (rxp ? rxp : 1)))" -gt 2048 ] || xt_fail "no packet larger than a frame crossed"
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
echo ok
