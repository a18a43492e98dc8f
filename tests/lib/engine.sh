# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the engine's network suites (tests/net/test_engine_*.sh). Source after
# tests/lib/netns.sh.
#
#   eng_require                  skip unless root, the engine and its BPF object exist
#   eng_ns VAR NAME              xt_ns in this shell (not in $(...), whose list the
#                                cleanup trap would never see); VAR gets the real name
#   eng_host NS IF IP/LEN        address, no IPv6 chatter, checksum/TSO/GSO done in software
#   eng_quiet NS IF              no IPv6 (no stray router/neighbour solicitations)
#   eng_start VAR NS ARGS...     start `xpile run ARGS --json` in NS; VAR gets its pid,
#                                output in $XT_TMP/VAR.json (stdout) and VAR.err (stderr);
#                                returns once the engine printed its ready line
#   eng_pair [SUBNET]           A a0 <-> b0 B (hosts at SUBNET.1/.2 if given); A B BMAC
#   eng_pings COUNT ADDR         pings from A, prints the number answered
#   eng_veth NA IA NB IB Q       veth pair with Q queues each way
#   eng_last FILE PORT QUEUE FIELD   latest value of FIELD for one socket
#   eng_wire_hosts SUBNET MTU    H1 h1 <-> e1 [E] e2 <-> h2 H2 (sets H1 H2 E)
#   eng_iperf VAR PORT SECS ARGS iperf3 TCP H1 -> H2_ADDR, VAR = bytes received
#   eng_stop PID                 SIGINT, wait; returns the engine's exit status
#   eng_sum FILE FIELD [TYPE]    sum of FIELD over the TYPE (default summary) lines
#   eng_wait_sum S FILE FIELD TYPE MIN   wait up to S seconds for eng_sum >= MIN
#   eng_ledger_ok FILE           the exit ledger line says ok
#   eng_deals_even FILE          the engine dealt refills, at most 1 in 1000 uneven over channels

XPILE=${XPILE:-$XT_BUILD/xpile}
XT_TMP=$(mktemp -d /tmp/xpile-net.XXXXXX)
xt_on_exit rm -rf "$XT_TMP"

eng_require() {
	xt_require_root
	[ -x "$XPILE" ] || xt_skip "engine not built: run make"
	[ -f "$XT_BUILD/bpf/steer.o" ] || xt_skip "steer program not built: run make"
	command -v ethtool >/dev/null || xt_skip "ethtool missing: apt-get install ethtool"
}

eng_ns() { xt_ns_var "$@"; }

