#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The ledger is not decoration, and it is live:
#  - under traffic (rxdrop fed by txonly, on one worker and on two; fwd with ping and
#    iperf3) every interval's "ledger" line is ok and its places (free, fill ring,
#    kernel, RX ring, app, TX ring, kernel, completion ring) sum to --frames; a
#    stop-the-world audit (SIGUSR1) under traffic is ok too;
#  - with a frame made to vanish, or freed while still in a fill ring (XPILE_FAULT
#    test hook, fired while running), the live audit reports it (lost / held twice)
#    before exit, the exit audit names the frame, and the engine exits 3.
# Without the fault, the same run exits 0 with a clean ledger.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

# Every live ledger line of FILE: ok, places summing to total == frames. Prints how
# many there were; returns 1 (with the line) on the first that is not.
live_lines_ok() { # file
	local line sum v k n=0 total frames
	while IFS= read -r line; do
		sum=0
		for k in free fill kernel_rx rx app tx kernel_tx completion; do
			v=$(grep -o "\"$k\":-\?[0-9]*" <<<"$line" | head -1 | cut -d: -f2)
			[ -n "$v" ] && [ "$v" -ge 0 ] || { echo "bad $k in: $line"; return 1; }
			sum=$((sum + v))
		done
		total=$(grep -o '"total":[0-9]*' <<<"$line" | cut -d: -f2)
		frames=$(grep -o '"frames":[0-9]*' <<<"$line" | cut -d: -f2)
		[ "$sum" = "$total" ] && [ "$total" = "$frames" ] ||
			{ echo "places sum to $sum, total $total, frames $frames: $line"; return 1; }
		grep -q '"ok":true' <<<"$line" || { echo "not ok: $line"; return 1; }
		n=$((n + 1))
	done < <(grep '"type":"ledger","when":"live"' "$1")
	echo "$n"
}

eng_pair

# --- rxdrop fed by txonly: live lines every 0.1 s, and a stop-the-world audit. ---
K=60000
eng_start RX "$B" --iface b0 --mode rxdrop --cores 1 --interval 0.1 --frames 4096
ip netns exec "$A" timeout 30 "$XPILE" run --iface a0 --mode txonly --cores 0 --count "$K" \
	--rate 60000 --dst-mac "$BMAC" --pkt-size 64 --interval 0.1 --json \
	>"$XT_TMP/tx.json" 2>"$XT_TMP/tx.err" &
TX=$!
XT_PIDS+=("$TX")
sleep 0.5
kill -USR1 "$RX"
wait "$TX" || { cat "$XT_TMP/tx.err"; xt_fail "txonly exited non-zero"; }
eng_stop "$RX" || { rc=$?; cat "$XT_TMP/RX.err"; xt_fail "rxdrop exited $rc"; }
n=$(live_lines_ok "$XT_TMP/RX.json") || xt_fail "rxdrop: $n"
m=$(live_lines_ok "$XT_TMP/tx.json") || xt_fail "txonly: $m"
got=$(eng_sum "$XT_TMP/RX.json" rx_packets)
echo "rxdrop: $n live ledger lines ok over $got packets; txonly: $m"
[ "$n" -ge 5 ] && [ "$m" -ge 5 ] || xt_fail "too few live ledger lines ($n, $m)"
[ "$got" -ge $((K / 2)) ] || xt_fail "rxdrop saw only $got of $K packets"
# Traffic moved frames between the cut and the scan of some line: the audit ran live.
grep '"when":"live"' "$XT_TMP/RX.json" | grep -vq '"slack":0,' ||
	xt_fail "no live audit overlapped traffic"
grep -q '"type":"ledger","when":"audit","ok":true' "$XT_TMP/RX.json" ||
	xt_fail "SIGUSR1 audit under traffic missing or not ok"
eng_ledger_ok "$XT_TMP/RX.json" || xt_fail "rxdrop exit ledger not clean"

