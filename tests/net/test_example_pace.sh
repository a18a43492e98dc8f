#!/usr/bin/env bash
# shellcheck disable=SC2154 # eng_iperf and ex_iperf_udp set their variables (printf -v)
# SPDX-License-Identifier: BSD-3-Clause
# tools/examples/pace, per-flow pacing with frames held across bursts, between two
# hosts: H1 h1 <-> e1 [E: pace e1 e2] e2 <-> h2 H2. Ping crosses it untouched (far below
# the rate); an iperf3 UDP flow at 2.5x the per-flow rate leaves at that rate: frames
# waited (held) and left later, the excess beyond the queue was dropped and counted;
# an iperf3 TCP stream is held to about the rate too. While frames are held the live
# audits count them, and the exit ledger finds every frame back (pace returns what
# still waits at stop).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/examples.sh
ex_require pace

RATE=2000
eng_wire_hosts 198.18.42 1500
H2_ADDR=198.18.42.2
ex_start PC "$E" pace --iface e1 --iface e2 --cores 1 --flow-rate $RATE --flow-burst 8 --queue 256

got=$(ex_pings 10 198.18.42.2)
[ "${got:-0}" = 10 ] || xt_fail "ping through pace: ${got:-0}/10 answered"

# 5000 datagrams/s of one flow for 2 s: about RATE/s get through (plus the burst and
# the queue's 256), the rest overflow.
ex_iperf_udp udp 198.18.42.2 5201 2 -b 40M -l 1000
echo "UDP: $udp datagrams received of ~10000 offered at $RATE/s per flow"
[ "$udp" -ge $((RATE * 2 * 6 / 10)) ] && [ "$udp" -le $((RATE * 3 + 300)) ] ||
	xt_fail "UDP through pace at $RATE/s: $udp datagrams in 2 s"

eng_iperf tcp 5202 3
echo "TCP: $tcp bytes in 3 s (the rate allows ~$((RATE * 3 * 1448)))"
[ "$tcp" -le $((RATE * 4 * 1500)) ] || xt_fail "TCP through pace moved $tcp bytes: not paced"

ex_stop "$PC" || { rc=$?; cat "$XT_TMP/PC.err"; xt_fail "pace exited with status $rc"; }
line=$(grep '^pace ' "$XT_TMP/PC.err")
echo "$line"
[ "$(ex_field "$XT_TMP/PC.err" held_then_sent)" -gt 100 ] || xt_fail "nothing was held and sent later: $line"
[ "$(ex_field "$XT_TMP/PC.err" overflow)" -gt 100 ] || xt_fail "no overflow counted: $line"
[ "$(ex_field "$XT_TMP/PC.err" held_max)" -gt 0 ] || xt_fail "held_max 0: $line"
eng_ledger_ok "$XT_TMP/PC.json" || { grep ledger "$XT_TMP/PC.json"; xt_fail "a ledger audit failed"; }
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP left attached"
echo ok
