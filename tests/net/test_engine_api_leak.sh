#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API's ownership check: a burst callback that keeps one frame of each
# burst (neither sent, freed, punted nor held) is named by the ledger with its port,
# queue and callback, at once with the debug ledger and at the next audit without,
# and the run fails its exit audit (xp_engine_run: -EUCLEAN). A worker_fini that
# leaves frames held is named too.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require

K=${K:-2000}
eng_pair 198.18.2
EUCLEAN=117
for how in release debug; do
	extra=()
	[ $how = debug ] && extra=(debug)
	api_start leak 3 "${extra[@]}"
	api_send "$K"
	api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "$how: engapi exited $rc"; }
	cat "$XT_TMP/api.out"
	[ "$(api_field run)" = -$EUCLEAN ] || { cat "$XT_TMP/api.err"; xt_fail "$how: xp_engine_run returned $(api_field run), not -EUCLEAN"; }
	[ "$(api_field leaked)" -gt 0 ] || xt_fail "$how: the ledger counted no leak"
	grep -q 'callback leak .*frame(s) on b0:0' "$XT_TMP/api.err" ||
		{ cat "$XT_TMP/api.err"; xt_fail "$how: no line names the callback, port and queue"; }
	eng_no_xdp "$B" b0 || xt_fail "$how: XDP program left attached"
	echo "$how: $(grep -m1 'callback leak' "$XT_TMP/api.err")"
done

api_start holdexit 3
api_send "$K"
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "holdexit: engapi exited $rc"; }
cat "$XT_TMP/api.out"
grep -q 'callback holdexit still holds [0-9]* frame(s)' "$XT_TMP/api.err" ||
	{ cat "$XT_TMP/api.err"; xt_fail "holdexit: frames held at exit not named"; }
[ "$(api_field run)" != 0 ] || xt_fail "holdexit: the run passed with frames held at exit"
eng_no_xdp "$B" b0 || xt_fail "holdexit: XDP program left attached"
echo ok
