#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The idle worker's wait (issue 11, section 3): fwd with both ports on one worker sleeps
# between pings, on io_uring (one-shot polls armed at each sleep, the default where allowed) and on poll();
# each says which it uses, once; every ping is answered, an iperf3 stream completes
# (wake-ups under load: re-arming after the CQ overflows) and the ledger is clean.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

eng_wire_hosts 198.18.8 1500
H2_ADDR=198.18.8.2
for wait in uring poll auto; do
	# A name of its own per start: eng_start waits for the ready line in $XT_TMP/NAME.json,
	# and a file the last engine wrote still holds that line until the new one opens it.
	v=ENG_$wait
	eng_start "$v" "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug --idle-wait "$wait"
	out=$XT_TMP/$v
	want=io_uring
	[ "$wait" = poll ] && want=poll
	# An engine started again on the same veth may miss its first packets for a while
	# after its ready line (not yet understood): wait until one ping gets through.
	xt_wait_for 5 ip netns exec "$H1" ping -c 1 -W 1 "$H2_ADDR" ||
		xt_fail "--idle-wait $wait: no ping through the engine within 5 s"
	ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1
	grep -q '20 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "--idle-wait $wait: pings lost"; }
	rtt=$(grep -o 'rtt [^=]*= [0-9.]*/[0-9.]*' "$XT_TMP/ping" | cut -d/ -f5)
	eng_iperf bytes 5210 2
	eng_stop "${!v}" || { rc=$?; cat "$out.err"; xt_fail "--idle-wait $wait: exit status $rc"; }
	eng_ledger_ok "$out.json" || xt_fail "--idle-wait $wait: ledger not clean"
	# Said by the worker as it starts, which may be after the ready line on a busy machine.
	n=$(grep -c '"type":"idle_wait"' "$out.json")
	[ "$n" = 1 ] || { cat "$out.err"; xt_fail "--idle-wait $wait: $n idle_wait lines, want 1"; }
	grep -q "\"type\":\"idle_wait\".*\"wait\":\"$want\"" "$out.json" ||
		{ grep idle_wait "$out.json"; xt_fail "--idle-wait $wait: the engine does not say $want"; }
	# shellcheck disable=SC2154 # eng_iperf sets it (printf -v)
	echo "idle wait $wait ($want): 20/20 pings, avg rtt ${rtt} ms, iperf3 $bytes bytes"
done
echo ok
