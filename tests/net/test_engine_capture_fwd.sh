#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --capture on fwd, both directions (issue 11, section 2): h1 <-> [e1 xpile fwd e2] <-> h2.
# K pings give 4K records: each request received on e1:0 (inbound) and sent on e2:0
# (outbound), each reply the other way round. Then a capture ring too small for an iperf3
# stream: frames are dropped from the capture and counted, never from the wire: every
# frame the engine received or sent was either written or counted as capture_dropped,
# the stream completes and the ledger is clean.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"
command -v tshark >/dev/null || xt_skip "tshark missing: apt-get install tshark"

eng_wire_hosts 198.18.6 1500
H2_ADDR=198.18.6.2
K=10

eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug \
	--capture "$XT_TMP/fwd.pcapng"
sleep 0.5 # an engine started again on the same veth may miss its first ~150 ms
# ARP first, so the capture holds the pings and the two ARP exchanges only.
ip netns exec "$H1" ping -c 1 -W 2 "$H2_ADDR" >/dev/null 2>&1 || xt_fail "no first ping through fwd"
ip netns exec "$H1" ping -c "$K" -i 0.05 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1
grep -q "$K received" "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "pings lost through fwd with --capture"; }
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
tshark -r "$XT_TMP/fwd.pcapng" -Y icmp -T fields -e frame.interface_name \
	-e frame.packet_flags_direction -e icmp.type >"$XT_TMP/f" 2>/dev/null
for want in "e1:0 1 8" "e2:0 2 8" "e2:0 1 0" "e1:0 2 0"; do
	n=$(awk -v w="$want" '{ d = $2; sub(/^0x0*/, "", d); if ($1 " " d " " $3 == w) c++ } END {print c + 0}' "$XT_TMP/f")
	[ "$n" = $((K + 1)) ] || { sort "$XT_TMP/f" | uniq -c; xt_fail "capture: $n records of '$want' (interface direction icmp-type), want $((K + 1))"; }
done
rx=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
tx=$(eng_sum "$XT_TMP/ENG.json" tx_packets)
frames=$(grep -o '"type":"capture".*' "$XT_TMP/ENG.json" | grep -o '"frames":[0-9]*' | cut -d: -f2)
[ "$frames" = $((rx + tx)) ] || xt_fail "capture wrote $frames records, the engine received $rx and sent $tx"
echo "capture fwd: $((4 * (K + 1))) ICMP records, rx on the ingress port and tx on the egress one; $frames = rx $rx + tx $tx"

# A 128 KiB ring under an iperf3 stream.
eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug \
	--capture "$XT_TMP/small.pcapng" --capture-buffer 128k
sleep 0.5
eng_iperf bytes 5211 3
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean (small capture ring)"
rx=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
tx=$(eng_sum "$XT_TMP/ENG.json" tx_packets)
line=$(grep -o '"type":"capture".*' "$XT_TMP/ENG.json")
frames=$(grep -o '"frames":[0-9]*' <<<"$line" | cut -d: -f2)
dropped=$(grep -o '"capture_dropped":[0-9]*' <<<"$line" | cut -d: -f2)
[ $((frames + dropped)) = $((rx + tx)) ] ||
	xt_fail "capture: $frames written + $dropped dropped, the engine moved rx $rx + tx $tx"
n=$(capinfos -M -c "$XT_TMP/small.pcapng" | awk -F': *' '/Number of packets/ {print $2}')
[ "$n" = "$frames" ] || xt_fail "the file holds $n records, the engine says $frames"
# shellcheck disable=SC2154 # eng_iperf sets it (printf -v)
echo "capture fwd, 128 KiB ring: iperf3 $bytes bytes; $frames written + $dropped capture_dropped = rx $rx + tx $tx"
echo ok
