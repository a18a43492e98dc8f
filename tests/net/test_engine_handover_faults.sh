#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Handover faults under a ping every 10 ms through fwd. The new engine dies (SIGKILL) at
# each step of the protocol, refuses the state or stalls past the old one's timeout: the
# old engine resumes with everything and not one ping is lost, then hands over for real.
# The old engine dies mid-way (after its offer, after its state): the new one exits
# non-zero with one line, the queues fall back to the kernel (which answers a ping),
# and a fresh engine starts on them at once (bind retried while the kernel lets go).
# The new engine dies right after its OK: exactly one of the two outcomes.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/handover.sh
eng_require

eng_wire_hosts 198.18.2 1500
ip -n "$E" addr add 198.18.2.3/24 dev e1 # answers only once the kernel gets e1's packets
SOCK=$XT_TMP/handover.sock
ARGS=(--iface e1 --iface e2 --mode fwd --cores 0 --interval 0.5 --handover "$SOCK")

eng_start OLD "$E" "${ARGS[@]}"
ip netns exec "$H1" ping -c 3 -i 0.05 -W 2 198.18.2.2 >/dev/null || xt_fail "no ping through fwd"
ip netns exec "$H1" ping -c 800 -i 0.01 -W 3 198.18.2.2 >"$XT_TMP/ping" 2>&1 &
PING=$!

# The old engine said N handovers failed.
old_said() { [ "$(grep -c 'handover to pid' "$XT_TMP/OLD.err")" -ge "$1" ]; }

n=0
for f in new-hello new-offer new-ready new-state new-refuse new-stall; do
	XPILE_HANDOVER_FAULT=$f ip netns exec "$E" "$XPILE" run "${ARGS[@]}" --take-over "$SOCK" \
		--json >"$XT_TMP/$f.json" 2>"$XT_TMP/$f.err"
	rc=$?
	[ "$rc" != 0 ] || xt_fail "$f: the new engine exited 0"
	kill -0 "$OLD" 2>/dev/null || { cat "$XT_TMP/OLD.err"; xt_fail "$f: the old engine died"; }
	n=$((n + 1))
	xt_wait_for 3 old_said "$n" ||
		{ cat "$XT_TMP/OLD.err"; xt_fail "$f: the old engine did not say the handover failed"; }
	echo "$f: new exited $rc; old: $(grep 'handover to pid' "$XT_TMP/OLD.err" | tail -1)"
done
ho_next NEW "$OLD" "$E" "${ARGS[@]}" --take-over "$SOCK"
wait "$PING"
grep -q ' 800 received' "$XT_TMP/ping" || { tail -3 "$XT_TMP/ping"; xt_fail "pings lost while handovers failed"; }
eng_stop "$NEW" || { rc=$?; cat "$XT_TMP/NEW.err"; xt_fail "the new engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/NEW.json" || { grep ledger "$XT_TMP/NEW.json" | tail -3; xt_fail "ledger not clean after the failed handovers"; }

# The old engine dies mid-way.
k=0
for f in old-offer old-state; do
	k=$((k + 1))
	XPILE_HANDOVER_FAULT=$f eng_start "O$k" "$E" "${ARGS[@]}"
	pid=$(eval echo "\$O$k")
	ip netns exec "$H1" ping -c 3 -i 0.05 -W 2 198.18.2.2 >/dev/null || xt_fail "$f: no ping through fwd"
	ip netns exec "$E" "$XPILE" run "${ARGS[@]}" --take-over "$SOCK" --json \
		>"$XT_TMP/N$k.json" 2>"$XT_TMP/N$k.err"
	rc=$?
	wait "$pid" 2>/dev/null
	[ "$rc" != 0 ] || xt_fail "$f: the new engine exited 0 though the old one died"
	[ "$(wc -l <"$XT_TMP/N$k.err")" = 1 ] || { cat "$XT_TMP/N$k.err"; xt_fail "$f: the new engine said more than one line"; }
	echo "$f: new exited $rc: $(cat "$XT_TMP/N$k.err")"
	# Nothing holds the sockets: the program passes e1's packets to the kernel.
	xt_wait_for 3 ip netns exec "$H1" ping -c 1 -W 1 198.18.2.3 ||
		xt_fail "$f: the kernel did not get the queue back"
	rm -f "$SOCK"
	eng_start "F$k" "$E" "${ARGS[@]}"
	ip netns exec "$H1" ping -c 20 -i 0.02 -W 2 198.18.2.2 >"$XT_TMP/ping" 2>&1 ||
		{ cat "$XT_TMP/ping"; xt_fail "$f: a fresh engine does not forward"; }
	eng_stop "$(eval echo "\$F$k")" || xt_fail "$f: the fresh engine exited with status $?"
done

# The new engine dies right after its OK: the old one either committed first (it exits
# 0 and the kernel gets the queue) or saw it gone (its COMMIT fails: it resumes). Either
# way someone serves e1, and never both.
eng_start O9 "$E" "${ARGS[@]}"
XPILE_HANDOVER_FAULT=new-ok ip netns exec "$E" "$XPILE" run "${ARGS[@]}" --take-over "$SOCK" \
	--json >"$XT_TMP/N9.json" 2>"$XT_TMP/N9.err"
sleep 0.5
if kill -0 "$O9" 2>/dev/null; then
	grep -q 'gone before the commit' "$XT_TMP/O9.err" || { cat "$XT_TMP/O9.err"; xt_fail "new-ok: the old engine runs on without saying why"; }
	ip netns exec "$H1" ping -c 10 -i 0.02 -W 2 198.18.2.2 >/dev/null || xt_fail "new-ok: the old engine resumed but does not forward"
	eng_stop "$O9" || xt_fail "new-ok: the old engine exited with status $?"
	echo "new-ok: the old engine saw the new one gone before its commit and resumed"
else
	wait "$O9" || xt_fail "new-ok: the old engine committed but exited with status $?"
	xt_wait_for 3 ip netns exec "$H1" ping -c 1 -W 1 198.18.2.3 || xt_fail "new-ok: the kernel did not get the queue back"
	echo "new-ok: the old engine committed and exited 0; the kernel serves the queue"
fi
echo "ok"
