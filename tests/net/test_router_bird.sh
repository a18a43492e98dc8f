#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# BIRD in front of xpile (issue 27, section 2): two router namespaces, each an xpile
# router, joined by two links, with BIRD 2 (Debian's bird2) on their TAPs:
#
#   H1 h1 - e1 [R1] e2 ==== link a ==== e1 [R2] e2 - h2 H2
#                   e3 ==== link b ==== e3
#
# OSPF (hello 1 s, dead 3 s, ECMP) learns h2's network on R1 and h1's on R2 as two-path
# routes, BIRD's kernel protocol writes them into each namespace's main table, and each
# xpile router follows over rtnetlink: ping and traceroute across both routers (both
# hops shown), an iperf3 TCP stream of 8 flows spread over both links by the flow hash;
# link b taken down under that stream: its carrier reaches the TAPs, BIRD withdraws it
# at once (not at its dead interval), the routers follow, the
# stream goes on over link a alone. Then BGP (a second case): the same two routers
# peer over link a, OSPF off, and carry the hosts' networks from BGP. OSPFv3 runs
# beside OSPFv2 in the first case: IPv6 routes via link-local neighbours, ping6 across.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/router.sh
eng_require
command -v bird >/dev/null || xt_skip "bird2 missing: apt-get install bird2"
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"
command -v traceroute >/dev/null || xt_skip "traceroute missing: apt-get install traceroute"
[ -c /dev/net/tun ] || xt_skip "/dev/net/tun missing: modprobe tun"

N=198.18.14
eng_ns H1 h27r-bh1
eng_ns H2 h27r-bh2
rt_wire R1 h27r-br1
rt_wire R2 h27r-br2
xt_veth "$H1" h1 "$R1" e1
xt_veth "$R1" e2 "$R2" e1
xt_veth "$R1" e3 "$R2" e3
xt_veth "$R2" e2 "$H2" h2
rt_host "$H1" h1 "${N}0.1/24" 2001:db8:140::1/64 "${N}0.254" 2001:db8:140::254
rt_host "$H2" h2 "${N}3.1/24" 2001:db8:143::1/64 "${N}3.254" 2001:db8:143::254

eng_start RT1 "$R1" --iface e1 --iface e2 --iface e3 --mode router --cores 0 --interval 0.5
eng_start RT2 "$R2" --iface e1 --iface e2 --iface e3 --mode router --cores 1 --interval 0.5
rt_tap_addr "$R1" xp-e1 "${N}0.254/24" 2001:db8:140::254/64
rt_tap_addr "$R1" xp-e2 "${N}1.1/24" 2001:db8:141::1/64
rt_tap_addr "$R1" xp-e3 "${N}2.1/24" 2001:db8:142::1/64
rt_tap_addr "$R2" xp-e1 "${N}1.2/24" 2001:db8:141::2/64
rt_tap_addr "$R2" xp-e3 "${N}2.2/24" 2001:db8:142::2/64
rt_tap_addr "$R2" xp-e2 "${N}3.254/24" 2001:db8:143::254/64

# bird.conf for router ID $1 speaking $2 (ospf | bgp NEIGHBOUR AS LOCAL_AS).
bird_conf() { # id proto [neighbour peer_as local_as]
	cat <<-EOF
		router id $1;
		log "$XT_TMP/bird-$1.log" all;
		protocol device { scan time 1; }
		protocol kernel { ipv4 { export all; import none; }; merge paths yes; scan time 1; }
	EOF
	if [ "$2" = ospf ]; then
		cat <<-EOF
			protocol kernel { ipv6 { export all; import none; }; merge paths yes; scan time 1; }
			protocol ospf v2 {
				ipv4 { import all; export none; };
				ecmp yes;
				area 0 {
					interface "xp-e1", "xp-e2", "xp-e3" { type ptp; hello 1; dead 3; };
				};
			}
			protocol ospf v3 {
				ipv6 { import all; export none; };
				ecmp yes;
				area 0 {
					interface "xp-e1", "xp-e2", "xp-e3" { type ptp; hello 1; dead 3; };
				};
			}
		EOF
	else
		cat <<-EOF
			protocol direct { ipv4; interface "xp-*"; }
			protocol bgp peer {
				local as $5;
				neighbor $3 as $4;
				hold time 6;
				ipv4 { import all; export where source = RTS_DEVICE; next hop self; };
			}
		EOF
	fi
}

bird_start() { # var ns id proto...
	local var=$1 ns=$2 id=$3
	shift 3
	bird_conf "$id" "$@" >"$XT_TMP/bird-$id.conf"
	ip netns exec "$ns" bird -f -c "$XT_TMP/bird-$id.conf" -s "$XT_TMP/bird-$id.ctl" \
		-P "$XT_TMP/bird-$id.pid" >"$XT_TMP/bird-$id.out" 2>&1 &
	XT_PIDS+=($!)
	printf -v "$var" '%s' "$!"
}

