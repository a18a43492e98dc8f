#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The AF_XDP socket counters of the agent's clients (metrics.xsk_stats "pidfd"), on
# a kernel without xsk_diag:
#  - the default source (diag) reports xpile_xsk_stats_available{source="diag"} 0;
#  - `xpile run --uds` as user nobody (CAP_NET_RAW+CAP_IPC_LOCK) receives K packets
#    on b0 through the agent's XSKMAP; /metrics then shows its socket at
#    {interface="b0",queue="0"};
#  - another, flooded with a 64-entry RX ring, the kernel drops (rx_ring_full > 0); every
#    xpile_xsk_*_total the agent serves equals the kernel's XDP_STATISTICS that the
#    engine itself reads and prints; promtool check metrics finds nothing;
#  - the engine exits: its series go at the next scrape;
#  - an agent without CAP_SYS_PTRACE cannot read the nobody's sockets: one log line,
#    xpile_xsk_stats_available{source="pidfd"} 0, no series, traffic unaffected.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
command -v setpriv >/dev/null || xt_skip "setpriv missing: apt-get install util-linux"
command -v promtool >/dev/null || xt_skip "promtool missing: apt-get install prometheus"
command -v curl >/dev/null || xt_skip "curl missing: apt-get install curl"

eng_pair 198.18.71
ag_dir D
cp "$XPILE" "$D/xpile" && chmod 755 "$D/xpile"
cat >"$D/agent.json" <<EOF
{
  "interfaces": [{"name": "b0", "queues": 1, "default": "pass",
                  "rules": ["udp dport 7000 action xsk"]}],
  "metrics": {"xsk_stats": "pidfd"},
  "control": {"path": "$D/ctl.sock"},
  "device_plugin": {"dir": "$D/dp", "mode": "0666"}
}
EOF
S=$D/dp/b0/afxdp.sock
scrape() { ip netns exec "$B" curl -s -m 5 http://127.0.0.1:9469/metrics; }
series() { # metric-name text -> its value for b0 queue 0, or nothing
	grep "^$1{interface=\"b0\",queue=\"0\"} " <<<"$2" | cut -d' ' -f2
}
engine() { # name [options]: the engine as nobody
	local name=$1
	shift
	ip netns exec "$B" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all,+net_raw,+ipc_lock --ambient-caps=-all,+net_raw,+ipc_lock \
		--bounding-set=-all,+net_raw,+ipc_lock --no-new-privs -- \
		"$D/xpile" run --iface b0 --mode rxdrop --uds "$S" --interval 0.2 --json \
		--duration 30 "$@" >"$XT_TMP/$name.json" 2>"$XT_TMP/$name.err" &
	XT_PIDS+=($!)
	printf -v "$name" '%s' "$!"
	xt_wait_for 5 grep -q '"type":"ready"' "$XT_TMP/$name.json" ||
		xt_fail "engine not ready: $(cat "$XT_TMP/$name.err")"
}
flood() { # count
	ip netns exec "$A" timeout 30 "$XPILE" run --iface a0 --mode txonly --count "$1" --rate 0 \
		--dst-mac "$BMAC" --dst-ip 198.18.71.2 --dst-port 7000 --quiet >"$XT_TMP/gen.out" 2>&1 ||
		xt_fail "generator: $(cat "$XT_TMP/gen.out")"
}

# The default source, xsk_diag, says it has nothing here (and that is true).
sed 's/"pidfd"/"diag"/' "$D/agent.json" >"$D/diag.json"
ag_start AG "$B" "$D/diag.json" --detach-on-exit
grep -qx 'xpile_xsk_stats_available{source="diag"} 0' <<<"$(scrape)" ||
	xt_fail "diag source: $(scrape | grep xsk_stats_available)"
{ zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null; } |
	grep -qx '# CONFIG_XDP_SOCKETS_DIAG is not set' ||
	xt_fail "the agent says the kernel has no xsk_diag, but its config does not say so"
ag_stop "$AG" || xt_fail "agent exit status $?"
echo "xsk_stats diag: the kernel has no xsk_diag (CONFIG_XDP_SOCKETS_DIAG), reported as 0"

ag_start AG "$B" "$D/agent.json" --detach-on-exit
engine E1
K=200
st_udp "$A" 198.18.71.2 7000 $K || xt_fail "sending to b0 failed"
got_k() { [ "$(eng_last "$XT_TMP/E1.json" b0 0 rx_packets)" = $K ]; }
xt_wait_for 5 got_k || xt_fail "engine counted $(eng_last "$XT_TMP/E1.json" b0 0 rx_packets) of $K: $(grep interval "$XT_TMP/E1.json" | tail -1)"
m=$(scrape)
[ "$(series xpile_xsk_sockets "$m")" = 1 ] ||
	xt_fail "no socket of the engine in /metrics: $(grep xpile_xsk "$m")"
grep -qx 'xpile_xsk_stats_available{source="pidfd"} 1' <<<"$m" ||
	xt_fail "pidfd source not available: $(grep xsk_stats_available <<<"$m")"
[ "$(series xpile_xsk_zerocopy "$m")" = 0 ] || xt_fail "veth in copy mode, metrics say: $(series xpile_xsk_zerocopy "$m")"
echo "$K of $K packets to the unprivileged engine; /metrics shows its socket at b0 queue 0"

# The flood, with a 64-entry RX ring, then the counters at rest: the agent's read
# equals the engine's own.
kill -INT "$E1"
wait "$E1" || xt_fail "engine exit $?: $(cat "$XT_TMP/E1.err")"
engine E1 --rx-ring 64 --fill-ring 4096 --batch 8
flood 200000
stable() {
	local a b
	a=$(eng_last "$XT_TMP/E1.json" b0 0 rx_packets)
	sleep 0.5
	b=$(eng_last "$XT_TMP/E1.json" b0 0 rx_packets)
	[ "$a" = "$b" ]
}
xt_wait_for 10 stable || xt_fail "engine still receiving after the flood"
cp "$XT_TMP/E1.json" "$XT_TMP/E1.before"
m=$(scrape)
sleep 0.5 # an engine interval line after the scrape
pairs="rx_dropped:xpile_xsk_rx_dropped_total rx_invalid_descs:xpile_xsk_rx_invalid_descs_total
rx_ring_full:xpile_xsk_rx_ring_full_total rx_fill_ring_empty_descs:xpile_xsk_fill_ring_empty_total
tx_invalid_descs:xpile_xsk_tx_invalid_descs_total tx_ring_empty_descs:xpile_xsk_tx_ring_empty_total"
line=""
for p in $pairs; do
	k=${p%%:*} name=${p#*:}
	# The engine's reads just before and after the scrape bound the agent's: equal
	# at rest (the RX counters), and within them for what an idle engine still moves
	# (its TX kicks find the TX ring empty).
	lo=$(eng_last "$XT_TMP/E1.before" b0 0 "$k")
	hi=$(eng_last "$XT_TMP/E1.json" b0 0 "$k")
	have=$(series "$name" "$m")
	[ -n "$lo" ] && [ -n "$have" ] && [ "$lo" -le "$have" ] && [ "$have" -le "$hi" ] ||
		xt_fail "$name: agent says '$have', the engine's XDP_STATISTICS $k '$lo'..'$hi'"
	case $k in rx_*) [ "$lo" = "$hi" ] || xt_fail "$k moved at rest: $lo -> $hi" ;; esac
	line+=" $k=$have"
done
[ "$(eng_last "$XT_TMP/E1.json" b0 0 rx_ring_full)" -gt 0 ] ||
	xt_fail "the flood did not overrun the 64-entry ring (rx_ring_full 0): nothing proven"
promtool check metrics <<<"$m" >"$XT_TMP/promtool" 2>&1 || xt_fail "promtool: $(cat "$XT_TMP/promtool")"
echo "flood: agent's counters = the kernel's (${line# }), promtool clean"

kill -INT "$E1"
wait "$E1" || xt_fail "engine exit $?: $(cat "$XT_TMP/E1.err")"
m=$(scrape)
grep -q '^xpile_xsk_[a-z_]*{interface="b0"' <<<"$m" &&
	xt_fail "series of an exited engine: $(grep '^xpile_xsk' <<<"$m")"
echo "engine gone: its series gone"
ag_stop "$AG" || xt_fail "agent exit status $?"

# Without CAP_SYS_PTRACE the agent cannot read a nobody's sockets; it says so once.
printf '#!/bin/sh\nexec setpriv --bounding-set=-sys_ptrace -- %s "$@"\n' "$(realpath "$AGENT")" >"$D/noptrace"
chmod 755 "$D/noptrace"
# The host's bpffs is out of its reach inside ip netns exec (PID 1's and kthreadd's roots
# need CAP_SYS_PTRACE): named with --bpffs, as its refusal says.
st_bpffs_bind HOSTFS
AGENT=$D/noptrace ag_start AG "$B" "$D/agent.json" --detach-on-exit --bpffs "$HOSTFS"
engine E2
st_udp "$A" 198.18.71.2 7000 $K || xt_fail "sending to b0 failed"
m=$(scrape)
m=$(scrape) # one log line however many scrapes
grep -qx 'xpile_xsk_stats_available{source="pidfd"} 0' <<<"$m" ||
	xt_fail "without CAP_SYS_PTRACE: $(grep xsk_stats_available <<<"$m")"
[ -z "$(series xpile_xsk_sockets "$m")" ] || xt_fail "series without CAP_SYS_PTRACE"
[ "$(grep -c 'needs CAP_SYS_PTRACE' "$XT_TMP/AG.log")" = 1 ] ||
	xt_fail "not one line: $(grep xsk_stats "$XT_TMP/AG.log")"
kill -INT "$E2"
wait "$E2" || xt_fail "engine exit $?"
[ "$(eng_sum "$XT_TMP/E2.json" rx_packets)" = $K ] || xt_fail "traffic without CAP_SYS_PTRACE"
echo "without CAP_SYS_PTRACE: $(grep -o 'xsk_stats pidfd: .*' "$XT_TMP/AG.log")"
ag_stop "$AG" || xt_fail "agent exit status $?"
st_no_trace "$B" b0 || xt_fail "left behind"
echo PASS
