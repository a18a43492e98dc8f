#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `xpile-loader replace` under traffic (issue 13, part 2): a 100/s ping passes through
# the steer program to the kernel (rule 'icmp action pass', which also counts it) while
# the program is replaced 5 times, and an engine (rxdrop, --attach-existing) receives a
# UDP stream steered to its socket:
#  - 0 pings lost, the icmp rule's counter never goes back and ends >= pings sent;
#  - the program id changes each time, the pins follow it, the engine keeps receiving
#    (its XSKMAP entry survives) and does not stop;
#  - a build with another map layout version, and one with a bigger pinned map, are
#    refused with one line (exit 2) and the old program stays;
#  - a program the engine loaded itself is replaced too, and still removed at exit.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
source tests/lib/engine.sh
st_require
[ -x "$XPILE" ] || xt_skip "engine not built: run make"
command -v clang >/dev/null || xt_skip "clang not installed (variant objects are built here)"

st_ns A rpa
st_ns B rpb
xt_veth "$A" ra0 "$B" rb0
eng_host "$A" ra0 198.18.3.1/24
eng_host "$B" rb0 198.18.3.2/24

st_loader "$B" load --mode native --default pass rb0 >/dev/null || xt_fail "load failed"
st_loader "$B" rule add rb0 prio 10 icmp action pass >/dev/null || xt_fail "rule add icmp"
st_loader "$B" rule add rb0 prio 20 udp dport 5000 action xsk >/dev/null || xt_fail "rule add udp"
eng_start RX "$B" --iface rb0 --mode rxdrop --cores 0 --attach-existing --quiet
ip netns exec "$A" ping -c 2 -i 0.2 -W 2 198.18.3.2 >/dev/null || xt_fail "ping does not reach the kernel"

prog_id() { ip -n "$B" -d link show rb0 | grep -o 'prog/xdp id [0-9]*' | grep -o '[0-9]*$'; }
icmp_pkts() {
	st_loader "$B" rule list --json rb0 | grep -o '"rule":"prio 10 icmp action pass","packets":[0-9]*' |
		grep -o '[0-9]*$'
}
rx() { grep -o '"rx_packets":[0-9]*' "$XT_TMP/RX.json" | tail -1 | cut -d: -f2; }
rx_is() { [ "$(rx)" = "$1" ]; }

N=50
st_udp "$A" 198.18.3.2 5000 $N || xt_fail "sending to port 5000 failed"
xt_wait_for 5 rx_is $N || xt_fail "AF_XDP socket got $(rx) packets before the replaces, sent $N"

# 300 pings at 100/s (3 s); 5 replaces inside that window, UDP to the socket between them.
P=300
ip netns exec "$A" ping -c $P -i 0.01 -W 1 198.18.3.2 >"$XT_TMP/ping.out" 2>&1 &
pinger=$!
XT_PIDS+=("$pinger")
sleep 0.3
id=$(prog_id) cnt=$(icmp_pkts) sent=$N
[ -n "$id" ] && [ -n "$cnt" ] || xt_fail "cannot read program id ($id) or icmp counter ($cnt)"
for i in 1 2 3 4 5; do
	st_loader "$B" replace rb0 >"$XT_TMP/replace.$i" || xt_fail "replace $i failed: $(cat "$XT_TMP/replace.$i")"
	new=$(prog_id)
	[ "$new" != "$id" ] || xt_fail "replace $i: program id still $id"
	grep -q "program id $id -> $new;" "$XT_TMP/replace.$i" ||
		xt_fail "replace $i: output does not name $id -> $new: $(cat "$XT_TMP/replace.$i")"
	c=$(icmp_pkts)
	[ -n "$c" ] && [ "$c" -ge "$cnt" ] || xt_fail "replace $i: icmp counter went from $cnt to $c"
	st_udp "$A" 198.18.3.2 5000 $N || xt_fail "sending to port 5000 failed"
	sent=$((sent + N))
	xt_wait_for 5 rx_is $sent || xt_fail "replace $i: the engine's socket has $(rx) packets, sent $sent"
	echo "replace $i: program id $id -> $new, icmp counter $cnt -> $c, engine rx $(rx)"
	id=$new cnt=$c
	sleep 0.3
done
wait "$pinger"
grep -q "^$P packets transmitted, $P received, 0% packet loss" "$XT_TMP/ping.out" ||
	xt_fail "pings lost across 5 replaces: $(grep transmitted "$XT_TMP/ping.out")"
c=$(icmp_pkts)
[ "$c" -ge $((P + 2)) ] || xt_fail "icmp rule counter $c after $((P + 2)) pings"
kill -0 "$RX" 2>/dev/null || xt_fail "the engine stopped: $(cat "$XT_TMP/RX.err")"
! grep -q '"program_replaced"\|"pins_replaced"' "$XT_TMP/RX.json" ||
	xt_fail "the engine took the replace for a stranger: $(grep -o '"event":"[a-z_]*"' "$XT_TMP/RX.json")"
