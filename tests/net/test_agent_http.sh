#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Hostile HTTP clients on xpile-agent's metrics port (issue 21): slow clients that send
# a header line every 3 s and never end their headers, bounded in count (70 from the
# prober's own address 127.0.0.1, 70 from 127.0.0.2, 72 from six more addresses, more
# than the 64 connections the agent serves at once) and in time (9 s):
#  - /healthz answers every probe within a second all the while (the DaemonSet's
#    liveness probe waits 2 s), from the very address of 70 of them;
#  - one peer holds at most 16 connections, all peers together 64: a new one takes the
#    place of the oldest still sending its headers;
#  - every slow connection is closed within the 5 s the request line and headers may
#    take, however it trickles; /metrics says how many were closed and why.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
command -v curl >/dev/null || xt_skip "curl missing: apt-get install curl (tools/setup/install-deps.sh)"

eng_pair 198.18.44
ag_dir D
cat >"$D/agent.json" <<EOC
{
  "interfaces": [{"name": "b0", "default": "pass"}],
  "control": {"path": "$D/ctl.sock"},
  "metrics": {"address": "127.0.0.1:9469"},
  "device_plugin": {"dir": "$D/dp"}
}
EOC
ag_start AG "$B" "$D/agent.json" --detach-on-exit
inb() { ip netns exec "$B" "$@"; }
slow() { # NAME N SRC...
	inb python3 tests/lib/slowloris.py 127.0.0.1 9469 "$2" 3 9 "$3" >"$XT_TMP/$1.out" 2>&1 &
	XT_PIDS+=($!)
}
slow same 70 127.0.0.1
slow peer 70 127.0.0.2
slow many 72 127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8
sleep 0.3
worst=0 bad=()
for _ in $(seq 16); do
	r=$(inb curl -s -m 2 -o /dev/null -w '%{http_code} %{time_total}' http://127.0.0.1:9469/healthz)
	ms=$(awk '{ printf "%d", $2 * 1000 }' <<<"$r")
	[ "${r%% *}" = 200 ] && [ "$ms" -lt 1000 ] || bad+=("$r")
	[ "$ms" -gt "$worst" ] && worst=$ms
	sleep 0.5
done
wait_slow() { for _ in $(seq 100); do [ -s "$XT_TMP/$1.out" ] && return; sleep 0.1; done; }
for n in same peer many; do wait_slow $n; done
echo "slow clients: same address $(cat "$XT_TMP/same.out"); another $(cat "$XT_TMP/peer.out"); six more $(cat "$XT_TMP/many.out")"
[ ${#bad[@]} = 0 ] || xt_fail "/healthz under slow clients: ${#bad[@]} of 16 probes failed or took 1 s or more: ${bad[*]}"
echo "/healthz: 16 of 16 probes answered 200, the slowest in $worst ms"
val() { grep -o "$2=[0-9.]*" "$XT_TMP/$1.out" | cut -d= -f2; }
for n in same peer; do
	[ "$(val $n opened)" = 70 ] && [ "$(val $n burst_open)" -le 16 ] ||
		xt_fail "$n: one peer held more than 16 connections: $(cat "$XT_TMP/$n.out")"
done
[ $(($(val same burst_open) + $(val peer burst_open) + $(val many burst_open))) -le 64 ] ||
	xt_fail "the peers held more than 64 connections together"
for n in same peer many; do
	[ "$(val $n still_open)" = 0 ] && awk -v h="$(val $n max_held)" 'BEGIN { exit !(h <= 6.5) }' ||
		xt_fail "$n: slow connections not closed within the 5 s header deadline: $(cat "$XT_TMP/$n.out")"
done
m=$(inb curl -s -m 2 http://127.0.0.1:9469/metrics | grep '^xpile_http_connections_closed_total')
echo "$m"
for r in header_deadline peer_limit connection_limit; do
	grep -q "reason=\"$r\"} [1-9]" <<<"$m" || xt_fail "no connection closed for $r in /metrics"
done
ag_stop "$AG" || xt_fail "agent exit status $?"
st_no_trace "$B" b0 || xt_fail "left behind"
echo PASS
