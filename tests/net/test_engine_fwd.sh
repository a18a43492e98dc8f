#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fwd as a wire: h1 <-> [e1 xpile fwd e2] <-> h2. Every ping is answered, an iperf3 TCP
# stream completes, the engine exits 0 with a clean ledger and removes its programs.
set -u
cd "$(dirname "$0")/../.."
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

eng_ns H1 h1; eng_ns H2 h2; eng_ns E eng
xt_veth "$H1" h1 "$E" e1
xt_veth "$H2" h2 "$E" e2
eng_host "$H1" h1 198.18.1.1/24
eng_host "$H2" h2 198.18.1.2/24
eng_quiet "$E" e1
eng_quiet "$E" e2

eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --interval 0.5 --ledger-debug --audit

ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 198.18.1.2 >"$XT_TMP/ping" 2>&1 ||
	{ cat "$XT_TMP/ping"; xt_fail "ping through fwd lost packets"; }
grep -q '20 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "not every ping answered"; }

ip netns exec "$H2" iperf3 -s -1 -p 5201 >"$XT_TMP/iperf-s" 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c 'ss -ltn | grep -q :5201' || xt_fail "iperf3 server did not start"
ip netns exec "$H1" timeout 20 iperf3 -c 198.18.1.2 -p 5201 -t 3 -J >"$XT_TMP/iperf" 2>&1 ||
	{ tail -20 "$XT_TMP/iperf"; cat "$XT_TMP/ENG.err"; xt_fail "iperf3 TCP through fwd failed"; }
bytes=$(grep -o '"bytes":[[:space:]]*[0-9]*' "$XT_TMP/iperf" | tail -1 | grep -o '[0-9]*$')
[ "${bytes:-0}" -gt 1000000 ] || xt_fail "iperf3 moved only ${bytes:-0} bytes"
echo "iperf3: $bytes bytes received through fwd"

eng_stop "$ENG" || { cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $?"; }
eng_ledger_ok "$XT_TMP/ENG.json" || { grep ledger "$XT_TMP/ENG.json"; xt_fail "ledger not clean"; }
grep -q '"type":"ledger","when":"audit"' "$XT_TMP/ENG.json" || xt_fail "no audit ran while forwarding"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
rx=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
tx=$(eng_sum "$XT_TMP/ENG.json" tx_packets)
echo "engine: rx $rx tx $tx packets"
[ "$rx" -ge 40 ] && [ "$tx" -ge 40 ] || xt_fail "engine counted rx $rx tx $tx"
echo "ok"
