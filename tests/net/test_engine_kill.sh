#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kill -9 of the engine under traffic: its sockets vanish from the XSKMAP with the
# process, the steer program falls back to PASS, so the kernel answers again (no black
# hole); a new engine attaches over what the dead one left, serves, and cleans up.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_pair 198.18.3
pings() { eng_pings "$1" 198.18.3.2; }

eng_start ONE "$B" --iface b0 --mode rxdrop --interval 0.2
ip netns exec "$A" ping -i 0.005 -c 2000 -w 8 198.18.3.2 >/dev/null 2>&1 &
XT_PIDS+=($!)
eng_wait_sum 5 "$XT_TMP/ONE.json" rx_packets interval 100 ||
	{ tail -2 "$XT_TMP/ONE.json"; ip -n "$A" neigh; xt_fail "the engine did not receive the flood"; }
kill -9 "$ONE"
wait "$ONE" 2>/dev/null
# The kernel releases a dead process's sockets (and their XSKMAP entries) a few
# milliseconds after it exits: within a second the kernel must answer again, then all.
answered() { [ "$(pings 1)" = 1 ]; }
xt_wait_for 2 answered || xt_fail "black hole after kill -9: no ping answered within 2 s"
got=$(pings 10)
echo "after kill -9: $got of 10 pings answered by the kernel"
[ "$got" = 10 ] || xt_fail "black hole after kill -9: $got of 10 pings answered"

# A new engine serves through what the dead one left attached (and leaves it there).
eng_start TWO "$B" --iface b0 --mode rxdrop --interval 0.2
got=$(pings 5)
[ "${got:-0}" = 0 ] || xt_fail "the new engine let $got pings through to the kernel"
eng_stop "$TWO" || { rc=$?; cat "$XT_TMP/TWO.err"; xt_fail "second engine exited with status $rc"; }
rx=$(eng_sum "$XT_TMP/TWO.json" rx_packets)
[ "$rx" -ge 5 ] || xt_fail "second engine received $rx packets"
eng_ledger_ok "$XT_TMP/TWO.json" || xt_fail "ledger not clean"
got=$(pings 5)
[ "$got" = 5 ] || xt_fail "after a clean stop only $got of 5 pings answered"
echo ok
