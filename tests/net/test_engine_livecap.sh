#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `capture start` with a rule and a file on a running engine started without --capture
# (issue 25, section 1): A a0 -> b0 [B xpile rxdrop]. Datagrams tagged with their phase
# and number go to UDP ports 9 and 10 (and pings) before, during and after the capture:
# tshark reads from the file exactly the port-9 ones sent while rule 'udp dport 9' was in
# force, then exactly the port-10 ones once `capture start rule=...` changed it, and
# nothing sent before the start or after the stop; tcpdump -r agrees. The file is new,
# mode 0600. Refused with one line each, creating nothing: a file that exists, a symbolic
# link, a relative path, a bad rule, a second start, a peer that is not root (uid 65534
# let in by --ctl-allow-uid), a stop with nothing running. An engine with --capture
# keeps its file: a new one is refused, a rule change applies. Clean ledger, status 0.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
for t in tshark tcpdump jq; do
	command -v $t >/dev/null || xt_skip "$t missing: apt-get install tshark tcpdump jq"
done

eng_pair 198.18.125
NAME="xph25l$$"
CDIR=$(mktemp -d /tmp/xph25l.XXXXXX)
xt_on_exit rm -rf "$CDIR"
chmod 755 "$CDIR"
SOCK=$CDIR/ctl.sock
ctl() { "$XPILE" ctl "$SOCK" "$@"; }
F=$CDIR/x.pcapng

eng_start ENG "$B" --iface b0 --mode rxdrop --cores 0 --ledger-debug --name "$NAME" \
	--ctl "$SOCK" --ctl-allow-uid 65534
chmod 666 "$SOCK"
sleep 0.5 # an engine started again on the same veth may miss its first ~150 ms

# send TAG PORT N: N datagrams "TAG-PORT-i" to 198.18.125.2:PORT, 1 ms apart.
send() {
	ip netns exec "$A" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
tag, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    s.sendto(("%s-%d-%d" % (tag, port, i)).encode(), ("198.18.125.2", port))
    time.sleep(0.001)' "$@"
}
# refused WHAT PATTERN ARGS...: the ctl call fails with one error line matching PATTERN.
refused() {
	local what=$1 pat=$2
	shift 2
	if "$@" >"$XT_TMP/ref" 2>&1; then xt_fail "$what accepted: $(cat "$XT_TMP/ref")"; fi
	[ "$(wc -l <"$XT_TMP/ref")" = 1 ] || xt_fail "$what: not one line: $(cat "$XT_TMP/ref")"
	jq -e --arg p "$pat" '.ok == false and (.error | test($p))' "$XT_TMP/ref" >/dev/null ||
		xt_fail "$what: $(cat "$XT_TMP/ref")"
}

refused "stop with nothing running" 'nothing captures' ctl capture action=stop
refused "a rule with nothing running" 'give file=' ctl capture action=start 'rule=udp dport 9'
send pre 9 5
refused "a relative path" 'not an absolute path' ctl capture action=start file=x.pcapng
refused "a bad rule" 'dport' ctl capture action=start 'rule=udp dport nope' file="$F"
[ ! -e "$F" ] || xt_fail "a refused start left $F"
: >"$CDIR/exists"
refused "a file that exists" 'exists: give a new file' ctl capture action=start file="$CDIR/exists"
[ ! -s "$CDIR/exists" ] || xt_fail "the existing file was written"
ln -s "$CDIR/target" "$CDIR/link"
refused "a symbolic link" 'exists: give a new file' ctl capture action=start file="$CDIR/link"
[ ! -e "$CDIR/target" ] || xt_fail "the start followed a symbolic link"
refused "uid 65534 naming a file" 'only root \(uid 0\)' \
	setpriv --reuid 65534 --regid 65534 --clear-groups "$XPILE" ctl "$SOCK" capture action=start file="$CDIR/nobody.pcapng"
[ ! -e "$CDIR/nobody.pcapng" ] || xt_fail "uid 65534's start created a file"

ctl capture action=start 'rule=udp dport 9' file="$F" >"$XT_TMP/start" || xt_fail "capture start: $(cat "$XT_TMP/start")"
jq -e --arg f "$F" '.ok and .capturing and .file == $f and .rule == "udp dport 9" and .live' "$XT_TMP/start" >/dev/null ||
	xt_fail "capture start reply: $(cat "$XT_TMP/start")"
