#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API's error model (libbpf's): xp_engine_create() without a callback is
# -EINVAL, on an interface that does not exist -ENODEV, each with its one line in the
# caller's error buffer; an opts struct with a field this build does not know set is
# refused (-EINVAL), never ignored. Nothing is attached.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require

eng_pair
ip netns exec "$B" "$ENGAPI" badopts b0 >"$XT_TMP/out" 2>"$XT_TMP/err" ||
	{ cat "$XT_TMP/out" "$XT_TMP/err"; xt_fail "the error model is not as documented"; }
cat "$XT_TMP/out"
grep -q 'nocallback=-22 err=give exactly one of' "$XT_TMP/out" || xt_fail "no callback: wrong error line"
grep -q "noiface=-19 err=interface xp-no-such-if not found" "$XT_TMP/out" || xt_fail "no such interface: wrong error line"
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
