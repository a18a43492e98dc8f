#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API, own-loop style (xpile/engine.h .worker_main: a DPDK lcore loop of
# xp_worker_turn, xp_rx_burst, xp_tx_burst, xp_worker_idle), from a program built on
# the public headers and libxpile.so alone: it swaps the MACs and sends each packet
# back, so A's kernel counts all K in Udp NoPorts; the exit audit passes (run=0).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require

K=${K:-20000}
eng_pair 198.18.2
ip -n "$A" neigh add 198.18.2.3 lladdr 02:00:00:00:00:03 dev a0
# shellcheck disable=SC2016 # $3 is awk's
noports() { ip netns exec "$A" awk '/^Udp: [0-9]/ {print $3}' /proc/net/snmp; }
before=$(noports)
api_start own 4
api_send "$K"
back() { [ "$(($(noports) - before))" -ge "$K" ]; }
xt_wait_for 5 back
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "engapi exited $rc"; }
cat "$XT_TMP/api.out"
[ "$(api_field run)" = 0 ] || { cat "$XT_TMP/api.err"; xt_fail "xp_engine_run returned $(api_field run)"; }
[ "$(($(noports) - before))" = "$K" ] || xt_fail "$(($(noports) - before)) of $K came back"
[ "$(api_field rx)" -ge "$K" ] || xt_fail "the loop counted $(api_field rx) of $K"
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
