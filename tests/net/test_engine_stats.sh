#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `xpile stats` and `xpile ctl` (issue 25, section 2) on two live engines: fwd on
# e1/e2 under its default name (the ports and the namespace: e1+e2@NS) and rxdrop on x1
# under --name. K datagrams through fwd and M to x1 show in both the text table and the
# --json snapshot (one valid document listing both engines, by name, and each one named
# alone), per queue and per worker. Every line the engines print with --json is valid
# JSON (the free-text fields escaped); a name no engine serves is one line and exit 1,
# and with --json one error object; a bad KEY=VALUE is a usage error (exit 2).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"

eng_wire_hosts 198.18.26 1500
xt_veth "$E" x1 "$H1" x1h
eng_quiet "$E" x1
eng_host "$H1" x1h 198.18.27.1/24
A="e1+e2@$E"
B="xph25s$$"
eng_start ENGA "$E" --iface e1 --iface e2 --mode fwd --cores 0
eng_start ENGB "$E" --iface x1 --mode rxdrop --cores 1 --name "$B" --capture "$XT_TMP/b.pcapng"
# capture stop|start: nothing of the first burst is captured, all of the last one.
"$XPILE" ctl "$B" capture action=stop >"$XT_TMP/cap" && jq -e '.capturing == false' "$XT_TMP/cap" >/dev/null ||
	xt_fail "capture stop: $(cat "$XT_TMP/cap")"
[ -S "/run/xpile/$A.sock" ] || xt_fail "no control socket under the default name $A"

