#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API, a worker that finishes (xp_worker_done), from a program built on the
# public headers and libxpile.so alone: an engine with no RX whose poll callback sends
# K UDP packets to A through xp_tx_room, xp_pkt_alloc and xp_tx_burst (txonly's way),
# then says it is done. xp_engine_run returns once they completed, long before
# .duration (30 s), with a clean exit audit (run=0); A's kernel counts all K in Udp
# NoPorts, and the queue's counters say K sent.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require

K=${K:-10000}
eng_pair 198.18.2
AMAC=$(ip -n "$A" -o link show a0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
# A answers each with an ICMP port unreachable to .3: no ARP for it.
ip -n "$A" neigh add 198.18.2.3 lladdr 02:00:00:00:00:03 dev a0
# shellcheck disable=SC2016 # $3 is awk's
noports() { ip netns exec "$A" awk '/^Udp: [0-9]/ {print $3}' /proc/net/snmp; }
before=$(noports)
t0=$(date +%s)
api_start "done" 30 "$K" "$AMAC"
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "engapi exited $rc"; }
took=$(($(date +%s) - t0))
cat "$XT_TMP/api.out"
[ "$(api_field run)" = 0 ] || { cat "$XT_TMP/api.err"; xt_fail "xp_engine_run returned $(api_field run)"; }
# 10000 packets at 16 kpps are 0.6 s; the duration is 30 s.
[ "$took" -le 15 ] || xt_fail "xp_engine_run returned after $took s: the worker's done did not end it"
[ "$(api_field sent)" = "$K" ] || xt_fail "the callback sent $(api_field sent) of $K"
[ "$(api_field stats_tx)" = "$K" ] || xt_fail "xp_queue_stats_get says tx_packets $(api_field stats_tx), sent $K"
got() { [ "$(($(noports) - before))" -ge "$K" ]; }
xt_wait_for 3 got
[ "$(($(noports) - before))" = "$K" ] || xt_fail "A's kernel counted $(($(noports) - before)) of $K"
grep -q 'leaked\|still holds\|unaccounted' "$XT_TMP/api.err" && { cat "$XT_TMP/api.err"; xt_fail "the ledger complained"; }
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo "ok: $K sent, run returned after ${took} s of a 30 s duration"
