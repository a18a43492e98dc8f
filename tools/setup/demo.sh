#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The README's main job (`make demo`): two hosts joined only through the xpile engine.
#
#   [h1] veth0 198.18.0.1 <-veth-> xa [xp: xpile run --mode fwd] xb <-veth-> veth0 198.18.0.2 [h2]
#
# The engine's namespace has no bridge, no forwarding and no addresses: every frame
# between h1 and h2, ARP included, goes xa -> XDP steer -> AF_XDP -> engine -> AF_XDP TX
# -> xb (and back). The demo pings h2 from h1, runs an iperf3 TCP stream h1 -> h2 while
# the engine prints its live per-port stats, shows the steer program's own counters
# (`xpile-loader stats`), stops the engine (which audits its frame ledger) and removes
# everything it created, even when interrupted.
#
# Environment:
#   DEMO_QUICK=1        short run (3 pings, 2 s of iperf3), used by tests/net/test_demo.sh
#   DEMO_SECONDS=N      iperf3 duration (default 8)
#   DEMO_FWD=bridge     same hosts joined by a kernel bridge instead, to compare
#   DEMO_ENGINE_ARGS    extra `xpile run` options (e.g. --busy-poll, --layout aligned)
#   DEMO_CORE=N         core of the engine's worker (default: the last one)
#   DEMO_TX_CSUM=on     leave the hosts' TX checksum offload on (shows why it is off)
#   XPILE_BUILD         build directory (default build)
#
# Hosts' veths: TX checksum offload off, nothing else. A veth hands its peer packets
# whose TCP/UDP checksum is still to be completed (CHECKSUM_PARTIAL); XDP and AF_XDP
# see only the bytes, the engine copies them out of the other port as they are, and h2
# drops every TCP segment for a bad checksum: with DEMO_TX_CSUM=on, iperf3 cannot even
# connect (its SYN is dropped) while ping still works (ICMP checksums are always
# computed in software). TSO needs no switch: attaching XDP to xa/xb makes the kernel
# drop TSO from the hosts' veths (their peers' program is not frags-aware), and GSO,
# which stays on, segments in software and fills the checksums in.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

quick=${DEMO_QUICK:-0}
secs=${DEMO_SECONDS:-8}
fwd=${DEMO_FWD:-xpile}
npings=10
[ "$quick" = 1 ] && secs=2 npings=3
core=${DEMO_CORE:-$(($(nproc) - 1))}
build=${XPILE_BUILD:-build}
xpile=$build/xpile

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP, AF_XDP): run 'sudo make demo'"
tools/setup/install-deps.sh || die "missing packages could not be installed (see above)"
case $fwd in
xpile) [ -x "$xpile" ] || die "$xpile not built: run 'make' (or 'make demo')" ;;
bridge) ;;
*) die "DEMO_FWD=$fwd: use xpile or bridge" ;;
esac

. tools/lib/netns.sh

say "1. two hosts, one engine: namespaces and veth pairs"
xt_ns h1 >/dev/null && xt_ns xp >/dev/null && xt_ns h2 >/dev/null ||
	die "cannot create namespaces"
h1=$XT_ID-h1 xp=$XT_ID-xp h2=$XT_ID-h2
xt_veth "$h1" veth0 "$xp" xa
xt_veth "$xp" xb "$h2" veth0
ip -n "$h1" addr add 198.18.0.1/24 dev veth0
ip -n "$h2" addr add 198.18.0.2/24 dev veth0
for h in "$h1" "$h2"; do
	[ "${DEMO_TX_CSUM:-off}" = on ] && break
	ip netns exec "$h" ethtool -K veth0 tx off >/dev/null 2>&1 ||
		die "ethtool -K veth0 tx off failed in $h"
done
echo "  h1 ($h1)  veth0 198.18.0.1/24  <->  xa  [$xp]  xb  <->  veth0 198.18.0.2/24  h2 ($h2)"
echo "  hosts' veth0: tx-checksumming off: XDP/AF_XDP copy frames without completing"
echo "  their checksums (see the header of $0)"

say "2. the forwarder: $fwd"
epid=
if [ "$fwd" = bridge ]; then
	ip -n "$xp" link add br0 type bridge
	ip -n "$xp" link set xa master br0
	ip -n "$xp" link set xb master br0
	ip -n "$xp" link set br0 up
	echo "  kernel bridge br0 in $xp (comparison run, no xpile)"