H2MAC=$(ip -n "$H2" -o link show h2 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
X1MAC=$(ip -n "$E" -o link show x1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$H1" neigh replace 198.18.26.2 lladdr "$H2MAC" dev h1
ip -n "$H1" neigh replace 198.18.27.2 lladdr "$X1MAC" dev x1h
K=200 M=120
ip netns exec "$H1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])): s.sendto(b"k" * 64, ("198.18.26.2", 9))
for i in range(int(sys.argv[2])): s.sendto(b"m" * 64, ("198.18.27.2", 9))' "$K" "$M"
sleep 1.2

"$XPILE" stats --json >"$XT_TMP/all.json" || xt_fail "xpile stats --json failed"
jq -e . "$XT_TMP/all.json" >/dev/null || xt_fail "xpile stats --json: not JSON: $(head -c 300 "$XT_TMP/all.json")"
got=$(jq --arg a "$A" --arg b "$B" '[.engines[] | select(.engine == $a or .engine == $b)] | length' "$XT_TMP/all.json")
[ "$got" = 2 ] || xt_fail "xpile stats --json lists $got of the 2 engines: $(jq -c '[.engines[].engine]' "$XT_TMP/all.json")"
rx_a=$(jq --arg a "$A" '.engines[] | select(.engine == $a) | [.queues[] | select(.port == "e1") | .rx_packets] | add' "$XT_TMP/all.json")
tx_a=$(jq --arg a "$A" '.engines[] | select(.engine == $a) | [.queues[] | select(.port == "e2") | .tx_packets] | add' "$XT_TMP/all.json")
rx_b=$(jq --arg b "$B" '.engines[] | select(.engine == $b) | [.queues[].rx_packets] | add' "$XT_TMP/all.json")
wk_b=$(jq --arg b "$B" '.engines[] | select(.engine == $b) | .workers[0] | "\(.core) \(.packets)"' -r "$XT_TMP/all.json")
[ "$rx_a" -ge "$K" ] && [ "$tx_a" -ge "$K" ] || xt_fail "fwd engine: e1 rx $rx_a, e2 tx $tx_a, want >= $K"
[ "$rx_b" = "$M" ] || xt_fail "rxdrop engine: rx $rx_b, want exactly $M"
[ "$wk_b" = "1 $M" ] || xt_fail "rxdrop engine's worker: core and packets '$wk_b', want '1 $M'"

"$XPILE" stats "$B" --json >"$XT_TMP/b.json" || xt_fail "xpile stats $B --json failed"
jq -e --arg b "$B" --argjson m "$M" '.engines | length == 1 and .[0].engine == $b and .[0].queues[0].rx_packets == $m' \
	"$XT_TMP/b.json" >/dev/null || xt_fail "xpile stats $B --json: $(head -c 400 "$XT_TMP/b.json")"

"$XPILE" stats >"$XT_TMP/all.txt" || xt_fail "xpile stats failed"
grep -q "^engine $A (fwd)" "$XT_TMP/all.txt" && grep -q "^engine $B (rxdrop)" "$XT_TMP/all.txt" ||
	{ cat "$XT_TMP/all.txt"; xt_fail "text: not both engines"; }
awk -v b="$B" '$1 == "engine" { cur = $2 } cur == b && $1 == "x1:0" { print $7 }' "$XT_TMP/all.txt" | grep -qx "$M" ||
	{ cat "$XT_TMP/all.txt"; xt_fail "text: x1:0 RX TOTAL is not $M"; }
grep -q "BUSY%" "$XT_TMP/all.txt" || xt_fail "text: no worker table"

# xpile ctl: a request with fields, and what a wrong one gets.
"$XPILE" ctl "$B" log level=info >"$XT_TMP/log" || xt_fail "ctl log level=info: $(cat "$XT_TMP/log")"
jq -e .ok "$XT_TMP/log" >/dev/null || xt_fail "ctl log: $(cat "$XT_TMP/log")"
"$XPILE" ctl "$B" log level >"$XT_TMP/usage" 2>&1
[ $? = 2 ] && grep -q 'KEY=VALUE' "$XT_TMP/usage" || xt_fail "ctl with a bare word: $(cat "$XT_TMP/usage")"
"$XPILE" stats "nosuch$$" >"$XT_TMP/no.out" 2>"$XT_TMP/no.err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$XT_TMP/no.err")" = 1 ] && grep -q "is it running" "$XT_TMP/no.err" ||
	xt_fail "stats of no engine: exit $rc: $(cat "$XT_TMP/no.err")"
"$XPILE" stats "nosuch$$" --json >"$XT_TMP/no.json" 2>/dev/null
jq -e '.status == 1 and (.error | test("nosuch"))' "$XT_TMP/no.json" >/dev/null ||
	xt_fail "stats --json of no engine: $(cat "$XT_TMP/no.json")"

"$XPILE" ctl "$B" capture action=start >"$XT_TMP/cap" && jq -e '.capturing' "$XT_TMP/cap" >/dev/null ||
	xt_fail "capture start: $(cat "$XT_TMP/cap")"
C=30
st_udp() { ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])): s.sendto(b"c" * 64, (sys.argv[1], int(sys.argv[2])))' "$2" "$3" "$4"; }
st_udp "$H1" 198.18.27.2 7 $C
"$XPILE" ctl "$B" capture rule=udp >"$XT_TMP/cap" && xt_fail "capture with a rule accepted"
# A rule without action=start changes nothing (start with a rule does: test_engine_livecap).
grep -q 'give action=start' "$XT_TMP/cap" || xt_fail "capture rule: $(cat "$XT_TMP/cap")"
sleep 0.5

eng_stop "$ENGA" || xt_fail "fwd engine failed"
eng_stop "$ENGB" || xt_fail "rxdrop engine failed"
# Every line both engines printed is JSON (topology, whys, paths escaped).
for f in ENGA ENGB; do
	jq -c . "$XT_TMP/$f.json" >/dev/null || xt_fail "$f --json output is not JSON lines"
done
grep '"type":"ready"' "$XT_TMP/ENGA.json" | jq -e '.topology | type == "string"' >/dev/null ||
	xt_fail "ready line without a topology string: $(grep '"type":"ready"' "$XT_TMP/ENGA.json")"
if command -v tcpdump >/dev/null; then
	got=$(tcpdump -nn -r "$XT_TMP/b.pcapng" udp 2>/dev/null | grep -c '198.18.27.2.7: UDP')
	all=$(tcpdump -nn -r "$XT_TMP/b.pcapng" udp 2>/dev/null | grep -c 'UDP')
	[ "$got" = $C ] && [ "$all" = $C ] || xt_fail "capture: $got datagrams to port 7 ($all UDP) in the file, want $C only"
	echo "capture stop/start: the file holds exactly the $C datagrams sent while capturing"
fi
echo "stats: fwd $A rx $rx_a tx $tx_a, rxdrop $B rx $rx_b (exact), text and JSON, errors one line"
echo "ok"
