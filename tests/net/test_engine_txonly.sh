#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# txonly sends exactly K packets over 16 flows; rxdrop on the peer counts exactly K.
# Both engines exit 0 with clean ledgers.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

K=${K:-50000}
eng_pair

eng_start RX "$B" --iface b0 --mode rxdrop --cores 1 --ledger-debug --quiet --rx-ring 8192 --fill-ring 8192
ip netns exec "$A" timeout 30 "$XPILE" run --iface a0 --mode txonly --cores 0 --count "$K" \
	--rate 50000 --flows 16 --dst-mac "$BMAC" --pkt-size 64 --json --ledger-debug --tx-budget 128 \
	>"$XT_TMP/tx.json" 2>"$XT_TMP/tx.err" || { rc=$?; cat "$XT_TMP/tx.err"; xt_fail "txonly exited $rc"; }
sent=$(eng_sum "$XT_TMP/tx.json" tx_packets)
[ "$sent" = "$K" ] || xt_fail "txonly sent $sent packets, asked $K"
eng_ledger_ok "$XT_TMP/tx.json" || xt_fail "txonly ledger not clean"

# Everything sent is in the receiver's rings within a moment.
last_rx() { [ "$(grep -o '"rx_packets":[0-9]*' "$XT_TMP/RX.json" | tail -1 | cut -d: -f2)" = "$K" ]; }
xt_wait_for 5 last_rx
eng_stop "$RX" || { rc=$?; cat "$XT_TMP/RX.err"; xt_fail "rxdrop exited with status $rc"; }
got=$(eng_sum "$XT_TMP/RX.json" rx_packets)
echo "txonly sent $sent, rxdrop counted $got"
[ "$got" = "$K" ] || xt_fail "rxdrop counted $got packets, expected exactly $K"
bytes=$(eng_sum "$XT_TMP/RX.json" rx_bytes)
[ "$bytes" = "$((K * 60))" ] || xt_fail "rxdrop counted $bytes bytes, expected $((K * 60))"
eng_ledger_ok "$XT_TMP/RX.json" || xt_fail "rxdrop ledger not clean"
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
