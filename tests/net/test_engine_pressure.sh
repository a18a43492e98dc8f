#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two overloads that must cost packets but never a frame:
#  - fill starvation: a UMEM far smaller than the rings (256 frames for 4096-entry fill
#    rings), flooded;
#  - RX ring overrun: 64-entry RX ring, flooded without a rate limit.
# After each flood a slow burst of exactly M packets is counted exactly (the engine
# recovered), the kernel's and the engine's counters show the overload happened, and
# the ledger is clean at exit.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

M=${M:-500}
eng_pair

send() { # count rate(0 = unlimited)
	ip netns exec "$A" timeout 30 "$XPILE" run --iface a0 --mode txonly --count "$1" \
		--rate "$2" --quiet >"$XT_TMP/gen.out" 2>&1 || { cat "$XT_TMP/gen.out"; xt_fail "generator exited"; }
}

scenario() { # label, counter that proves the overload, rxdrop options...
	local label=$1 proof=$2 before after
	shift 2
	eng_start SINK "$B" --iface b0 --mode rxdrop --interval 0.1 --ledger-debug --audit "$@"
	send 200000 0
	sleep 0.3
	before=$(eng_last "$XT_TMP/SINK.json" b0 0 rx_packets)
	send "$M" 5000
	got_all() { [ "$(eng_last "$XT_TMP/SINK.json" b0 0 rx_packets)" -ge $((before + M)) ]; }
	xt_wait_for 5 got_all
	sleep 0.3
	after=$(eng_last "$XT_TMP/SINK.json" b0 0 rx_packets)
	eng_stop "$SINK" || { rc=$?; cat "$XT_TMP/SINK.err"; xt_fail "$label: engine exited with status $rc"; }
	local p
	p=$(eng_last "$XT_TMP/SINK.json" b0 0 "$proof")
	echo "$label: flood received $before of 200000 ($proof=$p), then $((after - before)) of $M"
	[ "${p:-0}" -gt 0 ] || xt_fail "$label: no overload seen ($proof = 0)"
	[ "$((after - before))" = "$M" ] || xt_fail "$label: after the flood $((after - before)) of $M counted"
	eng_ledger_ok "$XT_TMP/SINK.json" || { grep ledger "$XT_TMP/SINK.json"; xt_fail "$label: ledger not clean"; }
	eng_no_xdp "$B" b0 || xt_fail "$label: XDP program left attached"
}

scenario starvation rx_fill_ring_empty_descs --frames 256 --cache 32 --batch 16
scenario overrun rx_ring_full --rx-ring 64 --fill-ring 4096 --batch 8
echo ok
