#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Memory topology: `--channels 3 --ranks 2` reaches the layout (the ready line and JSON
# carry 3 x 2 and a stride whose lines are odd and prime to 6), and without the options
# the engine says what its probe looked at and found (on a VM: nothing, 4 x 1 assumed,
# with the options that would fix it). Bad values are one line and exit 2. The worker's
# core is the worker's alone.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_pair

gcd() { local a=$1 b=$2 t; while [ "$b" -ne 0 ]; do t=$((a % b)); a=$b; b=$t; done; echo "$a"; }

# A field of the ready line: a number, or a string (which may hold commas, never quotes).
field() {
	grep '"type":"ready"' "$1" | grep -Eo "\"$2\":(\"[^\"]*\"|[^,}]*)" | head -1 | cut -d: -f2- |
		tr -d '"'
}

run() { # output in $XT_TMP/out (stdout), $XT_TMP/err; engine arguments...
	ip netns exec "$B" timeout 20 "$XPILE" run --iface b0 --mode rxdrop --duration 0.3 \
		--frame-size 2048 "$@" >"$XT_TMP/out" 2>"$XT_TMP/err"
}

# Given: JSON.
run --channels 3 --ranks 2 --json || { cat "$XT_TMP/err"; xt_fail "--channels 3 --ranks 2 failed"; }
ch=$(field "$XT_TMP/out" channels)
rk=$(field "$XT_TMP/out" ranks)
stride=$(field "$XT_TMP/out" stride)
topo=$(field "$XT_TMP/out" topology)
echo "given: channels=$ch ranks=$rk stride=$stride topology='$topo'"
[ "$ch" = 3 ] && [ "$rk" = 2 ] || xt_fail "ready JSON says $ch x $rk, want 3 x 2"
[ "$topo" = "from --channels and --ranks" ] || xt_fail "topology note '$topo'"
[ $((stride % 64)) = 0 ] && [ "$stride" -ge 2048 ] || xt_fail "stride $stride"
lines=$((stride / 64))
[ "$(gcd $lines 12)" = 1 ] || xt_fail "stride $stride = $lines lines shares a factor with 2 x 3 x 2"
# Given: text. The ready line carries the same.
run --channels 3 --ranks 2 || { cat "$XT_TMP/err"; xt_fail "text run failed"; }
grep "ready:" "$XT_TMP/err"
grep -q "ready: .*interleaved layout (stride $stride, 3 channels x 2 ranks)" "$XT_TMP/err" ||
	xt_fail "text ready line lacks the stride and 3 x 2"

# Probed: the note names where it looked and the result; a default says how to fix it.
run --json || { cat "$XT_TMP/err"; xt_fail "plain run failed"; }
ch=$(field "$XT_TMP/out" channels)
rk=$(field "$XT_TMP/out" ranks)
pstride=$(field "$XT_TMP/out" stride)
topo=$(field "$XT_TMP/out" topology)
echo "probed: channels=$ch ranks=$rk stride=$pstride topology='$topo'"
case "$topo" in
*"/sys/devices/system/edac/mc: "*"-> $ch channel(s) ("*") x $rk rank(s) ("*) ;;
*) xt_fail "the probe's note '$topo' does not say where it looked and what it resolved" ;;
esac
[ "$(gcd $((pstride / 64)) $((2 * ch * rk)))" = 1 ] || xt_fail "probed stride $pstride not prime to $ch x $rk"
run || { cat "$XT_TMP/err"; xt_fail "plain text run failed"; }
grep "memory topology:" "$XT_TMP/err"
grep -q "xpile: memory topology: /sys/devices/system/edac/mc: " "$XT_TMP/err" ||
	xt_fail "text run does not print the probe's note"
if [ -d /sys/devices/system/edac/mc ] || ls /sys/firmware/dmi/entries/17-* >/dev/null 2>&1; then
	echo "(this machine exports memory topology; the fallback case is not checked here)"
else
	grep -q "no memory controllers.*no memory devices.*-> 4 channel(s) (default) x 1 rank(s) (default); give --channels and --ranks" \
		"$XT_TMP/err" || xt_fail "the fallback note does not say what is missing and how to fix it"
	[ "$ch" = 4 ] && [ "$rk" = 1 ] || xt_fail "fallback is $ch x $rk, want 4 x 1"
fi
# One option: the probe fills in the other and the note says which option won.
run --channels 3 --json || xt_fail "--channels alone failed"
topo=$(field "$XT_TMP/out" topology)
[ "$(field "$XT_TMP/out" channels)" = 3 ] || xt_fail "--channels 3 alone not used"
case "$topo" in *"; --channels 3 wins") ;; *) xt_fail "note '$topo' does not say --channels won" ;; esac

# Bad values: one line, exit 2.
for bad in "--channels 0" "--channels 65" "--ranks 17" "--ranks x"; do
	# shellcheck disable=SC2086
	run $bad
	rc=$?
	echo "$bad: exit $rc: $(cat "$XT_TMP/err")"
	[ $rc = 2 ] || xt_fail "$bad: exit $rc, want 2"
	[ "$(wc -l <"$XT_TMP/err")" = 1 ] || xt_fail "$bad: not one line"
	grep -q -- "--${bad:2:5}" "$XT_TMP/err" || xt_fail "$bad: the line does not name the option"
done

# CPU topology: the worker is pinned to its core and every other thread keeps off it
# where another core is allowed (a successor's start-up then never takes it).
if [ "$(nproc)" -ge 2 ]; then
	eng_start CPU "$B" --iface b0 --mode rxdrop --cores 0 --capture "$XT_TMP/cpu.pcapng"
	for t in /proc/"$CPU"/task/*; do
		echo "thread $(cat "$t/comm"): cores $(awk '/Cpus_allowed_list/ {print $2}' "$t/status")"
	done >"$XT_TMP/cpu.threads"
	cat "$XT_TMP/cpu.threads"
	eng_stop "$CPU" || xt_fail "engine with --cores 0: exit status $?"
	[ "$(grep -c 'cores 0$' "$XT_TMP/cpu.threads")" = 1 ] || xt_fail "want one thread (the worker) on core 0 alone"
	! grep -E 'cores (0,|0-)' "$XT_TMP/cpu.threads" || xt_fail "a control thread may run on the worker's core"
	[ "$(wc -l <"$XT_TMP/cpu.threads")" -ge 3 ] || xt_fail "want the control, capture and worker threads"
fi
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
