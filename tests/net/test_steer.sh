#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Real traffic through the steer program on veth (native XDP, AF_XDP copy mode), each
# loader command in its own `ip netns exec`:
#  - ping reaches the kernel while UDP port 5000 goes to an AF_XDP socket (the engine
#    in rxdrop mode, attached to the loader's program) that receives exactly what was
#    sent, and UDP port 6000 is dropped and counted (verdict and rule counters);
#  - replacing the rule set 20 times under traffic loses no packet the rules keep;
#  - the queue->core plan from `xpile-loader wire` is what the engine uses;
#  - after unload nothing is attached, pinned or planned.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
source tests/lib/engine.sh
st_require
[ -x "$XPILE" ] || xt_skip "engine not built: run make"

st_ns A snd
st_ns B rcv
xt_veth "$A" a0 "$B" b0
eng_host "$A" a0 198.18.0.1/24
eng_host "$B" b0 198.18.0.2/24

st_loader "$B" load --mode native --default pass b0 || xt_fail "load failed"
st_loader "$B" rule add b0 prio 10 udp dport 5000 action xsk >/dev/null || xt_fail "rule add"
st_loader "$B" rule add b0 prio 20 udp dport 6000 action drop >/dev/null || xt_fail "rule add"
st_loader "$B" rule list b0

# The wiring plan written by one `ip netns exec` reaches the engine in another: it
# overrides --cores.
st_loader "$B" wire --queues 0 --cores 1 b0 >/dev/null || xt_fail "wire failed"
eng_start RX "$B" --iface b0 --mode rxdrop --cores 0 --attach-existing --quiet
grep -q '"type":"socket","port":"b0","queue":0,"core":1,' "$XT_TMP/RX.json" ||
	xt_fail "engine ignored the wiring plan: $(grep socket "$XT_TMP/RX.json")"
ip netns exec "$A" ping -c 3 -i 0.2 -W 2 198.18.0.2 >/dev/null || xt_fail "ping does not reach the kernel"

N=300
M=200
st_udp "$A" 198.18.0.2 5000 $N || xt_fail "sending to port 5000 failed"
st_udp "$A" 198.18.0.2 6000 $M || xt_fail "sending to port 6000 failed"
rx() { grep -o '"rx_packets":[0-9]*' "$XT_TMP/RX.json" | tail -1 | cut -d: -f2; }
rx_is() { [ "$(rx)" = "$1" ]; }
xt_wait_for 5 rx_is $N || xt_fail "AF_XDP socket got $(rx) packets, sent $N to port 5000"

stats=$(st_loader "$B" stats --json b0) || xt_fail "stats failed"
drop=$(echo "$stats" | grep -o '"drop_packets":[0-9]*' | cut -d: -f2)
xsk=$(echo "$stats" | grep -o '"xsk_packets":[0-9]*' | cut -d: -f2)
[ "$drop" = $M ] || xt_fail "dropped $drop, sent $M to port 6000"
[ "$xsk" = $N ] || xt_fail "xsk verdicts $xsk, sent $N to port 5000"
rules=$(st_loader "$B" rule list --json b0)
echo "$rules" | grep -q "\"rule\":\"prio 20 udp dport 6000 action drop\",\"packets\":$M," ||
	xt_fail "drop rule counter wrong: $rules"
ip netns exec "$A" ping -c 2 -i 0.2 -W 2 198.18.0.2 >/dev/null || xt_fail "ping lost after steering"
echo "steered $N to AF_XDP, dropped $M, ping reaches the kernel"

# Atomic replace under traffic: every rule set keeps port 5000 on the socket.
K=1500
st_udp "$A" 198.18.0.2 5000 $K &
sender=$!
XT_PIDS+=("$sender")
for i in $(seq 20); do
	{
		echo "# generation $i"
		for j in $(seq 0 $((i % 7))); do echo "prio 5 udp dport $((7000 + i * 10 + j)) action drop"; done
		echo "prio $((10 + i)) udp dport 5000 action xsk"
		echo "src 198.19.$i.0/24 action drop"
		echo "prio 90 udp dport 6000 action drop"
	} >"$XT_TMP/rules.$i"
	st_loader "$B" rule replace b0 "$XT_TMP/rules.$i" >/dev/null || xt_fail "replace $i failed"
done
wait "$sender" || xt_fail "sender failed"
xt_wait_for 5 rx_is $((N + K)) ||
	xt_fail "after 20 replaces under traffic the socket has $(rx) packets, expected $((N + K))"
echo "20 atomic replaces under traffic: all $K packets kept"

eng_stop "$RX" || { rc=$?; cat "$XT_TMP/RX.err"; xt_fail "engine exited with $rc"; }
st_loader "$B" unload b0 >/dev/null || xt_fail "unload failed"
st_no_trace "$B" b0 || xt_fail "unload left traces"
echo ok
