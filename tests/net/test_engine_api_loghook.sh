#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API's log hook: a program built on the public headers and libxpile.so
# that installs xp_set_log_fn() sees the engine's own lines through it (its ready line
# at info, a create's failure at error, the library's lower layers' as before), and
# none of them on stderr as "xpile: ..."; without a hook the engine's lines still go
# to stderr, and `xpile run` prints them as it always did.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require

K=${K:-2000}
eng_pair 198.18.2
api_start loghook 3
api_send "$K"
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "engapi exited $rc"; }
cat "$XT_TMP/api.out"
[ "$(api_field run)" = 0 ] || { cat "$XT_TMP/api.err"; xt_fail "xp_engine_run returned $(api_field run)"; }
[ "$(api_field rx)" = "$K" ] || xt_fail "the callback counted $(api_field rx) of $K packets"
grep '^badcreate=' "$XT_TMP/api.out" | grep -q '=-19$' || xt_fail "create on no such interface did not fail with -ENODEV"
# XP_LOG_ERR is 0, XP_LOG_INFO 2 (xpile/log.h).
grep -q '^hook\[0\]: .*xp-no-such-if' "$XT_TMP/api.err" ||
	{ cat "$XT_TMP/api.err"; xt_fail "the create's error did not reach the hook"; }
grep -q '^hook\[2\]: ready: ' "$XT_TMP/api.err" ||
	{ cat "$XT_TMP/api.err"; xt_fail "the engine's ready line did not reach the hook"; }
n=$(grep -c '^hook\[' "$XT_TMP/api.err")
if grep -q '^xpile: ' "$XT_TMP/api.err"; then
	cat "$XT_TMP/api.err"
	xt_fail "engine lines went to stderr past the hook"
fi
cp "$XT_TMP/api.err" "$XT_TMP/hooked.err"

# No hook: the same lines on stderr as "xpile: ...".
api_start burst 1
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "engapi burst exited $rc"; }
grep -q '^xpile: ready: ' "$XT_TMP/api.err" || { cat "$XT_TMP/api.err"; xt_fail "without a hook, no ready line on stderr"; }
grep -q '^hook\[' "$XT_TMP/api.err" && xt_fail "a hook line without a hook"

# xpile run: its own reporter, unchanged.
ip netns exec "$B" "$XPILE" run --iface b0 --mode rxdrop --duration 0.3 --quiet \
	>"$XT_TMP/run.out" 2>"$XT_TMP/run.err" || { rc=$?; cat "$XT_TMP/run.err"; xt_fail "xpile run exited $rc"; }
grep -q '^xpile: ready: ' "$XT_TMP/run.err" || { cat "$XT_TMP/run.err"; xt_fail "xpile run: no 'xpile: ready:' line"; }
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo "ok: $n lines through the hook"
