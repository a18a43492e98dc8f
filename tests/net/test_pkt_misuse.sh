#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The packet API's ownership rule, broken on purpose (tests/harness/misuse.c, a program
# on the public headers alone): a callback that leaks one frame and one that frees a
# frame twice are each caught by the frame ledger, which names the port, the queue and
# the callback (PORT:QUEUE), with the debug ledger (at once) and without it (at the next audit);
# xp_engine_run() fails (-EUCLEAN) and the program exits 1, with nothing left attached.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
M=$XT_BUILD/tests/harness/misuse
[ -x "$M" ] || xt_fail "$M not built: run make (it needs xpile/engine.h's functions in libxpile)"

eng_pair 198.18.43
for fault in leak double-free; do
	for dbg in ledger-debug ""; do
		label="$fault${dbg:+ with $dbg}"
		# The previous run's socket leaves in deferred work: b0's queue must be free.
		xt_wait_for 10 bash -c "[ -z \"\$(ip netns exec '$B' ss --xdp -a -H)\" ]" ||
			xt_fail "$label: the previous run's AF_XDP socket is still there"
		ip netns exec "$B" "$M" "$fault" b0 20 $dbg >"$XT_TMP/m.json" 2>"$XT_TMP/m.err" &
		pid=$!
		XT_PIDS+=("$pid")
		xt_wait_for 10 grep -q '"type":"ready"' "$XT_TMP/m.json" || { cat "$XT_TMP/m.err"; xt_fail "$label: not ready"; }
		# 40 pings from A to itself via b0: misuse bounces them, and breaks the rule at the 20th.
		ip netns exec "$A" ping -c 40 -i 0.02 -W 1 198.18.43.2 >/dev/null 2>&1
		grep -q "misuse: " "$XT_TMP/m.err" || { cat "$XT_TMP/m.err"; xt_fail "$label: the fault never fired"; }
		sleep 1 # a live audit (every 0.2 s)
		eng_stop "$pid"
		rc=$?
		report=$(grep -v '^misuse: \|^libxdp: \|^libbpf: ' "$XT_TMP/m.err")
		echo "$label: exit $rc; the ledger said:"
		echo "$report" | head -6 | sed 's/^/  /'
		[ "$rc" = 1 ] || xt_fail "$label: exit status $rc, not 1 (run did not fail)"
		# Named: the callback, and the port and queue as PORT:QUEUE.
		echo "$report" | grep 'misuse_burst' | grep -q 'b0:0' ||
			xt_fail "$label: no report names the callback misuse_burst and b0:0"
		case $fault in
		leak) echo "$report" | grep -q 'leaked\|unaccounted' || xt_fail "$label: the leak is not called one" ;;
		*) echo "$report" | grep -q 'twice' || xt_fail "$label: the double free is not called one" ;;
		esac
		eng_no_xdp "$B" b0 || xt_fail "$label: XDP left attached"
	done
done
echo ok
