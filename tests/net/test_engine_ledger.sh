#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The ledger is not decoration: with a frame made to vanish, or freed while still in a
# fill ring (XPILE_FAULT test hook), the exit audit reports it and the engine exits 3.
# Without the fault, the same run exits 0 with a clean ledger.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_pair

run() { # fault debug -> exit status; output in $XT_TMP/out, $XT_TMP/err
	# shellcheck disable=SC2086 # $2: options, split on purpose
	XPILE_FAULT=$1 ip netns exec "$B" timeout 20 "$XPILE" run --iface b0 --mode rxdrop \
		--duration 0.5 --json $2 >"$XT_TMP/out" 2>"$XT_TMP/err"
}

for debug in "" --ledger-debug; do
	run none "$debug"
	rc=$?
	[ $rc = 0 ] || { cat "$XT_TMP/err"; xt_fail "clean run ($debug) exited $rc"; }
	eng_ledger_ok "$XT_TMP/out" || xt_fail "clean run ($debug): ledger not ok"
	for fault in lose-frame free-twice; do
		run $fault "$debug"
		rc=$?
		echo "$fault $debug: exit $rc: $(grep -o '"why":"[^"]*"' "$XT_TMP/out" | head -1)"
		[ $rc = 3 ] || { cat "$XT_TMP/err"; xt_fail "$fault ($debug): exit status $rc, want 3"; }
		grep -q '"type":"ledger","when":"exit","ok":false' "$XT_TMP/out" ||
			xt_fail "$fault ($debug): the exit audit did not fail"
	done
	grep -q 'held twice' "$XT_TMP/out" || xt_fail "free-twice ($debug) not reported as held twice"
done
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
