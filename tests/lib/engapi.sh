# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the engine API's suites (tests/net/test_engine_api_*.sh), after
# tests/lib/netns.sh and tests/lib/engine.sh: the harness build/tests/harness/engapi
# (public headers only, linked against libxpile.so) on b0 of eng_pair, traffic from A.
#
#   api_require                  skip unless the harness is built (and eng_require)
#   api_start MODE SECONDS [ARGS]  engapi MODE b0 SECONDS ARGS in B; waits for its ready
#                                line; output in $XT_TMP/api.out and api.err, pid in API
#   api_send K                   K UDP packets from A to b0's MAC at 20 kpps (txonly)
#   api_wait                     waits for engapi to end; returns its exit status
#   api_field NAME               NAME=VALUE from its "run=" line

ENGAPI=${ENGAPI:-$XT_BUILD/tests/harness/engapi}

api_require() {
	eng_require
	[ -x "$ENGAPI" ] || xt_skip "engine API harness not built: run make"
}

api_start() {
	local mode=$1 secs=$2
	shift 2
	: >"$XT_TMP/api.err"
	ip netns exec "$B" "$ENGAPI" "$mode" b0 "$secs" "$@" >"$XT_TMP/api.out" 2>"$XT_TMP/api.err" &
	API=$!
	XT_PIDS+=("$API")
	xt_wait_for 10 grep -q 'ready:' "$XT_TMP/api.err" ||
		{ cat "$XT_TMP/api.err" "$XT_TMP/api.out"; xt_fail "engapi $mode did not become ready"; }
}

api_send() {
	ip netns exec "$A" timeout 30 "$XPILE" run --iface a0 --mode txonly --cores 0 \
		--count "$1" --rate 20000 --dst-mac "$BMAC" --src-ip 198.18.2.3 \
		--dst-ip 198.18.2.1 --dst-port 9 --quiet >"$XT_TMP/tx.out" 2>&1 ||
		{ rc=$?; cat "$XT_TMP/tx.out"; xt_fail "txonly exited $rc"; }
}

api_wait() {
	local rc
	wait "$API"
	rc=$?
	return $rc
}

api_field() {
	grep '^run=' "$XT_TMP/api.out" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
