#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Back-to-back starts on one queue (issue 15 item 23): the kernel frees a closed
# socket's queue a few milliseconds later, so the next bind may see EBUSY; the engine
# retries for up to a second. A queue that stays taken is refused in one line naming
# the engine that holds it.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_pair
ok=0
for i in $(seq 10); do
	if ip netns exec "$A" "$XPILE" run --iface a0 --mode txonly --count 100 --dst-mac "$BMAC" \
		--quiet >/dev/null 2>"$XT_TMP/tx$i.err"; then
		ok=$((ok + 1))
	else
		cat "$XT_TMP/tx$i.err" >&2
	fi
done
echo "$ok of 10 back-to-back txonly starts on a0:0 succeeded"
[ "$ok" = 10 ] || xt_fail "only $ok of 10 back-to-back starts succeeded"

# Really busy: refused after the retries, naming the holder and the fix.
eng_start HOLD "$A" --iface a0 --mode rxdrop
start=$SECONDS
ip netns exec "$A" "$XPILE" run --iface a0 --mode txonly --count 10 >/dev/null 2>"$XT_TMP/busy.err" &&
	xt_fail "a second engine bound a0:0 while another holds it"
[ $((SECONDS - start)) -le 5 ] || xt_fail "the busy refusal took $((SECONDS - start)) s"
[ "$(wc -l <"$XT_TMP/busy.err")" = 1 ] || { cat "$XT_TMP/busy.err"; xt_fail "want one line"; }
grep -q "queue 0 is busy: pid $HOLD (xpile" "$XT_TMP/busy.err" ||
	{ cat "$XT_TMP/busy.err"; xt_fail "the refusal does not name the holder"; }
eng_stop "$HOLD" || xt_fail "holder exited with status $?"
echo ok