[ "$(stat -c '%a %u' "$F")" = "600 0" ] || xt_fail "capture file mode/owner $(stat -c '%a %u' "$F"), want 600 0"
refused "a second start" 'runs already: stop it first' ctl capture action=start file="$CDIR/second.pcapng"
K=40 M=30
send in 9 "$K" & s1=$!
send in 10 "$M" & s2=$!
ip netns exec "$A" ping -c 3 -i 0.05 198.18.125.2 >/dev/null 2>&1
wait "$s1" "$s2"
# The rule changes under the running capture: port 10 from the workers' next batch on.
ctl capture action=start 'rule=udp dport 10' >"$XT_TMP/chg" || xt_fail "rule change: $(cat "$XT_TMP/chg")"
jq -e '.ok and .capturing and .rule == "udp dport 10"' "$XT_TMP/chg" >/dev/null || xt_fail "rule change reply: $(cat "$XT_TMP/chg")"
J=25
send chg 9 "$J"
send chg 10 "$J"
sleep 0.3
ctl capture action=stop >"$XT_TMP/stop" || xt_fail "capture stop: $(cat "$XT_TMP/stop")"
jq -e --argjson n $((K + J)) '.ok and (.capturing | not) and .frames == $n and .capture_dropped == 0 and (.failed | not)' \
	"$XT_TMP/stop" >/dev/null || xt_fail "capture stop reply (want $((K + J)) frames): $(cat "$XT_TMP/stop")"
send post 9 5
send post 10 5

tshark -r "$F" -T fields -e udp.dstport -e udp.payload >"$XT_TMP/fields" 2>"$XT_TMP/tshark.err" ||
	{ cat "$XT_TMP/tshark.err"; xt_fail "tshark -r $F failed"; }
python3 - "$XT_TMP/fields" "$K" "$J" <<'PY' || xt_fail "the file's records are not exactly the matching datagrams"
import sys
k, j = int(sys.argv[2]), int(sys.argv[3])
want = sorted(["in-9-%d" % i for i in range(k)] + ["chg-10-%d" % i for i in range(j)])
got = []
for line in open(sys.argv[1]):
    port, data = (line.rstrip("\n").split("\t") + [""])[:2]
    got.append(bytes.fromhex(data.replace(":", "")).decode() if data else "port %s, no payload" % port)
got.sort()
if got != want:
    print("records:", len(got), "want:", len(want), file=sys.stderr)
    print("extra:", sorted(set(got) - set(want))[:10], "missing:", sorted(set(want) - set(got))[:10], file=sys.stderr)
    sys.exit(1)
PY
n9=$(tcpdump -nn -r "$F" 'udp dst port 9' 2>/dev/null | wc -l)
n10=$(tcpdump -nn -r "$F" 'udp dst port 10' 2>/dev/null | wc -l)
nall=$(tcpdump -nn -r "$F" 2>/dev/null | wc -l)
[ "$n9" = "$K" ] && [ "$n10" = "$J" ] && [ "$nall" = $((K + J)) ] ||
	xt_fail "tcpdump -r: $n9 to port 9 (want $K), $n10 to port 10 (want $J), $nall in all"
refused "a start on the file just written" 'exists' ctl capture action=start file="$F"

# A second capture on the same engine after the first closed: every frame (no rule).
F2=$CDIR/all.pcapng
ctl capture action=start file="$F2" snaplen=64 >"$XT_TMP/start2" || xt_fail "second capture: $(cat "$XT_TMP/start2")"
send two 9 7
sleep 0.2
ctl capture action=stop >"$XT_TMP/stop2" || xt_fail "second stop: $(cat "$XT_TMP/stop2")"
n=$(tcpdump -nn -r "$F2" 'udp dst port 9' 2>/dev/null | wc -l)
[ "$n" = 7 ] || xt_fail "second capture (no rule): $n datagrams to port 9, want 7"

eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
echo "capture start on a live engine: exactly the $K datagrams matching 'udp dport 9', then the $J matching 'udp dport 10' after a rule change, in a new 0600 file (tshark, tcpdump); refusals one line each"

# An engine with --capture keeps its file; its rule changes live.
FC=$CDIR/cap.pcapng
eng_start CAP "$B" --iface b0 --mode rxdrop --cores 0 --ledger-debug --name "$NAME" \
	--ctl "$SOCK" --capture "$FC" --capture-rule 'udp dport 9'
sleep 0.5
refused "a file while --capture runs" 'holds the capture' ctl capture action=start file="$CDIR/other.pcapng"
send cap 9 6
ctl capture action=start 'rule=udp dport 10' >"$XT_TMP/chg2" || xt_fail "--capture rule change: $(cat "$XT_TMP/chg2")"
send cap 9 4
send cap 10 5
sleep 0.2
eng_stop "$CAP" || { rc=$?; cat "$XT_TMP/CAP.err"; xt_fail "--capture engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/CAP.json" || xt_fail "--capture engine: ledger not clean"
n9=$(tcpdump -nn -r "$FC" 'udp dst port 9' 2>/dev/null | wc -l)
n10=$(tcpdump -nn -r "$FC" 'udp dst port 10' 2>/dev/null | wc -l)
[ "$n9" = 6 ] && [ "$n10" = 5 ] || xt_fail "--capture after a live rule change: $n9 to port 9 (want 6), $n10 to port 10 (want 5)"
echo "--capture: a new file refused, the rule changed live (6 then 5 records)"
echo ok
