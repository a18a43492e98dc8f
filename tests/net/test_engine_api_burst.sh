#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API, run-loop style (xpile/engine.h .on_burst), from a program built on
# the public headers and libxpile.so alone: K packets sent to b0 are each counted once
# by the burst callback, which holds up to 32 frames across bursts (xp_pkt_hold) and
# frees the rest; the queue's counters (xp_queue_stats_get) agree, the ledger had held
# frames while running and none at exit, the exit audit passes (run=0), nothing is left
# attached.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require

K=${K:-20000}
eng_pair 198.18.2
api_start burst 4
api_send "$K"
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "engapi exited $rc"; }
cat "$XT_TMP/api.out"
[ "$(api_field run)" = 0 ] || { cat "$XT_TMP/api.err"; xt_fail "xp_engine_run returned $(api_field run)"; }
[ "$(api_field rx)" = "$K" ] || xt_fail "the callback counted $(api_field rx) of $K packets"
[ "$(api_field stats_rx)" = "$K" ] || xt_fail "xp_queue_stats_get says rx_packets $(api_field stats_rx), sent $K"
[ "$(api_field held_max)" -gt 0 ] || xt_fail "no frame was ever held"
[ "$(api_field ledger_held)" = 0 ] || xt_fail "frames still held at exit: $(api_field ledger_held)"
[ "$(api_field leaked)" = 0 ] || xt_fail "the ledger saw a leak: $(api_field leaked)"
grep -q 'leaked\|still holds\|unaccounted' "$XT_TMP/api.err" && { cat "$XT_TMP/api.err"; xt_fail "the ledger complained"; }
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
