#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --punt RULE (issue 11, section 1): h1 <-> [e1 xpile fwd e2] <-> h2 with --host-tap e1
# --punt 'udp dport 5555'. Of h1's datagrams to h2, exactly the K to port 5555 reach a
# packet socket on the TAP (tcpdump -i xp-e1) and none of them reaches h2; the M to port
# 5556 are forwarded to h2 as before. Clean ledger.
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
echo ok
