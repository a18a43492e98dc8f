#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One UMEM shared by 4 sockets on 2 ports x 2 queues, 2 workers: a generator sends
# K/2 packets on each of its 2 queues, xpile fwd moves queue q of e1 to queue q of e2,
# a sink counts exactly K/2 per queue. Every socket's counters and the ledger agree.
# The engine follows the queue->core plan of `xpile-loader wire` (crossed here).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

K=${K:-40000}
eng_ns G gen; eng_ns E fwd; eng_ns S sink
eng_veth "$G" g0 "$E" e1 2
eng_veth "$E" e2 "$S" s0 2
# shellcheck disable=SC2086 # $p is "NS IF"
for p in "$G g0" "$E e1" "$E e2" "$S s0"; do eng_quiet $p; done

eng_start SINK "$S" --iface s0:0-1 --mode rxdrop --cores 0,1 --quiet --rx-ring 8192 --fill-ring 8192
ip netns exec "$E" "$XT_BUILD/xpile-loader" wire e1 --queues 0,1 --cores 1,0 >/dev/null 2>&1 ||
	xt_fail "xpile-loader wire failed"
eng_start FWD "$E" --iface e1:0-1 --iface e2:0-1 --mode fwd --cores 0,1 --ledger-debug --rx-ring 8192 --fill-ring 8192
[ "$(grep -c '"type":"socket"' "$XT_TMP/FWD.json")" = 4 ] || xt_fail "fwd did not open 4 sockets"
for s in '"port":"e1","queue":0,"core":1' '"port":"e1","queue":1,"core":0' \
	'"port":"e2","queue":0,"core":1' '"port":"e2","queue":1,"core":0'; do
	grep '"type":"socket"' "$XT_TMP/FWD.json" | grep -q "$s" || xt_fail "wiring plan not followed: no $s"
done

ip netns exec "$G" timeout 30 "$XPILE" run --iface g0:0-1 --mode txonly --cores 0,1 \
	--count "$K" --rate 50000 --flows 8 --quiet >"$XT_TMP/gen.out" 2>&1 ||
	{ rc=$?; cat "$XT_TMP/gen.out"; xt_fail "generator exited $rc"; }
all_in() { [ "$(eng_last "$XT_TMP/SINK.json" s0 0 rx_packets)" = $((K / 2)) ] &&
	[ "$(eng_last "$XT_TMP/SINK.json" s0 1 rx_packets)" = $((K / 2)) ]; }
xt_wait_for 5 all_in
eng_stop "$FWD" || { rc=$?; cat "$XT_TMP/FWD.err"; xt_fail "fwd exited with status $rc"; }
eng_stop "$SINK" || xt_fail "sink exited with status $?"
for q in 0 1; do
	a=$(eng_last "$XT_TMP/FWD.json" e1 $q rx_packets)
	b=$(eng_last "$XT_TMP/FWD.json" e2 $q tx_packets)
	c=$(eng_last "$XT_TMP/SINK.json" s0 $q rx_packets)
	echo "queue $q: e1 rx $a, e2 tx $b, sink rx $c (expected $((K / 2)))"
	[ "$a" = $((K / 2)) ] && [ "$b" = $((K / 2)) ] && [ "$c" = $((K / 2)) ] ||
		xt_fail "queue $q counts differ"
done
eng_ledger_ok "$XT_TMP/FWD.json" || xt_fail "fwd ledger not clean"
eng_ledger_ok "$XT_TMP/SINK.json" || xt_fail "sink ledger not clean"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 && eng_no_xdp "$S" s0 || xt_fail "XDP program left attached"
echo ok