# Host routes h1 -> h2's network, as the kernel of NS has them.
paths() { # ns prefix
	ip -n "$1" route show "$2" proto bird | grep -c 'nexthop\|via'
}

# 1. OSPF with ECMP.
bird_start B1 "$R1" "${N}1.1" ospf
bird_start B2 "$R2" "${N}1.2" ospf
xt_wait_for 40 bash -c "[ \"\$(ip -n $R1 route show ${N}3.0/24 proto bird | grep -c nexthop)\" = 2 ]" ||
	{ ip -n "$R1" route; tail -20 "$XT_TMP/bird-${N}1.1.log"; xt_fail "OSPF did not give R1 two paths to ${N}3.0/24"; }
xt_wait_for 20 bash -c "[ \"\$(ip -n $R2 route show ${N}0.0/24 proto bird | grep -c nexthop)\" = 2 ]" ||
	{ ip -n "$R2" route; xt_fail "OSPF did not give R2 two paths to ${N}0.0/24"; }
echo "OSPF: R1 $(ip -n "$R1" route show "${N}3.0/24" | tr '\n' ' ' | tr -s ' \t' ' ')"
# OSPFv3 beside it: IPv6 routes over the TAPs' link-local neighbours, two paths each way.
xt_wait_for 40 bash -c "[ \"\$(ip -6 -n $R1 route show 2001:db8:143::/64 proto bird | grep -c nexthop)\" = 2 ]" ||
	{ ip -6 -n "$R1" route; tail -20 "$XT_TMP/bird-${N}1.1.log"; xt_fail "OSPFv3 did not give R1 two paths to 2001:db8:143::/64"; }
xt_wait_for 20 bash -c "[ \"\$(ip -6 -n $R2 route show 2001:db8:140::/64 proto bird | grep -c nexthop)\" = 2 ]" ||
	{ ip -6 -n "$R2" route; xt_fail "OSPFv3 did not give R2 two paths to 2001:db8:140::/64"; }
ip netns exec "$H1" ping -6 -c 20 -i 0.05 -W 2 2001:db8:143::1 >"$XT_TMP/ping6" 2>&1
grep -q ' 0% packet loss' "$XT_TMP/ping6" || { cat "$XT_TMP/ping6"; xt_fail "h1 -> h2 over the OSPFv3 routes lost pings"; }
echo "OSPFv3: R1 $(ip -6 -n "$R1" route show 2001:db8:143::/64 | tr '\n' ' ' | tr -s ' \t' ' '); 20/20 ping6 h1 -> h2"

ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 "${N}3.1" >"$XT_TMP/ping" 2>&1
grep -q ' 0% packet loss' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "h1 -> h2 over the OSPF routes lost pings"; }
ip netns exec "$H1" traceroute -n -q 1 -w 2 -m 5 "${N}3.1" >"$XT_TMP/tr" 2>&1
awk '$1 == 1 {print $2}' "$XT_TMP/tr" | grep -qx "${N}0.254" || { cat "$XT_TMP/tr"; xt_fail "traceroute: hop 1 is not R1"; }
awk '$1 == 2 {print $2}' "$XT_TMP/tr" | grep -qxE "${N}[12].2" || { cat "$XT_TMP/tr"; xt_fail "traceroute: hop 2 is not R2"; }
awk '$1 == 3 {print $2}' "$XT_TMP/tr" | grep -qx "${N}3.1" || { cat "$XT_TMP/tr"; xt_fail "traceroute: hop 3 is not h2"; }
echo "traceroute: $(tail -n +2 "$XT_TMP/tr" | tr '\n' ' ' | tr -s ' ')"

# 12 TCP flows for 8 s (all on one of two links: 1 in 2048 for a fair hash); link b
# taken down after 3 s.
# What R1 sent on a link: the port's device counter, which holds the frames its XDP
# fast path redirected as well as those the engine sent (a veth counts both, in its
# peer's NAPI), where the engine's socket counts only its own.
tx() { # port of R1
	ip netns exec "$R1" cat "/sys/class/net/$1/statistics/tx_packets"
}
ip netns exec "$H2" iperf3 -s -1 -p 5241 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :5241" || xt_fail "iperf3 server did not start"
ip netns exec "$H1" timeout 30 iperf3 -c "${N}3.1" -p 5241 -P 12 -t 8 -J >"$XT_TMP/iperf" 2>&1 &
P=$!
sleep 3
a0=$(tx e2) b0=$(tx e3)
ip -n "$R2" link set e3 down
t0=$(date +%s%N)
xt_wait_for 10 bash -c "[ \"\$(ip -n $R1 route show ${N}3.0/24 proto bird | grep -c nexthop)\" = 0 ]" ||
	{ ip -n "$R1" route; xt_fail "BIRD on R1 did not withdraw link b"; }
