#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --punt RULE (issue 11, section 1): h1 <-> [e1 xpile fwd e2] <-> h2 with --host-tap e1
# --punt 'udp dport 5555'. Of h1's datagrams to h2, exactly the K to port 5555 reach a
# packet socket on the TAP (tcpdump -i xp-e1) and none of them reaches h2; the M to port
# 5556 are forwarded to h2 as before. Clean ledger.
# Then rxdrop on e1 alone with the same rule: h1 sends K datagrams to port 5555 and M to
# 5556 for 198.18.3.9, a second host behind the TAP (a macvlan on xp-e1 with a MAC of
# its own, so only the rule, not the port's MAC, sends a frame up). Exactly K reach a
# UDP socket bound there, none to 5556 does; the engine's counters say K punted and M
# received and dropped as rxdrop drops everything; clean ledger.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v tcpdump >/dev/null || xt_skip "tcpdump missing: apt-get install tcpdump"
[ -c /dev/net/tun ] || xt_skip "/dev/net/tun missing: modprobe tun"

eng_wire_hosts 198.18.3 1500
K=7 M=5
eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug \
	--host-tap e1 --punt 'udp dport 5555'
eng_quiet "$E" xp-e1
sleep 0.5 # an engine started again on the same veth may miss its first ~150 ms
ip netns exec "$H1" ping -c 1 -W 2 198.18.3.2 >/dev/null 2>&1 || xt_fail "no ping through fwd (ARP)"

ip netns exec "$E" timeout 20 tcpdump -l -nn -i xp-e1 'udp' >"$XT_TMP/tap.out" 2>"$XT_TMP/tap.err" &
T1=$!
ip netns exec "$H2" timeout 20 tcpdump -l -nn -i h2 'udp' >"$XT_TMP/h2.out" 2>"$XT_TMP/h2.err" &
T2=$!
XT_PIDS+=("$T1" "$T2")
xt_wait_for 5 grep -q listening "$XT_TMP/tap.err" || xt_fail "tcpdump on xp-e1 did not start"
xt_wait_for 5 grep -q listening "$XT_TMP/h2.err" || xt_fail "tcpdump on h2 did not start"
# shellcheck disable=SC2016 # expanded by the inner bash
ip netns exec "$H1" bash -c 'for ((i = 0; i < $2; i++)); do printf x >/dev/udp/198.18.3.2/5555; printf y >/dev/udp/198.18.3.2/5556; done
	for ((i = $2; i < $1; i++)); do printf x >/dev/udp/198.18.3.2/5555; done' _ "$K" "$M" 2>/dev/null
sleep 0.5
up=$(grep -c '\.5555: UDP' "$XT_TMP/tap.out")
up_other=$(grep -c 'UDP' "$XT_TMP/tap.out")
fwd=$(grep -c '\.5556: UDP' "$XT_TMP/h2.out")
fwd_punted=$(grep -c '\.5555: UDP' "$XT_TMP/h2.out")
kill "$T1" "$T2" 2>/dev/null
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
[ "$up" = "$K" ] && [ "$up_other" = "$K" ] ||
	{ cat "$XT_TMP/tap.out"; xt_fail "the TAP saw $up datagrams to 5555 ($up_other UDP in all), want $K"; }
[ "$fwd" = "$M" ] && [ "$fwd_punted" = 0 ] ||
	{ cat "$XT_TMP/h2.out"; xt_fail "h2 got $fwd to 5556 (want $M) and $fwd_punted to 5555 (want 0)"; }
echo "punt: $K datagrams matching 'udp dport 5555' went up to xp-e1 only, the $M others were forwarded to h2"

# rxdrop: a real socket on the TAP side. h1 knows the macvlan's MAC (no ARP, so the
# counts below are exact).
K=9 M=6
VMAC=02:00:c6:12:03:09
# RXD, not ENG again: eng_start waits for the ready line in $XT_TMP/NAME.json, and the fwd
# engine's file still holds one until the new engine opens it.
eng_start RXD "$E" --iface e1 --mode rxdrop --cores 0 --ledger-debug \
	--host-tap e1 --punt 'udp dport 5555' --name "xph25u$$"
ip -n "$E" link show xp-e1 >/dev/null 2>&1 || { cat "$XT_TMP/RXD.err"; xt_fail "rxdrop: no xp-e1 after the ready line"; }
eng_quiet "$E" xp-e1
ip -n "$E" link add xpv link xp-e1 address "$VMAC" type macvlan mode bridge ||
	xt_skip "macvlan on a TAP refused here"
