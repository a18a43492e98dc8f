#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --mode router (issue 27): H1 h1 <-> e1 [R: xpile router, TAPs xp-e1 xp-e2] e2 <-> h2 H2.
# The router's addresses are on its TAPs; the kernel of R is its control plane. Real
# traffic: ping (IPv4, IPv6), traceroute showing the router's hop (TTL expiry punted,
# the kernel's time exceeded), UDP and an iperf3 TCP stream forwarded by the fast path;
# the first packets punted until ARP/ND resolve (no_neigh), pings to the router's own
# addresses punted (local); a route added under traffic is followed, deleted it punts
# no_route (the kernel answers unreachable), a blackhole drops and a prohibit punts;
# a neighbour deleted is punted, not black-holed, and comes back; IP options punted.
# The exit line counts each reason; the ledger is clean.
# RT_XDP=on (the default): the hosts' GRO on, so the router's ports take redirected
# frames and the XDP fast path forwards (bpf_fib_lookup); a host's GRO turned off under
# traffic moves its routes to the engine, and back. RT_XDP=off (test_router_engine.sh):
# --router-xdp off, every packet through the engine.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/router.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"
command -v traceroute >/dev/null || xt_skip "traceroute missing: apt-get install traceroute"
[ -c /dev/net/tun ] || xt_skip "/dev/net/tun missing: modprobe tun"

RT_XDP=${RT_XDP:-on}
export RT_HOST_GRO=on
A=198.18.127 B=198.18.128 A6=2001:db8:127: B6=2001:db8:128:
eng_ns H1 h27r-h1
eng_ns H2 h27r-h2
rt_wire R h27r-r
xt_veth "$H1" h1 "$R" e1
xt_veth "$H2" h2 "$R" e2
rt_host "$H1" h1 "$A.1/24" "${A6}:1/64" "$A.254" "${A6}:254"
rt_host "$H2" h2 "$B.1/24" "${B6}:1/64" "$B.254" "${B6}:254"
# A prefix behind h2 (its loopback), reached through a route R learns later.
ip -n "$H2" addr add 198.18.129.1/32 dev lo

eng_start RT "$R" --iface e1 --iface e2 --mode router --cores 0 --interval 0.5 --audit \
	--router-xdp "$RT_XDP"
grep -q '"type":"ready"' "$XT_TMP/RT.json" || xt_fail "router not ready"
rt_tap_addr "$R" xp-e1 "$A.254/24" "${A6}:254/64"
rt_tap_addr "$R" xp-e2 "$B.254/24" "${B6}:254/64"
sleep 0.3

# IPv4 and IPv6 pings across: the first go up (no neighbour yet), then the fast path.
ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 "$B.1" >"$XT_TMP/ping4" 2>&1
grep -q ' 0% packet loss' "$XT_TMP/ping4" || { cat "$XT_TMP/ping4" "$XT_TMP/RT.err"; xt_fail "IPv4 ping h1 -> h2 through the router lost packets"; }
ip netns exec "$H1" ping -6 -c 20 -i 0.05 -W 2 "${B6}:1" >"$XT_TMP/ping6" 2>&1
grep -q ' 0% packet loss' "$XT_TMP/ping6" || { cat "$XT_TMP/ping6" "$XT_TMP/RT.err"; xt_fail "IPv6 ping h1 -> h2 through the router lost packets"; }
# The router's own addresses answer (punted: local).
ip netns exec "$H1" ping -c 3 -i 0.05 -W 2 "$B.254" >/dev/null 2>&1 || xt_fail "the router's far address does not answer"
ip netns exec "$H1" ping -6 -c 3 -i 0.05 -W 2 "${B6}:254" >/dev/null 2>&1 || xt_fail "the router's far IPv6 address does not answer"

# traceroute: hop 1 is the router (TTL 1 punted, the kernel's time exceeded), hop 2 h2.
ip netns exec "$H1" traceroute -n -q 1 -w 2 -m 4 "$B.1" >"$XT_TMP/tr4" 2>&1
awk '$1 == 1 {print $2}' "$XT_TMP/tr4" | grep -qx "$A.254" || { cat "$XT_TMP/tr4"; xt_fail "traceroute does not show the router as hop 1"; }
awk '$1 == 2 {print $2}' "$XT_TMP/tr4" | grep -qx "$B.1" || { cat "$XT_TMP/tr4"; xt_fail "traceroute does not reach h2 at hop 2"; }
ip netns exec "$H1" traceroute -6 -n -q 1 -w 2 -m 4 "${B6}:1" >"$XT_TMP/tr6" 2>&1
awk '$1 == 1 {print $2}' "$XT_TMP/tr6" | grep -qx "${A6}:254" || { cat "$XT_TMP/tr6"; xt_fail "IPv6 traceroute does not show the router as hop 1"; }
echo "traceroute: $(tr '\n' ' ' <"$XT_TMP/tr4" | tr -s ' ')"