# --- two workers (2 queues, cores 0 and 1): the cut is still one state of the engine. ---
eng_ns G g
eng_ns S s
eng_veth "$G" g0 "$S" s0 2
SMAC=$(ip -n "$S" -o link show s0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
eng_start MQ "$S" --iface s0:0-1 --mode rxdrop --cores 0,1 --interval 0.1
ip netns exec "$G" timeout 30 "$XPILE" run --iface g0:0-1 --mode txonly --cores 0,1 --count "$K" \
	--rate 60000 --flows 16 --dst-mac "$SMAC" --interval 0.1 --json >"$XT_TMP/mqtx.json" \
	2>"$XT_TMP/mqtx.err" || { cat "$XT_TMP/mqtx.err"; xt_fail "txonly on 2 queues exited non-zero"; }
eng_stop "$MQ" || { rc=$?; cat "$XT_TMP/MQ.err"; xt_fail "rxdrop on 2 workers exited $rc"; }
n=$(live_lines_ok "$XT_TMP/MQ.json") || xt_fail "rxdrop, 2 workers: $n"
m=$(live_lines_ok "$XT_TMP/mqtx.json") || xt_fail "txonly, 2 workers: $m"
checked=$(grep '"when":"live"' "$XT_TMP/MQ.json" | grep -c '"free_checked":true')
echo "2 workers: rxdrop $n live lines ok ($checked with the free count checked), txonly $m"
[ "$n" -ge 5 ] && [ "$checked" -ge 1 ] || xt_fail "2 workers: $n live lines, $checked checked free"
eng_ledger_ok "$XT_TMP/MQ.json" || xt_fail "rxdrop, 2 workers: exit ledger not clean"

# --- faults: caught by the live audit, not just at exit. ---
run() { # fault debug -> exit status; output in $XT_TMP/out, $XT_TMP/err
	# shellcheck disable=SC2086 # $2: options, split on purpose
	XPILE_FAULT=$1 ip netns exec "$B" timeout 20 "$XPILE" run --iface b0 --mode rxdrop \
		--duration 0.5 --interval 0.1 --json $2 >"$XT_TMP/out" 2>"$XT_TMP/err"
}

for debug in "" --ledger-debug; do
	run none "$debug"
	rc=$?
	[ $rc = 0 ] || { cat "$XT_TMP/err"; xt_fail "clean run ($debug) exited $rc"; }
	eng_ledger_ok "$XT_TMP/out" || xt_fail "clean run ($debug): ledger not ok"
	live_lines_ok "$XT_TMP/out" >/dev/null || xt_fail "clean run ($debug): a live line not ok"
	for fault in lose-frame free-twice; do
		want=lost
		[ $fault = free-twice ] && want="held twice"
		run $fault "$debug"
		rc=$?
		echo "$fault $debug: exit $rc: $(grep '"when":"live"' "$XT_TMP/out" | grep -o '"why":"[^"]*"' | head -1)"
		[ $rc = 3 ] || { cat "$XT_TMP/err"; xt_fail "$fault ($debug): exit status $rc, want 3"; }
		grep '"type":"ledger","when":"live","time":[0-9.]*,"ok":false' "$XT_TMP/out" |
			grep -q "($want)" || xt_fail "$fault ($debug): no live audit reported it as $want"
		grep -q '"type":"ledger","when":"exit","ok":false' "$XT_TMP/out" ||
			xt_fail "$fault ($debug): the exit audit did not fail"
		grep -q "ledger: frame 0x[0-9a-f]* .*($want)" "$XT_TMP/err" ||
			xt_fail "$fault ($debug): the exit audit did not name the frame"
	done
done

# --- fwd under ping (and iperf3 TCP when installed). ---
eng_wire_hosts 198.18.7 1500
H2_ADDR=198.18.7.2
eng_start FWD "$E" --iface e1 --iface e2 --mode fwd --cores 0 --interval 0.1
ip netns exec "$H1" ping -c 20 -i 0.02 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1 ||
	{ cat "$XT_TMP/ping"; xt_fail "ping through fwd lost packets"; }
if command -v iperf3 >/dev/null; then
	eng_iperf bytes 5207 2
	# shellcheck disable=SC2154 # eng_iperf sets it (printf -v)
	echo "iperf3: $bytes bytes through fwd"
fi
eng_stop "$FWD" || { rc=$?; cat "$XT_TMP/FWD.err"; xt_fail "fwd exited $rc"; }
n=$(live_lines_ok "$XT_TMP/FWD.json") || xt_fail "fwd: $n"
echo "fwd: $n live ledger lines ok"
[ "$n" -ge 5 ] || xt_fail "fwd: too few live ledger lines ($n)"
eng_ledger_ok "$XT_TMP/FWD.json" || xt_fail "fwd exit ledger not clean"
for p in "$B b0" "$E e1" "$E e2"; do
	# shellcheck disable=SC2086
	eng_no_xdp ${p% *} ${p#* } || xt_fail "XDP program left attached (${p#* })"
done
echo ok
