#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine's control socket (issue 25, section 1): h1 <-> [e1 xpile fwd e2] <-> h2.
# The socket is /run/xpile/NAME.sock, mode 0600; K UDP datagrams through the wire show
# in `stats` (queue counters, the kernel's XDP_STATISTICS, the steer verdicts) exactly
# as in the engine's own summary at exit; `workers` counts busy cycles, packets, sleeps
# and wake-ups; `ledger` is the live audit (every frame in one place); `alloc` the pile;
# `log` sets the level. Bad input is one error line and the connection goes on (or is
# closed: a line over 4096 bytes); a peer uid not allowed is refused by SO_PEERCRED;
# a client that never reads nor speaks stalls nothing; a second engine of the same name
# is refused; the socket goes at exit.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"

NAME="xph25c$$"
SOCK=/run/xpile/$NAME.sock
ctl() { "$XPILE" ctl "$NAME" "$@"; }

eng_wire_hosts 198.18.25 1500
eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug --name "$NAME"
[ -S "$SOCK" ] || xt_fail "no control socket at $SOCK"
[ "$(stat -c %a "$SOCK")" = 600 ] || xt_fail "control socket mode $(stat -c %a "$SOCK"), want 600"
ctl info >"$XT_TMP/info" || { cat "$XT_TMP/info"; xt_fail "info failed"; }
jq -e --arg n "$NAME" '.ok and .engine == $n and .mode == "fwd" and .sockets == 2 and .workers == 1' \
	"$XT_TMP/info" >/dev/null || { cat "$XT_TMP/info"; xt_fail "info reply wrong"; }

# Traffic the test can count: K datagrams h1 -> h2 (h1 knows h2's MAC: no ARP).
H2MAC=$(ip -n "$H2" -o link show h2 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$H1" neigh replace 198.18.25.2 lladdr "$H2MAC" dev h1
K=300
ip netns exec "$H1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"x" * 64, ("198.18.25.2", 9))' "$K"
sleep 1.2 # a rate sample (1 s) with the traffic in it, and nothing after
ctl stats >"$XT_TMP/stats" || { cat "$XT_TMP/stats"; xt_fail "stats failed"; }
rx=$(jq '[.queues[] | select(.port == "e1") | .rx_packets] | add' "$XT_TMP/stats")
tx=$(jq '[.queues[] | select(.port == "e2") | .tx_packets] | add' "$XT_TMP/stats")
xsk=$(jq '.ports[] | select(.name == "e1") | .verdicts.xsk.packets' "$XT_TMP/stats")
[ "$rx" -ge "$K" ] && [ "$tx" -ge "$K" ] || { cat "$XT_TMP/stats"; xt_fail "stats: e1 rx $rx, e2 tx $tx, want >= $K"; }
[ "$xsk" -ge "$K" ] || xt_fail "stats: steer verdict xsk on e1 $xsk, want >= $K"
jq -e '.queues[0].kernel | has("rx_ring_full") and has("rx_fill_ring_empty_descs")' "$XT_TMP/stats" >/dev/null ||
	xt_fail "stats: no XDP_STATISTICS"

ctl workers >"$XT_TMP/workers" || xt_fail "workers failed"
jq -e --argjson k "$K" '.workers | length == 1 and (.[0] | .packets >= $k and .busy_cycles > 0
	and .idle_cycles > 0 and .cycles_per_packet > 0 and .sleeps > 0 and .wakeups > 0
	and .busy_pct > 0 and .busy_pct < 100 and (.queues | length) == 2)' "$XT_TMP/workers" >/dev/null ||
	{ cat "$XT_TMP/workers"; xt_fail "workers reply wrong"; }

sleep 1.1 # a live audit (every --interval) has run
ctl ledger >"$XT_TMP/ledger" || xt_fail "ledger failed"
jq -e '.ledger_ok and (.umems[0] | .audits > 0 and .ok and .total == .frames and .frames > 0)' \
	"$XT_TMP/ledger" >/dev/null || { cat "$XT_TMP/ledger"; xt_fail "ledger reply wrong"; }
ctl alloc >"$XT_TMP/alloc" || xt_fail "alloc failed"
jq -e '.umems[0] | .frames > 0 and .pile + .cached <= .frames and .caches.refills > 0' "$XT_TMP/alloc" >/dev/null ||
	{ cat "$XT_TMP/alloc"; xt_fail "alloc reply wrong"; }