# UDP and TCP through the fast path.
ip netns exec "$H2" iperf3 -s -1 -p 5227 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :5227" || xt_fail "iperf3 server did not start"
ip netns exec "$H1" timeout 20 iperf3 -c "$B.1" -p 5227 -u -b 20M -l 1200 -t 2 -J >"$XT_TMP/udp" 2>&1 ||
	{ tail -5 "$XT_TMP/udp"; xt_fail "iperf3 UDP through the router failed"; }
lost=$(grep -o '"lost_percent":[[:space:]]*[0-9.e+-]*' "$XT_TMP/udp" | tail -1 | grep -o '[0-9.e+-]*$')
echo "UDP 20 Mbit/s: ${lost}% lost"
awk -v l="${lost:-100}" 'BEGIN { exit !(l < 5) }' || xt_fail "UDP through the router lost ${lost}%"
H2_ADDR=$B.1 eng_iperf TCP4 5228 3
echo "TCP IPv4: $TCP4 bytes in 3 s"
ip netns exec "$H2" iperf3 -s -1 -p 5229 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :5229" || xt_fail "iperf3 server did not start"
ip netns exec "$H1" timeout 20 iperf3 -6 -c "${B6}:1" -p 5229 -t 2 -J >"$XT_TMP/tcp6" 2>&1 ||
	{ tail -5 "$XT_TMP/tcp6"; xt_fail "iperf3 TCP over IPv6 through the router failed"; }

# A port that stops taking redirected frames (h2's GRO off: its veth has no NAPI) is
# no egress of the XDP path within half a second: its routes go through the engine,
# nothing lost; GRO on again, XDP again.
if [ "$RT_XDP" = on ]; then
	ip netns exec "$H2" ethtool -K h2 gro off >/dev/null
	xt_wait_for 3 grep -q 'e2 no longer takes redirected frames' "$XT_TMP/RT.err" ||
		{ cat "$XT_TMP/RT.err"; xt_fail "the router did not see e2 stop taking redirected frames"; }
	ip netns exec "$H1" ping -c 20 -i 0.02 -W 1 "$B.1" >"$XT_TMP/pingg" 2>&1
	grep -q ' 0% packet loss' "$XT_TMP/pingg" || { cat "$XT_TMP/pingg"; xt_fail "pings lost while e2 took no redirected frames"; }
	ip netns exec "$H2" ethtool -K h2 gro on >/dev/null
	xt_wait_for 3 grep -q 'e2 takes redirected frames again' "$XT_TMP/RT.err" ||
		{ cat "$XT_TMP/RT.err"; xt_fail "the router did not see e2 take redirected frames again"; }
	echo "e2 without NAPI: its routes through the engine, 20/20 pings; with it again: XDP"
fi

# Routes under traffic: 198.18.129.1 (behind h2) unrouted, then routed, then gone.
ip netns exec "$H1" ping -c 2 -i 0.1 -W 1 198.18.129.1 >/dev/null 2>&1 && xt_fail "198.18.129.1 answered before any route to it"
ip netns exec "$H1" ping -c 100 -i 0.02 -W 1 198.18.129.1 >"$XT_TMP/pingr" 2>&1 &
P=$!
sleep 0.3
ip -n "$R" route add 198.18.129.0/24 via "$B.1"
sleep 1
ip -n "$R" route replace 198.18.129.0/24 via "$B.1" metric 0
wait "$P"
got=$(grep -o '[0-9]* received' "$XT_TMP/pingr" | cut -d' ' -f1)
[ "${got:-0}" -ge 50 ] || { cat "$XT_TMP/pingr"; xt_fail "after route add only ${got:-0}/100 answered"; }
ip -n "$R" route del 198.18.129.0/24
sleep 0.2
ip netns exec "$H1" ping -c 2 -i 0.1 -W 1 198.18.129.1 >"$XT_TMP/pingd" 2>&1 && xt_fail "198.18.129.1 still answered after route del"
echo "route add under traffic: $got/100 answered; after del: none"
# A blackhole drops (as the kernel), a prohibit is the kernel's (ICMP admin prohibited).
ip -n "$R" route add blackhole 198.18.130.0/24
ip -n "$R" route add prohibit 198.18.131.0/24
ip netns exec "$H1" ping -c 3 -i 0.05 -W 1 198.18.130.1 >/dev/null 2>&1
ip netns exec "$H1" ping -c 3 -i 0.05 -W 1 198.18.131.1 >"$XT_TMP/pingp" 2>&1
grep -qiE 'prohibited|filtered' "$XT_TMP/pingp" || { cat "$XT_TMP/pingp"; xt_fail "prohibit route: no administratively prohibited from the kernel"; }

