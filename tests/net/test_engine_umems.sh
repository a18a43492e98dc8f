#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --umem per-port: a UMEM per port, each a carve of the one arena of the node, with its
# own pool, ledger and M3 slices; --umem shared (the default) keeps one for all.
#  1. rxdrop on two ports: the ready line says 2 UMEMs carved from 1 arena, the process
#     maps exactly one memfd for them (its pages back both UMEMs), both ports receive,
#     each UMEM has its slice, live and exit ledger lines, all clean;
#     txonly on both ports sends from each port's own UMEM, nothing copied;
#  2. fwd across the two UMEMs: every ping answered, an iperf3 TCP stream completes,
#     each frame copied into the other port's UMEM (tx_copied), both ledgers clean;
#  3. --umem shared: one UMEM, nothing copied, clean ledger;
#  4. --umem per-port with --host-tap is refused in one line (exit 2).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

eng_wire_hosts 198.18.21 1500
H2_ADDR=198.18.21.2

# ---- 1: rxdrop, two ports, two UMEMs, one arena ----
eng_start R "$E" --iface e1 --iface e2 --mode rxdrop --cores 0 --umem per-port \
	--hugepages never --interval 0.3 --audit
python3 - "$XT_TMP/R.json" <<'EOF' || xt_fail "the ready line does not show 2 UMEMs from 1 arena"
import json, sys
r = next(json.loads(l) for l in open(sys.argv[1]) if '"type":"ready"' in l)
u = r['umem']
print(f"ready: {r['umems']} UMEMs from {r['arenas']} arena(s): {u}")
ok = r['umems'] == 2 and r['arenas'] == 1 and len(u) == 2
ok &= all(x['frames'] > 0 and x['bytes'] > 0 and x['sockets'] == 1 for x in u)
ok &= u[0]['offset'] != u[1]['offset'] and r['umem_bytes'] == u[0]['bytes'] + u[1]['bytes']
sys.exit(0 if ok else 1)
EOF
maps=$(grep -c 'memfd:xpile-umem' "/proc/$R/maps")
fds=$(find "/proc/$R/fd" -lname '/memfd:xpile-umem*' | wc -l)
[ "$maps" = 1 ] && [ "$fds" = 1 ] ||
	{ grep memfd "/proc/$R/maps"; xt_fail "$maps memfd mappings, $fds memfds: not one arena"; }
fd=$(find "/proc/$R/fd" -lname '/memfd:xpile-umem*')
backed=$(($(stat -L -c %b "$fd") * 512))
umems=$(grep -m1 '"type":"ready"' "$XT_TMP/R.json" | grep -o '"umem_bytes":[0-9]*' | cut -d: -f2)
echo "one arena: 1 memfd mapping, $backed bytes of pages for $umems bytes of UMEMs"
[ "$backed" = "$umems" ] || xt_fail "the arena's memfd backs $backed bytes, the UMEMs are $umems"
for u in 0 1; do
	grep '"type":"slice"' "$XT_TMP/R.json" | grep -q "\"umem\":$u," ||
		xt_fail "no M3 slice line for UMEM $u"
