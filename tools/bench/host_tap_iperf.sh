#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# iperf3 TCP between h1 and the host behind a --host-tap TAP, both directions, through
# xpile fwd on one core: what a vnet header could save on the inject (issue 11, section
# 1: "vnet header and multi-queue if they pay"; docs/hybrid.md).
#
#   tools/bench/host_tap_iperf.sh        HT_SECONDS 4, HT_CORE 1, HT_PERF 0 (1: perf
#                                        record -g the worker for 2 s of each stream)
#
# h1 <-> e1 [xpile fwd e2, TAP xp-e1 = 198.18.7.3] <-> h2. Prints per direction
#   host_tap_iperf dir=D mbit=M engine_core_pct=C
# and with HT_PERF=1 the worker's samples by call chain (TAP read, TAP write, XSK TX...).
set -u
cd "$(dirname "$0")/../.." || exit 2
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing"
secs=${HT_SECONDS:-4}
core=${HT_CORE:-1}
host=198.18.7.3
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }

eng_wire_hosts 198.18.7 1500
eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores "$core" --host-tap e1
eng_quiet "$E" xp-e1
ip -n "$E" addr add "$host/24" dev xp-e1
sleep 0.5
ip netns exec "$H1" ping -c 3 -i 0.1 -W 2 "$host" >/dev/null || xt_fail "the host does not answer"
worker=$(for t in /proc/"$ENG"/task/*; do
	grep -qx "Cpus_allowed_list:[[:space:]]*$core" "$t/status" && echo "${t##*/}"
done | head -1)
for dir in host-h1 h1-host; do
	if [ "$dir" = host-h1 ]; then
		ip netns exec "$H1" iperf3 -s -1 -p 5301 >/dev/null 2>&1 &
		client=("$E" iperf3 -c 198.18.7.1 -B "$host" -p 5301)
	else
		ip netns exec "$E" iperf3 -s -1 -p 5301 -B "$host" >/dev/null 2>&1 &
		client=("$H1" iperf3 -c "$host" -p 5301)
	fi
	spid=$!
	XT_PIDS+=("$spid")
		sleep 0.5
	ppid=
	if [ "${HT_PERF:-0}" = 1 ] && [ -n "$worker" ]; then
		(sleep 1; perf record -q -o "$XT_TMP/$dir.data" -g -t "$worker" -- sleep 2 >/dev/null 2>&1) &
		ppid=$!
		XT_PIDS+=("$ppid")
	fi
	c0=$(cpu_ns "$ENG") t0=$(date +%s%N)
	timeout $((secs + 10)) ip netns exec "${client[@]}" -t "$secs" -J >"$XT_TMP/ip.json" 2>&1 ||
		{ tail -3 "$XT_TMP/ip.json"; xt_fail "iperf3 $dir failed"; }
	c1=$(cpu_ns "$ENG") t1=$(date +%s%N)
	bps=$(grep -A8 '"sum_received"' "$XT_TMP/ip.json" | grep -o '"bits_per_second":[[:space:]]*[0-9.e+]*' | head -1 | grep -o '[0-9.e+]*$')
	echo "host_tap_iperf dir=$dir mbit=$(awk -v b="$bps" 'BEGIN {printf "%.0f", b / 1e6}') engine_core_pct=$(((c1 - c0) * 100 / (t1 - t0)))"
	wait "$spid" 2>/dev/null
	[ -n "$ppid" ] && wait "$ppid" 2>/dev/null
	if [ "${HT_PERF:-0}" = 1 ] && [ -s "$XT_TMP/$dir.data" ]; then
		perf script -i "$XT_TMP/$dir.data" 2>/dev/null | awk -v d="$dir" '
			function flush() {
				if (!n) return
				c = "other kernel"
				if (s ~ / (io_read_mshot|tun_chr_read_iter|io_read) /) c = "tap read (inject)"
				else if (s ~ / (tun_chr_write_iter|io_write|tun_get_user) /) c = "tap write (punt) + host stack"
				else if (s ~ / (__xsk_generic_xmit|xsk_sendmsg|__sys_sendto) /) c = "xsk tx + veth + h1 stack"
				else if (s ~ / finish_task_switch/) c = "switch-in"
				else if (s ~ / (__do_sys_io_uring_enter|io_submit_sqes|tctx_task_work) /) c = "io_uring other"
				else if (first !~ /^(_|do_|x64)/ && s !~ /\[kernel/) c = "user space"
				cnt[c]++; tot++; n = 0; s = " "
			}
			BEGIN { s = " " }
			/^[^ \t]/ { flush(); next }
			/^[ \t]*$/ { flush(); next }
			{ sym = $2; sub(/\+0x.*/, "", sym); if (!n) first = sym; s = s sym " " $3 " "; n++ }
			END { flush(); for (c in cnt) printf "host_tap_iperf dir=%s share=%.1f%% %s\n", d, 100 * cnt[c] / tot, c }' | sort -t= -k3 -rn
	fi
done
eng_stop "$ENG" || xt_fail "engine exited with status $?"
grep '"type":"host_tap"' "$XT_TMP/ENG.json"
