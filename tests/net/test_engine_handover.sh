#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Hot handover under traffic: h1 <-> [e1 xpile fwd e2] <-> h2 with a ping every 10 ms and
# a 50 Mbit/s iperf3 UDP stream; 10 handovers in a row, each to a new process on the same
# socket path. Not one ping or datagram lost (iperf3's own count), every old engine exits
# 0, the last one's ledger is clean, and the generations hold the same fds and mappings.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/handover.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

GENS=${GENS:-10}
eng_wire_hosts 198.18.1 1500
SOCK=$XT_TMP/handover.sock
ARGS=(--iface e1 --iface e2 --mode fwd --cores 0 --interval 0.5 --handover "$SOCK")

eng_start G0 "$E" "${ARGS[@]}"
ip netns exec "$H1" ping -c 3 -i 0.05 -W 2 198.18.1.2 >/dev/null || xt_fail "no ping through fwd"

ip netns exec "$H2" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :5201" || xt_fail "iperf3 server did not start"
# The receiver's drops are not the data plane's: a 2 MiB socket buffer lets the iperf3
# server ride out a busy CI core, and its UdpRcvbufErrors are reported beside a loss.
rcvbuf_errors() { ip netns exec "$H2" nstat -asz UdpRcvbufErrors | awk '/UdpRcvbufErrors/ {print $2}'; }
rcvbuf0=$(rcvbuf_errors)
ip netns exec "$H1" timeout 30 iperf3 -c 198.18.1.2 -p 5201 -u -b 50M -l 1400 -t 8 -w 2M -J \
	>"$XT_TMP/iperf" 2>&1 &
IPERF=$!
ip netns exec "$H1" ping -c 900 -i 0.01 -W 2 198.18.1.2 >"$XT_TMP/ping" 2>&1 &
PING=$!
sleep 0.5

prev=$G0
fds=() maps=() pauses=()
for g in $(seq 1 "$GENS"); do
	ho_next "G$g" "$prev" "$E" "${ARGS[@]}" --take-over "$SOCK"
	prev=$(eval echo "\$G$g")
	fds+=("$(ho_fds "$prev")")
	maps+=("$(ho_maps "$prev")")
	pauses+=("$(ho_pause "$XT_TMP/G$g.json")")
	sleep 0.2
done
echo "fds per generation: ${fds[*]}; memfd mappings: ${maps[*]}"
echo "pause per handover (ns): ${pauses[*]}"

wait "$IPERF" || { tail -5 "$XT_TMP/iperf"; xt_fail "iperf3 UDP failed"; }
wait "$PING"
grep -q ' 900 received' "$XT_TMP/ping" || { tail -3 "$XT_TMP/ping"; xt_fail "pings lost across $GENS handovers"; }
lost=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["end"]["sum"]; print(s["lost_packets"], s["packets"])' "$XT_TMP/iperf")
rcvbuf=$(($(rcvbuf_errors) - rcvbuf0))
drops=$(for g in $(seq 0 "$GENS"); do grep '"type":"summary"' "$XT_TMP/G$g.json"; done |
	python3 -c 'import json,sys
t={}
for l in sys.stdin:
    o=json.loads(l)
    for k in ("tx_dropped","rx_dropped","rx_ring_full","rx_fill_ring_empty_descs","bad_descs"):
        t[k]=t.get(k,0)+o.get(k,0)
print(" ".join("%s=%d"%kv for kv in sorted(t.items())))')
echo "iperf3 UDP: lost/sent datagrams: $lost; receiver socket drops: $rcvbuf; engines: $drops"
[ "${lost%% *}" = 0 ] && [ "${lost##* }" -gt 10000 ] ||
	xt_fail "iperf3 lost datagrams (lost, sent: $lost; of them dropped by the receiver's socket: $rcvbuf; engines: $drops)"

# Generation 1 is the first taken over; each later one must hold exactly what it held.
for g in $(seq 1 $((GENS - 1))); do
	[ "${fds[$g]}" = "${fds[0]}" ] && [ "${maps[$g]}" = "${maps[0]}" ] ||
		xt_fail "generation $((g + 1)) holds ${fds[$g]} fds and ${maps[$g]} memfd mappings, generation 1 ${fds[0]} and ${maps[0]}: a leak"
done
eng_stop "$prev" || { rc=$?; cat "$XT_TMP/G$GENS.err"; xt_fail "the last engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/G$GENS.json" || { grep ledger "$XT_TMP/G$GENS.json" | tail -3; xt_fail "ledger not clean in the last generation"; }
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
[ ! -e "$SOCK" ] || xt_fail "the handover socket $SOCK was left behind"
echo "ok"