else
	# shellcheck disable=SC2086
	elog=$(mktemp /tmp/xpile-demo-engine.XXXXXX)
	cap=$(mktemp /tmp/xpile-demo-capture.XXXXXX)
	xt_on_exit "rm -f '$elog' '$cap'"
	echo "  ip netns exec $xp $xpile run --iface xa --iface xb --cores $core --mode fwd --interval 1 --host-tap xa --capture $cap --capture-rule icmp ${DEMO_ENGINE_ARGS:-}"
	# libbpf/libxdp notes that only say `ip netns exec` hid the bpffs (so no libxdp
	# dispatcher) or that libxdp's own sections are unknown to libbpf 1.1.
	quiet_libs='/^libbpf: elf: skipping unrecognized data section/d
		/^libxdp: \(No bpffs found\|Can.t use dispatcher\|Falling back to loading single\)/d'
	# The engine's lines go through sed so they show up prefixed, live, between the
	# ping and iperf3 lines (the engine flushes each line itself; stdbuf's preload
	# would clash with an ASan build). `ip netns exec` execs, so $! is the engine.
	# shellcheck disable=SC2086
	ip netns exec "$xp" "$xpile" run --iface xa --iface xb --cores "$core" \
		--mode fwd --interval 1 --host-tap xa --capture "$cap" --capture-rule icmp \
		${DEMO_ENGINE_ARGS:-} \
		> >(tee "$elog" | sed -u -e "$quiet_libs" -e 's/^/  [xpile] /') 2>&1 &
	epid=$!
	XT_PIDS+=("$epid")
	for d in xa xb; do
		xt_wait_for 15 bash -c "ip -n '$xp' link show $d | grep -q 'prog/xdp' || ! kill -0 $epid" ||
			die "the engine did not attach to $d within 15 s (its output is above)"
		kill -0 "$epid" 2>/dev/null || die "the engine exited at start-up (its output is above)"
	done
	# Sockets go into the XSKMAP after the program attaches: wait for "ready".
	xt_wait_for 5 grep -q 'ready' "$elog"
	for d in xa xb; do
		echo "  $d: $(ip -n "$xp" link show $d | grep -o 'prog/xdp id [0-9]* name [a-z_]*')"
	done
	# The host's own interface on the segment the engine forwards (issue 11).
	ip netns exec "$xp" sysctl -qw net.ipv6.conf.xp-xa.disable_ipv6=1
	ip -n "$xp" addr add 198.18.0.3/24 dev xp-xa
	echo "  the engine's host: TAP xp-xa 198.18.0.3/24 (xa's MAC; punt and inject on io_uring)"
fi

say "3. ping h1 -> h2 through it"
ping_out=$(ip netns exec "$h1" ping -c "$npings" -i 0.2 -W 2 198.18.0.2 2>&1)
# shellcheck disable=SC2001 # a prefix on every line of a multi-line value
echo "$ping_out" | sed 's/^/  [ping] /'
got=$(echo "$ping_out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
[ "${got:-0}" = "$npings" ] || die "ping: ${got:-0} of $npings answered"

if [ -n "$epid" ]; then
	say "3b. ping h1 -> the engine's host (198.18.0.3 on xp-xa, through punt and inject)"
	ping_out=$(ip netns exec "$h1" ping -c "$npings" -i 0.2 -W 2 198.18.0.3 2>&1)
	# shellcheck disable=SC2001 # a prefix on every line of a multi-line value
	echo "$ping_out" | sed 's/^/  [ping] /'
	got=$(echo "$ping_out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
	[ "${got:-0}" = "$npings" ] || die "ping to the host: ${got:-0} of $npings answered"
fi

say "4. iperf3 TCP h1 -> h2 for ${secs}s through it"
ilog=$(mktemp /tmp/xpile-demo-iperf.XXXXXX)
xt_on_exit "rm -f '$ilog'"
ip netns exec "$h2" iperf3 -s -1 -B 198.18.0.2 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$h2" bash -c "ss -ltn | grep -q 198.18.0.2:5201" ||
	die "iperf3 server did not start in h2"
ip netns exec "$h1" timeout $((secs + 15)) iperf3 -c 198.18.0.2 -t "$secs" -i 1 -f m --forceflush \
	--connect-timeout 3000 >"$ilog" 2>&1 &
ipid=$!
XT_PIDS+=("$ipid")
# Keep iperf3's report for the verdict while showing its lines as they come.
# In the background so that `wait`, which a signal interrupts, is what the shell sits
# in: SIGTERM/SIGINT then clean up at once instead of after the stream.
tail -n +1 -f --pid="$ipid" "$ilog" 2>/dev/null | sed -u 's/^/  [iperf3] /' &
tpid=$!
wait "$ipid"
irc=$?
wait "$tpid"
rate=$(awk '/sender/ {print $(NF-3), $(NF-2)}' "$ilog" | tail -1)
[ $irc = 0 ] && [ -n "$rate" ] || die "iperf3 failed (exit $irc)"

erc=0
if [ -n "$epid" ] && [ -x "$build/xpile-loader" ]; then
	say "5. the XDP side: the steer program's verdict counters (xpile-loader stats)"
	for d in xa xb; do
		ip netns exec "$xp" "$build/xpile-loader" stats "$d" 2>&1 |
			grep -v ' 0 pkts ' | sed 's/^/  [xdp] /'
	done
fi
if [ -n "$epid" ]; then
	say "6. stop the engine: it drains, audits its frame ledger and detaches"
	kill -TERM "$epid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$epid" 2>/dev/null || break; sleep 0.1; done
	wait "$epid"
	erc=$?
	sleep 0.2
	for d in xa xb; do
		ip -n "$xp" link show $d | grep -q 'prog/xdp' &&
			die "the engine left its XDP program on $d"
	done
	[ $erc = 0 ] || die "the engine exited with status $erc"
	sleep 0.2 # the last lines still pass through sed
	grep -q 'ledger: ok' "$elog" || die "the engine printed no clean ledger audit at exit"
	fwd="xpile (ledger clean)"
	say "7. the engine's capture (--capture-rule icmp), read by tcpdump"
	tcpdump -nn -r "$cap" 2>/dev/null | head -n 4 | sed 's/^/  [tcpdump] /'
	n=$(tcpdump -nn -r "$cap" 2>/dev/null | wc -l)
	echo "  [tcpdump] ... $n ICMP records in all (each ping rx on one port, tx on the other)"
	[ "$n" -ge $((4 * npings)) ] || die "the capture holds $n records, want at least $((4 * npings))"
fi

say "demo OK: $npings/$npings pings answered, iperf3 TCP $rate through $fwd; cleaning up"