eng_quiet "$E" xpv
ip -n "$E" addr add 198.18.3.9/24 dev xpv
ip -n "$E" link set xpv up
ip -n "$H1" neigh replace 198.18.3.9 lladdr "$VMAC" dev h1
sleep 0.5
# Counts datagrams per port until 1 s passes without one (10 s at most).
listen() {
	ip netns exec "$E" timeout 15 python3 -c '
import select, socket, sys, time
socks = {}
for port in (5555, 5556):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.18.3.9", port))
    socks[s] = port
got = {5555: 0, 5556: 0}
print("bound", file=sys.stderr, flush=True)
end = time.monotonic() + 10
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
listen
# shellcheck disable=SC2016 # expanded by the inner bash
ip netns exec "$H1" bash -c 'for ((i = 0; i < $2; i++)); do printf x >/dev/udp/198.18.3.9/5555; printf y >/dev/udp/198.18.3.9/5556; done
	for ((i = $2; i < $1; i++)); do printf x >/dev/udp/198.18.3.9/5555; done' _ "$K" "$M" 2>/dev/null
wait "$U"
read -r sock sock_other <"$XT_TMP/udp.out" || { cat "$XT_TMP/udp.err"; xt_fail "the UDP listener said nothing"; }
# The rules changed while running (the control socket): 5556 added, 5555 deleted;
# then J datagrams to each port: only the 5556 ones go up.
J=6
U5=$("$XPILE" ctl "xph25u$$" punt) || xt_fail "punt list: $U5"
[ "$(jq '.rules | length' <<<"$U5")" = 1 ] || xt_fail "punt list: $U5"
old=$(jq '.rules[0].id' <<<"$U5")
"$XPILE" ctl "xph25u$$" punt action=add "rule=udp dport 5556" >"$XT_TMP/padd" || xt_fail "punt add: $(cat "$XT_TMP/padd")"
"$XPILE" ctl "xph25u$$" punt action=del id="$old" >"$XT_TMP/pdel" || xt_fail "punt del: $(cat "$XT_TMP/pdel")"
jq -e '.rules | length == 1 and .[0].rule == "udp dport 5556"' "$XT_TMP/pdel" >/dev/null || xt_fail "punt after del: $(cat "$XT_TMP/pdel")"
"$XPILE" ctl "xph25u$$" punt action=add "rule=udp dport nope" >"$XT_TMP/pbad" && xt_fail "a bad rule was added"
"$XPILE" ctl "xph25u$$" punt action=del id=999 >"$XT_TMP/pbad" && xt_fail "rule 999 deleted"
listen
# shellcheck disable=SC2016 # expanded by the inner bash
ip netns exec "$H1" bash -c 'for ((i = 0; i < $1; i++)); do printf x >/dev/udp/198.18.3.9/5555; printf y >/dev/udp/198.18.3.9/5556; done' _ "$J" 2>/dev/null
wait "$U"
read -r live live_other <"$XT_TMP/udp.out" || { cat "$XT_TMP/udp.err"; xt_fail "the UDP listener said nothing"; }
[ "$live" = 0 ] && [ "$live_other" = "$J" ] ||
	xt_fail "after punt add 5556 / del 5555: the socket got $live to 5555 (want 0), $live_other to 5556 (want $J)"
echo "punt add/del while running: then $J to 5556 went up, none of $J to 5555"
eng_stop "$RXD" || { rc=$?; cat "$XT_TMP/RXD.err"; xt_fail "rxdrop engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/RXD.json" || xt_fail "rxdrop: ledger not clean"
rx=$(eng_sum "$XT_TMP/RXD.json" rx_packets)
punted=$(eng_sum "$XT_TMP/RXD.json" punted host_tap)
pdrop=$(eng_sum "$XT_TMP/RXD.json" punt_dropped host_tap)
[ "$sock" = "$K" ] && [ "$sock_other" = 0 ] ||
	xt_fail "rxdrop: the socket behind the TAP got $sock datagrams to 5555 (want $K) and $sock_other to 5556 (want 0)"
[ "$punted" = $((K + J)) ] && [ "$pdrop" = 0 ] && [ $((rx - punted)) = $((M + J)) ] ||
	{ grep -E '"type":"(summary|host_tap)"' "$XT_TMP/RXD.json"; xt_fail "rxdrop: received $rx, punted $punted (want $((K + J))), punt_dropped $pdrop, dropped $((rx - punted)) (want $((M + J)))"; }
echo "punt in rxdrop: $K of $rx datagrams matched 'udp dport 5555' and reached a UDP socket behind xp-e1, the $M others were dropped"
echo ok
