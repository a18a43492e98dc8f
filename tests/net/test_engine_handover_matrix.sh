#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Handovers beyond the first suite: rxdrop and l2fwd, 1 and 2 queues, interleaved and
# aligned layouts, 4 KiB and 2 MiB pages (reserved here, given back at exit), and fwd
# over two UMEMs (--umem per-port). Ten handovers in a row
# per variant under a ping every 10 ms from the host: every packet is counted once by
# some generation (rxdrop: received; l2fwd: sent back and received by the host), every
# old engine exits 0 and the last one's ledger is clean.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/handover.sh
eng_require

nr0=$(cat /proc/sys/vm/nr_hugepages)
xt_on_exit "echo $nr0 > /proc/sys/vm/nr_hugepages"
echo $((nr0 + 64)) >/proc/sys/vm/nr_hugepages
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
[ "$free" -ge 32 ] || xt_fail "could not reserve 2 MiB hugepages ($free free): memory too fragmented"

PINGS=1000
ROUNDS=10
# The two hosts: A1 a0 <-> b0 B1 with one queue each way, A2 a0 <-> b0 B2 with two.
for q in 1 2; do
	eng_ns "A$q" "a$q"
	eng_ns "B$q" "b$q"
	eng_veth "$(eval echo "\$A$q")" a0 "$(eval echo "\$B$q")" b0 "$q"
	eng_host "$(eval echo "\$A$q")" a0 "198.18.$((4 + q)).1/24"
	eng_quiet "$(eval echo "\$B$q")" b0
	mac=$(ip -n "$(eval echo "\$B$q")" -o link show b0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
	ip -n "$(eval echo "\$A$q")" neigh add "198.18.$((4 + q)).2" lladdr "$mac" dev a0
done

a0_rx() { ip -n "$1" -s -j link show a0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'; }

v=0
variant() { # mode queues layout hugepages
	local mode=$1 nq=$2 layout=$3 huge=$4 a b sock prev g rx0 got want field
	v=$((v + 1))
	a=$(eval echo "\$A$nq")
	b=$(eval echo "\$B$nq")
	sock=$XT_TMP/v$v.sock
	local args=(--iface "b0:0$([ "$nq" = 2 ] && echo ,1)" --mode "$mode" --cores 0 --interval 0.5
		--layout "$layout" --hugepages "$huge" --handover "$sock")
	eng_start "V${v}G0" "$b" "${args[@]}"
	rx0=$(a0_rx "$a")
	ip netns exec "$a" ping -c "$PINGS" -i 0.01 -W 0.1 "198.18.$((4 + nq)).2" >/dev/null 2>&1 &
	local ping=$!
	sleep 0.3
	prev=$(eval echo "\$V${v}G0")
	for ((g = 1; g <= ROUNDS; g++)); do
		ho_next "V${v}G$g" "$prev" "$b" "${args[@]}" --take-over "$sock"
		prev=$(eval echo "\$V${v}G$g")
		sleep 0.3
	done
	wait "$ping"
	sleep 0.2
	eng_stop "$prev" || { rc=$?; cat "$XT_TMP/V${v}G$ROUNDS.err"; xt_fail "$mode $nq queue(s) $layout $huge: the last engine exited with status $rc"; }
	eng_ledger_ok "$XT_TMP/V${v}G$ROUNDS.json" || xt_fail "$mode $nq queue(s) $layout $huge: ledger not clean"
	field=rx_packets
	[ "$mode" = l2fwd ] && field=tx_packets
	got=0
	for ((g = 0; g <= ROUNDS; g++)); do got=$((got + $(eng_sum "$XT_TMP/V${v}G$g.json" "$field"))); done
	want=$PINGS
	[ "$mode" = l2fwd ] && want="$PINGS (host got $(($(a0_rx "$a") - rx0)))"
	echo "$mode, $nq queue(s), $layout, hugepages $huge: $field over $((ROUNDS + 1)) generations: $got of $want; pages $(grep -o '"page_size":[0-9]*' "$XT_TMP/V${v}G0.json" | head -1)"
	[ "$got" = "$PINGS" ] || xt_fail "$mode $nq queue(s) $layout $huge: $got of $PINGS packets"
	if [ "$mode" = l2fwd ]; then
		[ $(($(a0_rx "$a") - rx0)) = "$PINGS" ] || xt_fail "$mode: the host got $(($(a0_rx "$a") - rx0)) of $PINGS back"
	fi
}

variant rxdrop 1 interleaved never
variant l2fwd 2 aligned never
variant rxdrop 2 aligned require
variant l2fwd 1 interleaved require

# Two UMEMs (--umem per-port): fwd copies between them; both domains go over, each
# with its own ledger, and every ping comes back.
eng_wire_hosts 198.18.7 1500
sock=$XT_TMP/pp.sock
args=(--iface e1 --iface e2 --mode fwd --cores 0 --interval 0.5 --umem per-port --handover "$sock")
eng_start PP0 "$E" "${args[@]}"
ip netns exec "$H1" ping -c 3 -i 0.05 -W 2 198.18.7.2 >/dev/null || xt_fail "per-port: no ping through fwd"
ip netns exec "$H1" ping -c 250 -i 0.01 -W 2 198.18.7.2 >"$XT_TMP/ping" 2>&1 &
ping=$!
prev=$PP0
for g in 1 2 3; do
	ho_next "PP$g" "$prev" "$E" "${args[@]}" --take-over "$sock"
	prev=$(eval echo "\$PP$g")
	sleep 0.3
done
wait "$ping"
grep -q ' 250 received' "$XT_TMP/ping" || { tail -2 "$XT_TMP/ping"; xt_fail "per-port: pings lost"; }
eng_stop "$prev" || { rc=$?; cat "$XT_TMP/PP3.err"; xt_fail "per-port: the last engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/PP3.json" || xt_fail "per-port: ledger not clean"
echo "fwd, 2 UMEMs (per-port), 3 handovers: 250 of 250 pings, $(grep -c '"when":"exit"' "$XT_TMP/PP3.json") exit ledger lines ok"
echo "ok"