# Polls until the sum of FIELD over TYPE lines of FILE is >= MIN (bounded by SECONDS).
eng_wait_sum() { # seconds file field type min
	local deadline=$((SECONDS + $1))
	while [ "$(eng_sum "$2" "$3" "$4")" -lt "$5" ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}

# The two-namespace set-up most suites use: A (a0) <-veth-> B (b0), no IPv6 chatter.
# With SUBNET (e.g. 198.18.3), a0 gets SUBNET.1/24 and b0 SUBNET.2/24 as hosts, and A
# knows b0's MAC (no ARP needed while an engine holds b0). Sets A, B, BMAC.
eng_pair() { # [subnet]
	eng_ns A a
	eng_ns B b
	xt_veth "$A" a0 "$B" b0
	BMAC=$(ip -n "$B" -o link show b0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
	if [ -n "${1:-}" ]; then
		eng_host "$A" a0 "$1.1/24"
		eng_host "$B" b0 "$1.2/24"
		ip -n "$A" neigh add "$1.2" lladdr "$BMAC" dev a0
	else
		eng_quiet "$A" a0
		eng_quiet "$B" b0
	fi
}

# Pings from A to ADDR; prints how many were answered.
eng_pings() { # count addr
	ip netns exec "$A" ping -c "$1" -i 0.05 -W 1 "$2" 2>/dev/null |
		grep -o '[0-9]* received' | cut -d' ' -f1
}

# xt_veth with N queues each way (veth picks the peer's RX queue = the sender's TX queue).
eng_veth() { # NS_A IF_A NS_B IF_B QUEUES
	local tmp="${XT_ID}q${RANDOM}"
	ip link add "${tmp}a" numtxqueues "$5" numrxqueues "$5" type veth peer name "${tmp}b" \
		numtxqueues "$5" numrxqueues "$5" || xt_fail "veth with $5 queues: create failed"
	ip link set "${tmp}a" netns "$1" || { ip link del "${tmp}a"; xt_fail "veth move failed"; }
	ip link set "${tmp}b" netns "$3" || xt_fail "veth move failed"
	ip -n "$1" link set "${tmp}a" name "$2"
	ip -n "$3" link set "${tmp}b" name "$4"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}

# Two hosts joined only through an engine namespace: H1 h1 <-> e1 [E] e2 <-> h2 H2, the
# hosts at SUBNET.1 and SUBNET.2 (/24), MTU on every veth. Sets H1, H2, E.
eng_wire_hosts() { # subnet (e.g. 198.18.1) mtu
	local p
	eng_ns H1 h1; eng_ns H2 h2; eng_ns E eng
	xt_veth "$H1" h1 "$E" e1
	xt_veth "$H2" h2 "$E" e2
	for p in "$H1 h1" "$E e1" "$E e2" "$H2 h2"; do
		# shellcheck disable=SC2086
		ip -n ${p% *} link set ${p#* } mtu "$2" || xt_skip "veth refuses MTU $2 here"
	done
	eng_host "$H1" h1 "$1.1/24"
	eng_host "$H2" h2 "$1.2/24"
	eng_quiet "$E" e1
	eng_quiet "$E" e2
}

# iperf3 TCP from H1 to H2_ADDR (port, seconds, extra client args); VAR = bytes received.
# Call it directly, not in $(...): its failure must end the suite.
eng_iperf() {
	local var=$1 port=$2 secs=$3 got
	shift 3
	ip netns exec "$H2" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	XT_PIDS+=($!)
	xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :$port" ||
		xt_fail "iperf3 server did not start"
	ip netns exec "$H1" timeout 20 iperf3 -c "${H2_ADDR}" -p "$port" -t "$secs" -J "$@" \
		>"$XT_TMP/iperf" 2>&1 || { tail -5 "$XT_TMP/iperf" >&2; xt_fail "iperf3 TCP failed"; }
	got=$(grep -o '"bytes":[[:space:]]*[0-9]*' "$XT_TMP/iperf" | tail -1 | grep -o '[0-9]*$')
	[ "${got:-0}" -gt 1000000 ] || xt_fail "iperf3 moved only ${got:-0} bytes"
	printf -v "$var" '%s' "$got"
}

# Latest value of FIELD for PORT:QUEUE in FILE (interval or summary lines).
eng_last() { # file port queue field
	grep "\"port\":\"$2\",\"queue\":$3," "$1" | tail -1 | grep -o "\"$4\":[0-9]*" | cut -d: -f2
}

eng_quiet() {
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1" 2>/dev/null
	return 0
}

# Hosts whose packets cross AF_XDP: the kernel hands XDP frames without checksum
# offload state or GSO metadata, so the hosts must finish packets themselves.
eng_host() {
	local ns=$1 ifn=$2 addr=$3
	eng_quiet "$ns" "$ifn"
	ip -n "$ns" addr add "$addr" dev "$ifn"
	ip netns exec "$ns" ethtool -K "$ifn" tx off tso off gso off gro off >/dev/null 2>&1
	return 0
}

# Starts `xpile run ARGS --json` in NS as VAR (pid in VAR, output in $XT_TMP/VAR.json
# and .err) and waits up to 10 s for a line matching PATTERN: 1 if none came.
eng_launch() { # var ns pattern args...
	local var=$1 ns=$2 pattern=$3 pid
	shift 3
	# Emptied here, not by the background job's redirection: an earlier engine's line
	# under the same name must not pass the wait below before this one is up.
	: >"$XT_TMP/$var.json"
	ip netns exec "$ns" "$XPILE" run "$@" --json >"$XT_TMP/$var.json" 2>"$XT_TMP/$var.err" &
	pid=$!
	XT_PIDS+=("$pid")
	printf -v "$var" '%s' "$pid"
	xt_wait_for 10 grep -q "$pattern" "$XT_TMP/$var.json"
}

eng_start() {
	local var=$1 ns=$2
	shift 2
	if ! eng_launch "$var" "$ns" '"type":"ready"' "$@"; then
		cat "$XT_TMP/$var.err" >&2
		xt_fail "engine ($*) did not become ready"
	fi
}

eng_stop() {
	local pid=$1 rc
	kill -INT "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	wait "$pid"
	rc=$?
	return $rc
}

eng_sum() {
	local file=$1 field=$2 type=${3:-summary}
	grep "\"type\":\"$type\"" "$file" | grep -o "\"$field\":[0-9]*" | cut -d: -f2 |
		awk '{s += $1} END {print s + 0}'
}

eng_ledger_ok() {
	grep '"type":"ledger"' "$1" | grep '"when":"exit"' | grep -q '"ok":true' &&
		! grep '"type":"ledger"' "$1" | grep -q '"ok":false'
}

# With the default pull limit (deal.h) a get is even unless a channel ran out within
# max(4n, 256) pulled frames; under fwd's in-flight load that happened 1 time in 26,615
# deals here. Even means: at most 1 in 1000 uneven (unit/test_deal: 99.94% even).
eng_deals_even() {
	local d u
	d=$(eng_sum "$1" deals allocator)
	u=$(eng_sum "$1" deals_uneven allocator)
	[ "$d" -gt 0 ] && [ $((u * 1000)) -le "$d" ]
}

# Nothing of ours may stay attached: no XDP program on IF in NS.
eng_no_xdp() {
	! ip -n "$1" link show "$2" | grep -q 'xdp'
}

# A TAP without --host-tap-keep goes when its last file reference does. The TAP worker's
# io_uring holds one in its registered files, and the kernel tears a ring down in a work
# item after the engine has exited, so "gone" is allowed a few seconds. NS NAME
eng_tap_gone() {
	xt_wait_for 5 eval "! ip -n '$1' link show '$2'"
}