st_loader "$B" status rb0 | grep -q "xpile: 2 rules" || xt_fail "status lost the program: $(st_loader "$B" status rb0)"
echo "5 replaces under a 100/s ping: $P/$P pings, icmp counter $c, engine rx $(rx)/$sent"

# Builds whose map layout differs are refused, one line, the old program stays.
V=$(mktemp -d)
xt_on_exit rm -rf "$V"
clang -O2 -g -target bpf -Wall -Ibpf -I/usr/include/x86_64-linux-gnu -DXP_STEER_ABI_VERSION=999 \
	-c bpf/steer.bpf.c -o "$V/v999.o" || xt_fail "cannot build the version 999 variant"
sed 's/__uint(max_entries, SETS \* XP_STEER_MAX_RULES);/__uint(max_entries, 3 * XP_STEER_MAX_RULES);/; s/SETS \*XP_STEER_MAX_RULES/3 * XP_STEER_MAX_RULES/' \
	bpf/steer.bpf.c >"$V/big.bpf.c"
grep -q '3 \* XP_STEER_MAX_RULES' "$V/big.bpf.c" || xt_fail "the bigger-map variant did not change the source"
clang -O2 -g -target bpf -Wall -Ibpf -I/usr/include/x86_64-linux-gnu -c "$V/big.bpf.c" -o "$V/big.o" ||
	xt_fail "cannot build the bigger-map variant"
for v in v999 big; do
	rc=0
	st_loader "$B" replace --obj "$V/$v.o" rb0 >/dev/null 2>"$V/$v.err" || rc=$?
	[ $rc = 2 ] || xt_fail "$v: replace exited $rc, expected 2: $(cat "$V/$v.err")"
	[ "$(wc -l <"$V/$v.err")" = 1 ] || xt_fail "$v: not one line: $(cat "$V/$v.err")"
	[ "$(prog_id)" = "$id" ] || xt_fail "$v: program changed to $(prog_id) from $id"
	echo "$v refused: $(cat "$V/$v.err")"
done
abi=$(sed -n 's/^#define XP_STEER_ABI_VERSION \([0-9]*\).*/\1/p' bpf/steer_abi.h)
grep -q "version 999, the running one.s $abi," "$V/v999.err" || xt_fail "v999 (running $abi): $(cat "$V/v999.err")"
grep -q 'map xp_rules differs in max_entries (3072, running 2048)' "$V/big.err" ||
	xt_fail "big: $(cat "$V/big.err")"
# Bad input: a missing object, a file that is no BPF object; one line each, exit 2.
echo "not an object" >"$V/text.o"
for o in "$V/missing.o" "$V/text.o"; do
	rc=0
	st_loader "$B" replace --obj "$o" rb0 >/dev/null 2>"$V/bad.err" || rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$V/bad.err")" = 1 ] ||
		xt_fail "replace --obj $o: exit $rc, $(cat "$V/bad.err")"
	[ "$(prog_id)" = "$id" ] || xt_fail "replace --obj $o changed the program"
done
ip netns exec "$A" ping -c 3 -i 0.1 -W 2 198.18.3.2 >/dev/null || xt_fail "ping lost after the refusals"

# The engine registered itself under the new program id: unload still sees it.
rc=0
st_loader "$B" unload rb0 >/dev/null 2>"$V/unload.err" || rc=$?
[ $rc != 0 ] && grep -q "in use by" "$V/unload.err" ||
	xt_fail "unload did not see the engine after the replaces: exit $rc, $(cat "$V/unload.err")"

eng_stop "$RX" || { rc=$?; cat "$XT_TMP/RX.err"; xt_fail "engine exited with $rc"; }
st_loader "$B" unload rb0 >/dev/null || xt_fail "unload failed"
st_no_trace "$B" rb0 || xt_fail "unload left traces"
# A program the engine loaded itself is replaced the same way; the engine follows it
# and still removes it at exit.
eng_start RX2 "$B" --iface rb0 --mode rxdrop --cores 0 --quiet
id=$(prog_id)
st_loader "$B" replace rb0 >/dev/null || xt_fail "replace of the engine's own program failed"
[ "$(prog_id)" != "$id" ] || xt_fail "the engine's program was not replaced"
rx() { grep -o '"rx_packets":[0-9]*' "$XT_TMP/RX2.json" | tail -1 | cut -d: -f2; }
st_udp "$A" 198.18.3.2 5000 $N || xt_fail "sending to port 5000 failed"
xt_wait_for 5 rx_is $N || xt_fail "engine-loaded, replaced: the socket has $(rx) packets, sent $N"
sleep 0.5 # one watch round: the engine follows the replace
eng_stop "$RX2" || { rc=$?; cat "$XT_TMP/RX2.err"; xt_fail "engine exited with $rc"; }
st_no_trace "$B" rb0 || xt_fail "the engine left its replaced program behind"
echo "the engine's own program replaced: $N/$N received, removed at exit"

rc=0
st_loader "$B" replace rb0 >/dev/null 2>"$V/none.err" || rc=$?
[ $rc != 0 ] && [ "$(wc -l <"$V/none.err")" = 1 ] ||
	xt_fail "replace with nothing loaded: exit $rc, $(cat "$V/none.err")"
echo ok
