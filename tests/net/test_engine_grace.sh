#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Punt rule sets freed after a grace period (issue 25, section 1): A a0 -> b0 [B xpile
# rxdrop --host-tap b0 --punt 'udp dport 5555'], a host behind the TAP (a macvlan on
# xp-b0 with a MAC of its own: only the rule sends a frame up). While A sends datagrams
# to ports 5555 and 5556 without pause, CYCLES add/del pairs of other rules go through
# the control socket (one connection, CYCLES * 2 changes, past the old cap of 64): the
# engine's RSS stays flat (printed before and after, in KiB), `punt list` says the
# replaced sets were freed, and every datagram to 5555 reached the socket behind the
# TAP while none to 5556 did. Then rule 5556 added: J of each go up. Clean ledger.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"
[ -c /dev/net/tun ] || xt_skip "/dev/net/tun missing: modprobe tun"

CYCLES=${XT_GRACE_CYCLES:-200}
eng_pair
eng_host "$A" a0 198.18.126.1/24
NAME="xph25g$$"
SOCK=/run/xpile/$NAME.sock
VMAC=02:00:c6:12:7e:09
eng_start ENG "$B" --iface b0 --mode rxdrop --cores 0 --ledger-debug --name "$NAME" \
	--host-tap b0 --punt 'udp dport 5555'
ip -n "$B" link show xp-b0 >/dev/null 2>&1 || { cat "$XT_TMP/ENG.err"; xt_fail "no xp-b0 after the ready line"; }
eng_quiet "$B" xp-b0
ip -n "$B" link add xpv link xp-b0 address "$VMAC" type macvlan mode bridge ||
	xt_skip "macvlan on a TAP refused here"
eng_quiet "$B" xpv
ip -n "$B" addr add 198.18.126.9/24 dev xpv
ip -n "$B" link set xpv up
ip -n "$A" neigh replace 198.18.126.9 lladdr "$VMAC" dev a0
sleep 0.5

# Counts datagrams per port until 1 s passes without one (60 s at most).
listen() {
	ip netns exec "$B" timeout 70 python3 -c '
import select, socket, sys, time
socks = {}
for port in (5555, 5556):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("198.18.126.9", port))
    socks[s] = port
got = {5555: 0, 5556: 0}
print("bound", file=sys.stderr, flush=True)
end = time.monotonic() + 60
while time.monotonic() < end:
    r, _, _ = select.select(list(socks), [], [], 1.0 if sum(got.values()) else 0.2)
    if not r and sum(got.values()):
        break
    for s in r:
        s.recv(2048)
        got[socks[s]] += 1
print(got[5555], got[5556])
	' >"$XT_TMP/udp.out" 2>"$XT_TMP/udp.err" &
	U=$!
	XT_PIDS+=("$U")
	xt_wait_for 5 grep -q bound "$XT_TMP/udp.err" || { cat "$XT_TMP/udp.err"; xt_fail "the UDP listener did not start"; }
}
# Sends to 5555 and 5556 in turn, 1 ms apart, until $XT_TMP/halt appears (40 s at most);
# prints how many went to each.
send() {
	ip netns exec "$A" python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
end = time.monotonic() + 40
while not os.path.exists(sys.argv[1]) and time.monotonic() < end:
    for port in (5555, 5556):
        s.sendto(b"x", ("198.18.126.9", port))
    n += 1
    time.sleep(0.001)
print(n, n)' "$XT_TMP/halt" >"$XT_TMP/sent" &
	S=$!
	XT_PIDS+=("$S")
}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$ENG/status"; }
# churn N: N add/del pairs through the control socket, on one connection.
churn() {
	python3 - "$SOCK" "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5); f = s.makefile("r")
def ask(req):
    s.sendall((json.dumps(req) + "\n").encode()); r = json.loads(f.readline())
    assert r["ok"], r
    return r
base = ask({"cmd": "punt"})["rules"]
assert len(base) == 1 and "udp dport 5555" in base[0]["rule"], base
for i in range(int(sys.argv[2])):
    rule = "udp dport %d" % (7000 + i % 1000)
    r = ask({"cmd": "punt", "action": "add", "rule": rule})
    ids = [x["id"] for x in r["rules"] if x["rule"] == rule]
    assert len(ids) == 1 and len(r["rules"]) == 2, r
    r = ask({"cmd": "punt", "action": "del", "id": ids[0]})
    assert r["rules"] == base, r
PY
}

listen
send
sleep 0.5
churn 20 || xt_fail "warm-up churn failed"
sleep 1.2 # the control thread's tick frees what the last changes replaced
before=$(rss)
churn "$CYCLES" || xt_fail "churn of $CYCLES add/del pairs failed"
sleep 1.2
after=$(rss)
"$XPILE" ctl "$NAME" punt >"$XT_TMP/list" || xt_fail "punt list: $(cat "$XT_TMP/list")"
touch "$XT_TMP/halt"
wait "$S"
wait "$U"
read -r sent5 sent6 <"$XT_TMP/sent" || xt_fail "the sender said nothing"
read -r got5 got6 <"$XT_TMP/udp.out" || { cat "$XT_TMP/udp.err"; xt_fail "the UDP listener said nothing"; }
changes=$((2 * (20 + CYCLES)))
echo "engine RSS before $CYCLES add/del pairs: $before KiB, after: $after KiB ($((after - before)) KiB)"
jq -e --argjson c "$changes" '.changes == $c and .retired <= 1 and .freed >= $c - 1 and (.rules | length) == 1' \
	"$XT_TMP/list" >/dev/null || xt_fail "punt list after $changes changes (want them freed): $(cat "$XT_TMP/list")"
[ "$got5" = "$sent5" ] && [ "$got6" = 0 ] ||
	xt_fail "during the churn: $got5 of $sent5 datagrams to 5555 went up (want all), $got6 of $sent6 to 5556 (want 0)"
# ASan's quarantine keeps freed memory: the bound is the plain build's.
case $XPILE in
*/asan/*) ;;
*) [ $((after - before)) -lt 256 ] || xt_fail "RSS grew by $((after - before)) KiB over $CYCLES add/del pairs (bound 256)" ;;
esac
echo "punt churn: $changes changes while $sent5 + $sent6 datagrams flowed, all $got5 to 5555 went up, none to 5556; $(jq .freed "$XT_TMP/list") sets freed"

# The rules still change right: 5556 added, J of each go up.
J=6
"$XPILE" ctl "$NAME" punt action=add "rule=udp dport 5556" >"$XT_TMP/padd" || xt_fail "punt add: $(cat "$XT_TMP/padd")"
listen
# shellcheck disable=SC2016 # expanded by the inner bash
ip netns exec "$A" bash -c 'for ((i = 0; i < $1; i++)); do printf x >/dev/udp/198.18.126.9/5555; printf y >/dev/udp/198.18.126.9/5556; done' _ "$J" 2>/dev/null
wait "$U"
read -r g5 g6 <"$XT_TMP/udp.out" || xt_fail "the UDP listener said nothing"
[ "$g5" = "$J" ] && [ "$g6" = "$J" ] || xt_fail "after punt add 5556: $g5 to 5555, $g6 to 5556 went up, want $J each"
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
pdrop=$(eng_sum "$XT_TMP/ENG.json" punt_dropped host_tap)
[ "$pdrop" = 0 ] || xt_fail "punt_dropped $pdrop"
echo ok
