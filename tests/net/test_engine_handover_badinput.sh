#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Handovers that must not happen, each refused with one line and a non-zero exit while
# the running engine keeps forwarding: different ports, different ring sizes, zero-copy
# asked of copy-mode sockets, another protocol version, another uid (the 0600 socket,
# then SO_PEERCRED on a socket opened to all), a stale socket file, no socket at all,
# --handover on a path a live engine listens on, --take-over with txonly. A stale file
# under --handover is replaced.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v setpriv >/dev/null || xt_skip "setpriv missing: apt-get install util-linux"

eng_wire_hosts 198.18.3 1500
SOCK=$XT_TMP/handover.sock
ARGS=(--iface e1 --iface e2 --mode fwd --cores 0 --interval 0.5)

# A socket file nothing listens on: --handover replaces it.
stale() { python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"; }
stale "$SOCK"
eng_start OLD "$E" "${ARGS[@]}" --handover "$SOCK"
ip netns exec "$H1" ping -c 3 -i 0.05 -W 2 198.18.3.2 >/dev/null || xt_fail "no ping through fwd"

# refused NAME WANT [ENV=VALUE...] -- ARGS...: exits non-zero, one line matching WANT.
refused() {
	local name=$1 want=$2 rc
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" ip netns exec "$E" "${PRE[@]}" "$XPILE" run "$@" >"$XT_TMP/$name.out" 2>"$XT_TMP/$name.err"
	rc=$?
	[ "$rc" != 0 ] || xt_fail "$name: exited 0"
	[ "$(wc -l <"$XT_TMP/$name.err")" = 1 ] || { cat "$XT_TMP/$name.err"; xt_fail "$name: not one line"; }
	grep -q -- "$want" "$XT_TMP/$name.err" || { cat "$XT_TMP/$name.err"; xt_fail "$name: the line does not say '$want'"; }
	kill -0 "$OLD" 2>/dev/null || xt_fail "$name: the running engine died"
	echo "$name: status $rc: $(cat "$XT_TMP/$name.err")"
}
PRE=()
refused ports "different ports or queues" -- --iface e2 --iface e1 --mode fwd --take-over "$SOCK"
refused rings "--rx-ring 1024 differs" -- "${ARGS[@]}" --rx-ring 1024 --take-over "$SOCK"
refused zerocopy "sockets run in copy mode" -- "${ARGS[@]}" --zero-copy --take-over "$SOCK"
refused version "protocol version" XPILE_HANDOVER_VERSION=99 -- "${ARGS[@]}" --take-over "$SOCK"
refused live "listens on" -- "${ARGS[@]}" --handover "$SOCK"
refused missing "no such socket" -- "${ARGS[@]}" --take-over "$XT_TMP/none.sock"
stale "$XT_TMP/stale.sock"
refused stale "nothing listens there" -- "${ARGS[@]}" --take-over "$XT_TMP/stale.sock"
refused txonly "rxdrop, l2fwd and fwd" -- --iface e1 --mode txonly --take-over "$SOCK"

# Another uid: the socket is 0600 in a directory only root may enter...
PRE=(setpriv --reuid 65534 --regid 65534 --clear-groups)
refused uid "permission denied" -- "${ARGS[@]}" --take-over "$SOCK"
# ...and opened to all, the uid of each end is checked (SO_PEERCRED) by both.
chmod 755 "$XT_TMP"
chmod 666 "$SOCK"
refused peercred "another uid" -- "${ARGS[@]}" --take-over "$SOCK"
xt_wait_for 3 grep -q 'runs under another uid' "$XT_TMP/OLD.err" ||
	{ cat "$XT_TMP/OLD.err"; xt_fail "the running engine did not refuse the other uid"; }
chmod 700 "$XT_TMP"
PRE=()

ip netns exec "$H1" ping -c 20 -i 0.02 -W 2 198.18.3.2 >"$XT_TMP/ping" 2>&1 ||
	{ cat "$XT_TMP/ping"; xt_fail "the running engine stopped forwarding"; }
eng_stop "$OLD" || { rc=$?; cat "$XT_TMP/OLD.err"; xt_fail "the engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/OLD.json" || xt_fail "ledger not clean"
[ ! -e "$SOCK" ] || xt_fail "the handover socket was left behind"

# Two successors at once: both queue on the socket while the engine is stopped; the
# first takes over, the other is told another successor won, and by whom.
eng_start OLD "$E" "${ARGS[@]}" --handover "$SOCK"
kill -STOP "$OLD"
for n in 1 2; do
	ip netns exec "$E" "$XPILE" run "${ARGS[@]}" --take-over "$SOCK" --duration 2 --json \
		>"$XT_TMP/succ$n.json" 2>"$XT_TMP/succ$n.err" &
	eval "S$n=$!"
	XT_PIDS+=($!)
done
queued() { ip netns exec "$E" ss -xlnH | awk -v p="$SOCK" '$5 == p { print $3 }'; }
xt_wait_for 5 bash -c "[ \"\$(ip netns exec $E ss -xlnH | awk -v p=$SOCK '\$5 == p { print \$3 }')\" = 2 ]" ||
	{ kill -CONT "$OLD"; xt_fail "the two successors did not both connect: $(queued) queued"; }
kill -CONT "$OLD"
wait "$S1"
r1=$?
wait "$S2"
r2=$?
wait "$OLD" || xt_fail "the old engine exited with status $? after the handover"
if [ $r1 = 0 ]; then W=$S1 L=2 rl=$r2; else W=$S2 L=1 rl=$r1; fi
[ $((r1 + r2)) != 0 ] && [ $((r1 * r2)) = 0 ] || xt_fail "two successors: exit $r1 and $r2, want one 0"
[ "$rl" = 1 ] && [ "$(cat "$XT_TMP/succ$L.err")" = "xpile: --take-over $SOCK: refused by the engine there (pid $OLD): another successor, pid $W, took it over first: take over from pid $W instead (its --handover socket)" ] ||
	xt_fail "the losing successor: exit $rl: $(cat "$XT_TMP/succ$L.err")"
grep -q '"role":"new"' "$XT_TMP/succ$((3 - L)).json" || xt_fail "the winner did not say it took over"
echo "two successors at once: $(cat "$XT_TMP/succ$L.err")"
echo "ok"