done
# Frames that reach each port: the hosts send to the engine's MACs.
m1=$(ip -n "$E" -o link show e1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
m2=$(ip -n "$E" -o link show e2 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$H1" neigh replace 198.18.21.2 lladdr "$m1" dev h1
ip -n "$H2" neigh replace 198.18.21.1 lladdr "$m2" dev h2
ip netns exec "$H1" ping -c 20 -i 0.02 -W 1 198.18.21.2 >/dev/null 2>&1
ip netns exec "$H2" ping -c 20 -i 0.02 -W 1 198.18.21.1 >/dev/null 2>&1
eng_wait_sum 3 "$XT_TMP/R.json" rx_packets interval 40 || true
sleep 0.7 # a live audit after the traffic
eng_stop "$R" || { rc=$?; cat "$XT_TMP/R.err"; xt_fail "rxdrop per-port exited $rc"; }
r1=$(eng_last "$XT_TMP/R.json" e1 0 rx_packets)
r2=$(eng_last "$XT_TMP/R.json" e2 0 rx_packets)
echo "rxdrop per-port: e1 received $r1, e2 $r2"
[ "${r1:-0}" -ge 20 ] && [ "${r2:-0}" -ge 20 ] || xt_fail "a port did not receive (e1 $r1, e2 $r2)"
eng_ledger_ok "$XT_TMP/R.json" || { grep ledger "$XT_TMP/R.json"; xt_fail "ledger not clean"; }
for u in 0 1; do
	for when in live audit exit; do
		grep '"type":"ledger"' "$XT_TMP/R.json" | grep "\"when\":\"$when\"" |
			grep -q "\"ok\":true,\"umem\":$u," ||
			{ grep ledger "$XT_TMP/R.json"; xt_fail "no clean $when ledger line for UMEM $u"; }
	done
done
ip -n "$H1" neigh del 198.18.21.2 dev h1
ip -n "$H2" neigh del 198.18.21.1 dev h2

# ---- 1b: txonly and l2fwd per port need no copy ----
hm1=$(ip -n "$H1" -o link show h1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
rx_of() { ip -n "$1" -s -j link show "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'; }
b1=$(rx_of "$H1" h1) b2=$(rx_of "$H2" h2)
ip netns exec "$E" timeout 20 "$XPILE" run --iface e1 --iface e2 --mode txonly --cores 0 \
	--umem per-port --count 400 --dst-mac "$hm1" --json >"$XT_TMP/T.json" 2>"$XT_TMP/T.err" ||
	{ cat "$XT_TMP/T.err"; xt_fail "txonly per-port exited non-zero"; }
a1=$(($(rx_of "$H1" h1) - b1)) a2=$(($(rx_of "$H2" h2) - b2))
echo "txonly per-port: h1 got $a1, h2 got $a2 of 200 each"
[ "$a1" -ge 200 ] && [ "$a2" -ge 200 ] || xt_fail "txonly per-port: h1 $a1, h2 $a2 of 200"
[ "$(grep -c '"type":"ledger","when":"exit","ok":true' "$XT_TMP/T.json")" = 4 ] ||
	{ grep ledger "$XT_TMP/T.json"; xt_fail "txonly per-port: not 2 clean exit ledgers per UMEM"; }
[ "$(eng_sum "$XT_TMP/T.json" tx_copied)" = 0 ] || xt_fail "txonly per-port copied frames"

# ---- 2: fwd across two UMEMs ----
eng_start F "$E" --iface e1 --iface e2 --mode fwd --cores 0 --umem per-port --interval 0.5 \
	--ledger-debug --audit
ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1
grep -q '20 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "not every ping answered across two UMEMs"; }
eng_iperf bytes 5221 3
# shellcheck disable=SC2154 # eng_iperf sets it (printf -v)
echo "iperf3: $bytes bytes received through fwd across two UMEMs"
eng_stop "$F" || { rc=$?; cat "$XT_TMP/F.err"; xt_fail "fwd per-port exited $rc"; }
eng_ledger_ok "$XT_TMP/F.json" || { grep ledger "$XT_TMP/F.json"; xt_fail "fwd per-port: ledger not clean"; }
for u in 0 1; do
	grep '"type":"ledger","when":"exit"' "$XT_TMP/F.json" | grep -q "\"ok\":true,\"umem\":$u," ||
		xt_fail "fwd per-port: no clean exit ledger for UMEM $u"
done
tx=$(eng_sum "$XT_TMP/F.json" tx_packets)
copied=$(eng_sum "$XT_TMP/F.json" tx_copied)
echo "fwd per-port: tx $tx packets, $copied frames copied across"
[ "$tx" -ge 40 ] && [ "$copied" -ge "$tx" ] || xt_fail "tx $tx packets but $copied frames copied"
grep -q '"type":"allocator","when":"exit","umem":1,' "$XT_TMP/F.json" ||
	xt_fail "no allocator line for UMEM 1"

# ---- 3: shared, as before ----
eng_start S "$E" --iface e1 --iface e2 --mode fwd --cores 0 --umem shared --interval 0.5
ip netns exec "$H1" ping -c 10 -i 0.05 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1
grep -q '10 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "not every ping answered (shared)"; }
eng_stop "$S" || xt_fail "fwd shared exited $?"
grep -m1 '"type":"ready"' "$XT_TMP/S.json" | grep -q '"umems":1,' || xt_fail "shared: not one UMEM"
[ "$(eng_sum "$XT_TMP/S.json" tx_copied)" = 0 ] || xt_fail "shared: frames were copied"
eng_ledger_ok "$XT_TMP/S.json" || xt_fail "shared: ledger not clean"
[ "$(grep -c '"type":"ledger","when":"exit"' "$XT_TMP/S.json")" = 2 ] ||
	xt_fail "shared: not one UMEM's exit ledger (audit and reclaim lines)"

# ---- 4: what per-port cannot do ----
out=$(ip netns exec "$E" timeout 10 "$XPILE" run --iface e1 --iface e2 --mode fwd --cores 0 \
	--umem per-port --host-tap e1 2>&1)
rc=$?
echo "per-port with --host-tap: exit $rc: $out"
[ "$rc" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q -- '--umem shared' <<<"$out" ||
	xt_fail "--umem per-port --host-tap: want one line naming --umem shared, exit 2"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
echo "ok"
