# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the examples' suites (tests/net/test_example_*.sh): the programs of
# tools/examples/ (build/examples/NAME) run between two hosts in namespaces. Source
# after tests/lib/netns.sh and tests/lib/engine.sh.
#
#   ex_require NAME...          fail unless build/examples/NAME exist (make builds them)
#   ex_start VAR NS NAME ARGS   start NAME ARGS --json in NS; VAR gets its pid, stdout in
#                               $XT_TMP/VAR.json, stderr in VAR.err; returns once ready
#   ex_stop PID                 SIGINT, wait; the program's exit status
#   ex_field FILE KEY           KEY=N of the program's closing line in FILE
#   ex_iperf_udp VAR ADDR PORT SECS ARGS   iperf3 UDP H1 -> ADDR; VAR = datagrams received
#   ex_mac NS IF                the interface's MAC
#   ex_pings COUNT ADDR         pings from H1, prints the number answered

EXAMPLES=${EXAMPLES:-$XT_BUILD/examples}

ex_require() {
	local n
	eng_require
	command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"
	for n in "$@"; do
		[ -x "$EXAMPLES/$n" ] || xt_fail "$EXAMPLES/$n not built: run make (the examples need xpile/engine.h's functions in libxpile)"
	done
}

ex_start() {
	local var=$1 ns=$2 name=$3 pid
	shift 3
	: >"$XT_TMP/$var.json"
	ip netns exec "$ns" "$EXAMPLES/$name" "$@" --json >"$XT_TMP/$var.json" 2>"$XT_TMP/$var.err" &
	pid=$!
	XT_PIDS+=("$pid")
	printf -v "$var" '%s' "$pid"
	xt_wait_for 10 grep -q '"type":"ready"' "$XT_TMP/$var.json" || {
		cat "$XT_TMP/$var.err" >&2
		xt_fail "$name $* did not become ready"
	}
}

ex_stop() { eng_stop "$@"; }

ex_field() { grep -o "\b$2=[0-9]*" "$1" | tail -1 | cut -d= -f2; }

ex_mac() { ip -n "$1" -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }

# iperf3 UDP from H1 to ADDR; VAR = datagrams the server received (the client's JSON end
# sum: packets - lost_packets as the server reported them).
ex_iperf_udp() {
	local var=$1 addr=$2 port=$3 secs=$4 got
	shift 4
	ip netns exec "$H2" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	XT_PIDS+=($!)
	xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :$port" || xt_fail "iperf3 server did not start"
	ip netns exec "$H1" timeout 20 iperf3 -u -c "$addr" -p "$port" -t "$secs" -J "$@" \
		>"$XT_TMP/iperf-udp" 2>&1 || { tail -5 "$XT_TMP/iperf-udp" >&2; xt_fail "iperf3 UDP to $addr failed"; }
	got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["end"]["sum"]; print(s["packets"] - s["lost_packets"])' \
		"$XT_TMP/iperf-udp" 2>/dev/null)
	printf -v "$var" '%s' "${got:-0}"
}

ex_pings() {
	ip netns exec "$H1" ping -c "$1" -i 0.05 -W 1 "$2" 2>/dev/null |
		grep -o '[0-9]* received' | cut -d' ' -f1
}