withdrawn=$((($(date +%s%N) - t0) / 1000000))
sleep 1.5
b1=$(tx e3) a1=$(tx e2)
sleep 1.5
b2=$(tx e3) a2=$(tx e2)
wait "$P" || { tail -5 "$XT_TMP/iperf"; xt_fail "iperf3 across both routers failed when link b went down"; }
got=$(grep -o '"bytes":[[:space:]]*[0-9]*' "$XT_TMP/iperf" | tail -1 | grep -o '[0-9]*$')
echo "ECMP before link b went down: link a tx $a0, link b tx $b0; withdrawn in ${withdrawn} ms; after: a $a1 -> $a2, b $b1 -> $b2; iperf3 moved $got bytes"
[ "${a0:-0}" -gt 1000 ] && [ "${b0:-0}" -gt 1000 ] || xt_fail "the 12 flows did not use both links (a $a0, b $b0)"
# The ports' carriers reach their TAPs, so BIRD sees link b go at once rather than at
# its 3 s dead interval (2.9 s measured without the carrier, 0.8 s with).
[ "$withdrawn" -lt 2500 ] || xt_fail "link b withdrawn after $withdrawn ms: BIRD waited for its dead interval (did xp-e3 lose its carrier?)"
# What still leaves on link b is BIRD's own hellos (1/s, injected from xp-e3).
[ $((b2 - b1)) -le 3 ] || xt_fail "R1 still forwards on link b after the withdrawal ($b1 -> $b2)"
[ "$a2" -gt "$a1" ] || xt_fail "no traffic on link a after the withdrawal"
[ "${got:-0}" -gt 1000000 ] || xt_fail "iperf3 moved only ${got:-0} bytes"
ip netns exec "$H1" ping -c 5 -i 0.05 -W 2 "${N}3.1" >/dev/null 2>&1 || xt_fail "no ping after the failover"

# 2. BGP over link a instead of OSPF.
kill "$B1" "$B2"
wait "$B1" "$B2" 2>/dev/null
xt_wait_for 10 bash -c "! ip -n $R1 route show proto bird | grep -q ." || xt_fail "BIRD's routes stayed after it stopped"
ip netns exec "$H1" ping -c 2 -i 0.1 -W 1 "${N}3.1" >/dev/null 2>&1 && xt_fail "h2 answered with no routing daemon"
bird_start B1 "$R1" "${N}1.1" bgp "${N}1.2" 65002 65001
bird_start B2 "$R2" "${N}1.2" bgp "${N}1.1" 65001 65002
xt_wait_for 40 bash -c "ip -n $R1 route show ${N}3.0/24 proto bird | grep -q via" ||
	{ ip -n "$R1" route; tail -20 "$XT_TMP/bird-${N}1.1.log"; xt_fail "BGP did not give R1 h2's network"; }
xt_wait_for 20 bash -c "ip -n $R2 route show ${N}0.0/24 proto bird | grep -q via" ||
	{ ip -n "$R2" route; xt_fail "BGP did not give R2 h1's network"; }
ip netns exec "$H1" ping -c 20 -i 0.05 -W 2 "${N}3.1" >"$XT_TMP/ping" 2>&1
grep -q ' 0% packet loss' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "h1 -> h2 over the BGP routes lost pings"; }
H2_ADDR=${N}3.1 eng_iperf TCPB 5242 2
echo "BGP: R1 $(ip -n "$R1" route show "${N}3.0/24" | tr -s ' '); iperf3 $TCPB bytes"

for r in RT1 RT2; do
	pid=${!r}
	eng_stop "$pid"
	rc=$?
	[ $rc = 0 ] || { cat "$XT_TMP/$r.err"; xt_fail "$r exited $rc"; }
	grep '"type":"router"' "$XT_TMP/$r.json"
	[ "$(rt_field "$XT_TMP/$r.json" forwarded)" -gt 10000 ] || xt_fail "$r forwarded little"
	[ "$(rt_field "$XT_TMP/$r.json" multicast)" -gt 0 ] || xt_fail "$r took no OSPF multicast up"
	# The ping6s crossed both fast paths, not the kernels behind the TAPs.
	[ "$(rt_field "$XT_TMP/$r.json" forwarded_ipv6)" -ge 20 ] || xt_fail "$r forwarded under 20 IPv6 packets"
done
echo ok
