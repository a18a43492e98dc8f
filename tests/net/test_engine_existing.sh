#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --attach-existing: `xpile-loader load` owns the steer program; the engine finds its
# pins, registers its socket, serves, and at exit unregisters and leaves the program
# attached (traffic falls back to the kernel); `xpile-loader unload` removes it.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
LOADER=$XT_BUILD/xpile-loader
[ -x "$LOADER" ] || xt_skip "xpile-loader not built: run make"

eng_pair 198.18.6
pings() { eng_pings "$1" 198.18.6.2; }

# Without the program nothing can attach to it.
ip netns exec "$B" "$XPILE" run --iface b0 --mode rxdrop --attach-existing --duration 1 \
	>/dev/null 2>"$XT_TMP/err" && xt_fail "--attach-existing worked without a loaded program"
[ "$(wc -l <"$XT_TMP/err")" = 1 ] || { cat "$XT_TMP/err"; xt_fail "want one line of error"; }

ip netns exec "$B" "$LOADER" load b0 >"$XT_TMP/load" 2>&1 || { cat "$XT_TMP/load"; xt_fail "loader load failed"; }
xt_on_exit "ip netns exec $B $LOADER unload b0"
[ "$(pings 3)" = 3 ] || xt_fail "with no socket the program must pass to the kernel"

eng_start ENG "$B" --iface b0 --mode rxdrop --attach-existing
got=$(pings 5)
[ "${got:-0}" = 0 ] || xt_fail "the engine let $got pings through"
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
rx=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
[ "$rx" -ge 5 ] || xt_fail "engine received $rx packets"
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
eng_no_xdp "$B" b0 && xt_fail "the engine removed a program it did not attach"
[ "$(pings 3)" = 3 ] || xt_fail "after the engine left, the kernel must answer"

ip netns exec "$B" "$LOADER" unload b0 >/dev/null 2>&1 || xt_fail "loader unload failed"
eng_no_xdp "$B" b0 || xt_fail "program still attached after unload"
echo ok