# A neighbour deleted under traffic is punted (the kernel resolves it again), not lost.
ip netns exec "$H1" ping -c 60 -i 0.02 -W 1 "$B.1" >"$XT_TMP/pingn" 2>&1 &
P=$!
sleep 0.4
ip -n "$R" neigh del "$B.1" dev xp-e2
wait "$P"
got=$(grep -o '[0-9]* received' "$XT_TMP/pingn" | cut -d' ' -f1)
[ "${got:-0}" -ge 58 ] || { cat "$XT_TMP/pingn"; xt_fail "a deleted neighbour lost pings: ${got:-0}/60"; }
# IP options (record route) go up: the kernel forwards them.
ip netns exec "$H1" ping -R -c 2 -i 0.1 -W 2 "$B.1" >"$XT_TMP/pingo" 2>&1 ||
	{ cat "$XT_TMP/pingo"; xt_fail "ping with IP options through the router failed"; }

eng_stop "$RT"
rc=$?
[ $rc = 0 ] || { cat "$XT_TMP/RT.err"; xt_fail "router exited $rc"; }
eng_ledger_ok "$XT_TMP/RT.json" || xt_fail "ledger not clean at exit"
line=$(grep '"type":"router"' "$XT_TMP/RT.json")
echo "$line"
[ -n "$line" ] || xt_fail "no router line at exit"
for f in forwarded forwarded_ipv6 local no_neigh ttl no_route blackhole prohibit ip_options; do
	[ "$(rt_field "$XT_TMP/RT.json" "$f")" -gt 0 ] || xt_fail "router counted no $f"
done
# The issue's bound: a change in force within 10 ms of its notification.
p99=$(grep '"type":"router"' "$XT_TMP/RT.json" | grep -o '"apply_us_p99":[0-9.]*' | cut -d: -f2)
# A bound in time holds for the plain build only: under ASan+UBSan (test_engine_asan runs
# this suite with XPILE=build/asan/xpile) one CI run took 16.6 ms at p99, so there the
# figure is printed, not judged.
if [[ ${XPILE:-} == */asan/* ]]; then
	echo "route change p99 under ASan+UBSan: ${p99:-?} us (not judged: sanitizer build)"
else
	awk -v p="${p99:-99999}" 'BEGIN { exit !(p < 10000) }' || xt_fail "route changes took ${p99} us at p99 from readable to committed"
fi
fwd=$(rt_field "$XT_TMP/RT.json" forwarded)
xdp=$(rt_field "$XT_TMP/RT.json" xdp_forwarded)
engf=$(rt_field "$XT_TMP/RT.json" engine_forwarded)
if [ "$RT_XDP" = on ]; then
	[ "$xdp" -gt 10000 ] || xt_fail "only $xdp packets forwarded in XDP"
	# Most of them by the flow cache (IPv4), through every change above.
	cached=$(rt_field "$XT_TMP/RT.json" xdp_cached)
	[ "${cached:-0}" -gt 5000 ] || xt_fail "only ${cached:-0} packets forwarded by the XDP flow cache"
	# The pings while e2 took no redirected frames, at least.
	[ "$engf" -ge 20 ] || xt_fail "the engine forwarded $engf packets while e2 was no XDP egress"
	for f in no_neigh ttl ip_options; do
		grep -q "\"xdp_not_forwarded\":{[^}]*\"$f\":[1-9]" "$XT_TMP/RT.json" ||
			xt_fail "the XDP path counted no $f"
	done
else
	grep -q '"xdp":false' "$XT_TMP/RT.json" || xt_fail "--router-xdp off: the XDP path ran"
	[ "$engf" -gt 10000 ] || xt_fail "only $engf packets forwarded by the engine"
fi
echo "ok: forwarded $fwd ($xdp in XDP, $engf by the engine)"
