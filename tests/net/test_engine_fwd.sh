#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fwd as a wire: h1 <-> [e1 xpile fwd e2] <-> h2. Every ping is answered, an iperf3 TCP
# stream completes, the engine exits 0 with a clean ledger and removes its programs.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

eng_wire_hosts 198.18.1 1500
H2_ADDR=198.18.1.2

eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --interval 0.5 --ledger-debug --audit

ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 198.18.1.2 >"$XT_TMP/ping" 2>&1 ||
	{ cat "$XT_TMP/ping"; xt_fail "ping through fwd lost packets"; }
grep -q '20 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "not every ping answered"; }

eng_iperf bytes 5201 3
# shellcheck disable=SC2154 # eng_iperf sets it (printf -v)
echo "iperf3: $bytes bytes received through fwd"

eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || { grep ledger "$XT_TMP/ENG.json"; xt_fail "ledger not clean"; }
eng_deals_even "$XT_TMP/ENG.json" || { grep allocator "$XT_TMP/ENG.json" | tail -1; xt_fail "a refill was not channel-even"; }
grep -q '"type":"ledger","when":"audit"' "$XT_TMP/ENG.json" || xt_fail "no audit ran while forwarding"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
rx=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
tx=$(eng_sum "$XT_TMP/ENG.json" tx_packets)
echo "engine: rx $rx tx $tx packets"
[ "$rx" -ge 40 ] && [ "$tx" -ge 40 ] || xt_fail "engine counted rx $rx tx $tx"
echo "ok"
