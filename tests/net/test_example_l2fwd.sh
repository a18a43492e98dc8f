#!/usr/bin/env bash
# shellcheck disable=SC2154 # eng_iperf and ex_iperf_udp set their variables (printf -v)
# SPDX-License-Identifier: BSD-3-Clause
# tools/examples/l2fwd between two hosts: H1 h1 <-> e1 [E: l2fwd e1 e2] e2 <-> h2 H2, one
# subnet, each port's --eth-dest the host behind it (DPDK's MAC updating, with real
# MACs), so ARP, ping, iperf3 UDP and TCP all cross the example alone. The frames leave
# with the output port's source MAC, the engine's exit ledger is clean, nothing stays
# attached.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/examples.sh
ex_require l2fwd

eng_wire_hosts 198.18.40 1500
H2_ADDR=198.18.40.2
m1=$(ex_mac "$H1" h1) m2=$(ex_mac "$H2" h2) e2mac=$(ex_mac "$E" e2)
ex_start L2 "$E" l2fwd --iface e1 --iface e2 --cores 1 --eth-dest 0,"$m1" --eth-dest 1,"$m2" --ledger-debug

got=$(ex_pings 10 198.18.40.2)
[ "${got:-0}" = 10 ] || xt_fail "ping through l2fwd: ${got:-0}/10 answered"
# The neighbour H1 learnt for h2 is h2's own MAC: ARP crossed l2fwd both ways.
ip -n "$H1" neigh show 198.18.40.2 | grep -q "$m2" || xt_fail "H1's neighbour for h2: $(ip -n "$H1" neigh show 198.18.40.2)"
# What reaches h2 carries e2's MAC as its source (the rewrite), seen by a capture.
ip netns exec "$H2" timeout 5 tcpdump -c 3 -nei h2 icmp >"$XT_TMP/cap" 2>/dev/null &
cap=$!
sleep 0.5
ex_pings 3 198.18.40.2 >/dev/null
wait "$cap"
grep -q "^.*$e2mac > $m2" "$XT_TMP/cap" || { cat "$XT_TMP/cap"; xt_fail "frames at h2 do not come from e2's MAC $e2mac"; }

ex_iperf_udp udp 198.18.40.2 5201 2 -b 20M -l 1200
echo "UDP: $udp datagrams received"
[ "$udp" -gt 1000 ] || xt_fail "iperf3 UDP through l2fwd: only $udp datagrams"
eng_iperf tcp 5202 3
echo "TCP: $tcp bytes"

ex_stop "$L2" || { rc=$?; cat "$XT_TMP/L2.err"; xt_fail "l2fwd exited with status $rc"; }
fwd=$(ex_field "$XT_TMP/L2.err" forwarded)
echo "l2fwd: $(grep '^l2fwd ' "$XT_TMP/L2.err")"
[ "${fwd:-0}" -gt 1000 ] || xt_fail "l2fwd counted ${fwd:-0} forwarded"
eng_ledger_ok "$XT_TMP/L2.json" || { grep ledger "$XT_TMP/L2.json"; xt_fail "the exit ledger is not clean"; }
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP left attached"
echo ok
