#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine follows the wiring plan of every port, not only the first one's: two ports
# wired differently get their own queue -> core maps; a port without a plan puts a
# queue where the other port's plan puts it (fwd's pairs stay on one worker); fwd
# refuses two plans that would split a pair, in one line naming both.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
[ "$(nproc)" -ge 2 ] || xt_skip "needs 2 CPUs"

eng_ns E eng
eng_ns G peer
eng_veth "$E" e1 "$G" g1 2
eng_veth "$E" e2 "$G" g2 2
# shellcheck disable=SC2086 # "NS IF" pairs split into two arguments
for p in "$E e1" "$E e2" "$G g1" "$G g2"; do eng_quiet $p; done
W() { ip netns exec "$E" "$XT_BUILD/xpile-loader" wire "$@" >/dev/null 2>&1 || xt_fail "wire $* failed"; }
sockets() { # VAR expected "port queue core"...
	local f="$XT_TMP/$1.json" s port q core
	shift
	[ "$(grep -c '"type":"socket"' "$f")" = $# ] || xt_fail "expected $# sockets: $(grep '"type":"socket"' "$f")"
	for s in "$@"; do
		read -r port q core <<<"$s"
		grep '"type":"socket"' "$f" | grep -q "\"port\":\"$port\",\"queue\":$q,\"core\":$core" ||
			xt_fail "plan not followed: no $port queue $q on core $core in $(grep '"type":"socket"' "$f")"
	done
}

# Crossed on e1, straight on e2.
W e1 --queues 0,1 --cores 1,0
W e2 --queues 0,1 --cores 0,1
eng_start RX "$E" --iface e1:0-1 --iface e2:0-1 --mode rxdrop --cores 0,1
sockets RX "e1 0 1" "e1 1 0" "e2 0 0" "e2 1 1"
eng_stop "$RX" || { rc=$?; cat "$XT_TMP/RX.err"; xt_fail "rxdrop exited with status $rc"; }

# fwd moves queue N of e1 to queue N of e2 on one worker: these plans would split it.
ip netns exec "$E" timeout 10 "$XPILE" run --iface e1:0-1 --iface e2:0-1 --mode fwd --cores 0,1 \
	>"$XT_TMP/fwd.out" 2>"$XT_TMP/fwd.err" && xt_fail "fwd ran with plans that split its pairs"
[ "$(wc -l <"$XT_TMP/fwd.err")" = 1 ] || xt_fail "fwd said more than one line: $(cat "$XT_TMP/fwd.err")"
grep -q "fwd moves queue 0 between e1 and e2 on one core, but their wiring plans put it on cores 1 and 0" \
	"$XT_TMP/fwd.err" || xt_fail "fwd refusal: $(cat "$XT_TMP/fwd.err")"

# Only e1 wired: e2's queues follow e1's plan, as the pairs need.
ip netns exec "$E" "$XT_BUILD/xpile-loader" unload e2 >/dev/null 2>&1 # removes e2's plan
eng_start FWD "$E" --iface e1:0-1 --iface e2:0-1 --mode fwd --cores 0,1
sockets FWD "e1 0 1" "e1 1 0" "e2 0 1" "e2 1 0"
eng_stop "$FWD" || { rc=$?; cat "$XT_TMP/FWD.err"; xt_fail "fwd exited with status $rc"; }

# No plan at all: --cores in turn.
ip netns exec "$E" "$XT_BUILD/xpile-loader" unload e1 >/dev/null 2>&1
eng_start RX2 "$E" --iface e1:0-1 --iface e2:0-1 --mode rxdrop --cores 0,1
sockets RX2 "e1 0 0" "e1 1 1" "e2 0 0" "e2 1 1"
eng_stop "$RX2" || xt_fail "rxdrop exited with status $?"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
echo ok