ctl log level=debug >/dev/null || xt_fail "log level=debug refused"
ctl log level=error >/dev/null || xt_fail "log level=error refused"
if ctl log level=loud >"$XT_TMP/bad"; then xt_fail "log level=loud accepted"; fi
jq -e '.ok == false and (.error | test("error.*info.*debug"))' "$XT_TMP/bad" >/dev/null || xt_fail "bad level: $(cat "$XT_TMP/bad")"
if ctl nosuch >"$XT_TMP/bad"; then xt_fail "unknown command accepted"; fi
grep -q 'unknown cmd' "$XT_TMP/bad" || xt_fail "unknown command: $(cat "$XT_TMP/bad")"

# The protocol on the wire: bad lines get an error and the connection goes on; a line
# over the bound is refused and closed; a silent client and one that never reads stall
# nothing.
python3 - "$SOCK" <<'PY' || xt_fail "line protocol"
import socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(3); return s
def line(f): return f.readline()
s = conn(); f = s.makefile("r")
s.sendall(b'{"cmd":\n[1]\n\n{"cmd":"info"}\n')
r = [line(f) for _ in range(4)]
assert '"malformed JSON' in r[0] and '"ok":false' in r[0], r
assert 'one JSON object' in r[1], r
assert 'empty request' in r[2], r
assert '"ok":true' in r[3], r
silent = conn()  # never says anything
greedy = conn()  # asks and never reads
try:  # loses its connection once its replies find no room: the engine never waits
    greedy.sendall(b'{"cmd":"stats"}\n' * 20000)
except (BrokenPipeError, ConnectionResetError):
    pass
t = time.monotonic(); s.sendall(b'{"cmd":"stats"}\n'); assert '"ok":true' in line(f)
assert time.monotonic() - t < 1, "stats slow while other clients stall"
big = conn(); big.sendall(b'{"cmd":"' + b'x' * 5000 + b'"}\n')
r = big.makefile("r").readline()
assert 'longer than 4096' in r, r
assert big.recv(1) == b"", "connection not closed after a long line"
PY

# SO_PEERCRED: uid 65534, through a socket file it may open (--ctl in a directory it
# reaches), is refused; with --ctl-allow-uid 65534 it is served. And a second engine
# under a name in use is refused with one line (on other ports: x1, x2).
xt_veth "$E" x1 "$H1" x1h
xt_veth "$E" x2 "$H2" x2h
eng_quiet "$E" x1
eng_quiet "$E" x2
PDIR=$(mktemp -d /tmp/xph25c.XXXXXX)
xt_on_exit rm -rf "$PDIR"
chmod 755 "$PDIR"
for allow in no yes; do
	args=(--iface x1 --mode rxdrop --cores 0 --ctl "$PDIR/p.sock")
	[ $allow = yes ] && args+=(--ctl-allow-uid 65534)
	eng_start P$allow "$E" "${args[@]}"
	chmod 666 "$PDIR/p.sock"
	if setpriv --reuid 65534 --regid 65534 --clear-groups "$XPILE" ctl "$PDIR/p.sock" info >"$XT_TMP/nobody" 2>&1; then
		[ $allow = yes ] || xt_fail "uid 65534 was served: $(cat "$XT_TMP/nobody")"
	else
		[ $allow = no ] || xt_fail "uid 65534 allowed, yet refused: $(cat "$XT_TMP/nobody")"
		grep -q 'peer uid 65534 gid 65534 is not allowed' "$XT_TMP/nobody" || xt_fail "refusal: $(cat "$XT_TMP/nobody")"
	fi
	if [ $allow = no ]; then
		ip netns exec "$E" "$XPILE" run --iface x2 --mode rxdrop --name "$NAME" --duration 1 >/dev/null 2>"$XT_TMP/dup" &&
			xt_fail "a second engine took the name"
		grep -q 'another engine serves it' "$XT_TMP/dup" || xt_fail "second engine: $(cat "$XT_TMP/dup")"
		ctl info >/dev/null || xt_fail "the first engine's socket stopped answering"
	fi
	eng_stop "$(eval echo "\$P$allow")" || xt_fail "engine on x1 failed"
done

ctl stats >"$XT_TMP/stats2" || xt_fail "stats failed"
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
[ ! -e "$SOCK" ] || xt_fail "control socket left at $SOCK"
# The control socket's counters are the engine's: its summary at exit says the same.
for pq in e1 e2; do
	a=$(jq --arg p $pq '[.queues[] | select(.port == $p) | .rx_packets, .tx_packets] | join(" ")' -r "$XT_TMP/stats2")
	b=$(grep '"type":"summary"' "$XT_TMP/ENG.json" | jq -r --arg p $pq 'select(.port == $p) | "\(.rx_packets) \(.tx_packets)"')
	[ "$a" = "$b" ] || xt_fail "$pq: control socket rx/tx $a, engine summary $b"
done
echo "control socket: $K datagrams seen as rx $rx tx $tx, workers/ledger/alloc/log answered, bad input refused"
echo "ok"
