#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bad input: every mistake ends with exit status != 0 and exactly one line on stderr
# that names the cause and the fix. Nothing is left attached afterwards.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_pair

expect() { # label, regexp the one line must match, engine arguments...
	local label=$1 re=$2 rc lines
	shift 2
	ip netns exec "$B" timeout 20 "$XPILE" run "$@" --duration 1 >"$XT_TMP/out" 2>"$XT_TMP/err"
	rc=$?
	lines=$(wc -l <"$XT_TMP/err")
	echo "$label: exit $rc: $(cat "$XT_TMP/err")"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || xt_fail "$label: exit status $rc"
	[ "$lines" = 1 ] || { cat "$XT_TMP/err"; xt_fail "$label: $lines lines on stderr, want 1"; }
	grep -Eq -e "$re" "$XT_TMP/err" || xt_fail "$label: message does not match /$re/"
	[ "${NOXDP:-1}" = 0 ] || eng_no_xdp "$B" b0 || xt_fail "$label: XDP program left attached"
}

expect "missing interface" "nosuch0 not found.*ip link" --iface nosuch0 --mode rxdrop
expect "queue out of range" "queue 5 is out of range.*(use|ethtool -L)" --iface b0:5 --mode rxdrop
expect "unsupported mode" "--mode bridge: expected rxdrop, txonly, l2fwd, fwd or router" --iface b0 --mode bridge
expect "zero-copy on veth" "does not support zero-copy; use --copy" --iface b0 --mode rxdrop --zero-copy
expect "fwd with one port" "fwd.*exactly two" --iface b0 --mode fwd
expect "bad ring size" "--rx-ring 1000: expected a power of two" --iface b0 --mode rxdrop --rx-ring 1000
expect "no interface" "--iface is required" --mode rxdrop
# Hugepages required but not enough reserved: ask for more than are free.
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
frames=$(( (free + 8) * 1024 ))
expect "no hugepages" "hugepages.*(vm.nr_hugepages|sysctl)" --iface b0 --mode rxdrop \
	--hugepages require --frames "$frames"

# Busy queue: a second engine on a queue a first one serves.
eng_start ONE "$B" --iface b0 --mode rxdrop --quiet
NOXDP=0 expect "busy queue" "queue 0 is busy.*(stop|pick another)" --iface b0 --mode rxdrop
grep -q '"type":"ready"' "$XT_TMP/ONE.json" && kill -0 "$ONE" || xt_fail "the busy queue's engine was disturbed"
eng_stop "$ONE" || xt_fail "first engine exited with status $?"
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"

# Output into a pipe that closes early (`| head -1`): the engine must still clean up.
ip netns exec "$B" timeout 20 "$XPILE" run --iface b0 --mode rxdrop --duration 1 --interval 0.05 \
	2>&1 | head -1 >/dev/null
eng_no_xdp "$B" b0 || xt_fail "a closed output pipe left the program attached"
echo ok
