#!/usr/bin/env bash
# shellcheck disable=SC2154 # eng_iperf and ex_iperf_udp set their variables (printf -v)
# SPDX-License-Identifier: BSD-3-Clause
# tools/examples/l3fwd routing between two subnets, IPv4 and IPv6, with its default
# table (DPDK's shape: 198.18.P.0/24 and 2001:2:0:P::/64 -> port P):
#   H1 h1 198.18.0.1, 2001:2:0:0::1 <-> e1 [E: l3fwd e1 e2] e2 <-> h2 198.18.1.1, 2001:2:0:1::1 H2
# The hosts route through gateways whose MACs they know statically (l3fwd, like DPDK's,
# answers no ARP or ND). Ping, iperf3 UDP and TCP cross it; the receiving kernels
# accept every checksum (they would drop the packets otherwise) and see TTL / hop limit
# 63. A packet with no route, and one with TTL / hop limit 1, are dropped and counted.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/examples.sh
ex_require l3fwd

eng_ns H1 h1; eng_ns H2 h2; eng_ns E eng
xt_veth "$H1" h1 "$E" e1
xt_veth "$H2" h2 "$E" e2
eng_quiet "$E" e1
eng_quiet "$E" e2
e1mac=$(ex_mac "$E" e1) e2mac=$(ex_mac "$E" e2) m1=$(ex_mac "$H1" h1) m2=$(ex_mac "$H2" h2)
host() { # ns if v4 v6 gw4 gw6 gwmac
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.accept_ra=0" "net.ipv6.conf.$2.disable_ipv6=0"
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1
	ip -n "$1" addr add "$3/24" dev "$2"
	ip -n "$1" addr add "$4/64" dev "$2" nodad
	ip -n "$1" neigh replace "$5" lladdr "$7" dev "$2" nud permanent
	ip -n "$1" neigh replace "$6" lladdr "$7" dev "$2" nud permanent
	ip -n "$1" route add 198.18.0.0/15 via "$5" dev "$2" 2>/dev/null || ip -n "$1" route replace 198.18.0.0/15 via "$5" dev "$2"
	ip -n "$1" -6 route add 2001:2::/48 via "$6" dev "$2" 2>/dev/null || ip -n "$1" -6 route replace 2001:2::/48 via "$6" dev "$2"
}
host "$H1" h1 198.18.0.1 2001:2:0:0::1 198.18.0.254 2001:2:0:0::fe "$e1mac"
host "$H2" h2 198.18.1.1 2001:2:0:1::1 198.18.1.254 2001:2:0:1::fe "$e2mac"

ex_start L3 "$E" l3fwd --iface e1 --iface e2 --cores 1 --eth-dest 0,"$m1" --eth-dest 1,"$m2" --ledger-debug

for dst in 198.18.1.1 2001:2:0:1::1; do
	out=$(ip netns exec "$H1" ping -c 5 -i 0.05 -W 1 "$dst" 2>&1)
	echo "$out" | grep -q ' 5 received' || { echo "$out"; xt_fail "ping $dst through l3fwd"; }
	# The reply left h2 with 64 and crossed one router.
	echo "$out" | grep -q 'ttl=63' || { echo "$out"; xt_fail "ping $dst: the TTL / hop limit was not decremented to 63"; }
	echo "ping $dst: 5/5, ttl=63"
done
# The request's TTL at h2: 63 as well, seen on the wire there.
ip netns exec "$H2" timeout 5 tcpdump -c 1 -vni h2 'icmp[icmptype] = icmp-echo' >"$XT_TMP/cap" 2>&1 &
cap=$!
sleep 0.5
ip netns exec "$H1" ping -c 2 -i 0.1 198.18.1.1 >/dev/null
wait "$cap"
grep -q 'ttl 63' "$XT_TMP/cap" || { cat "$XT_TMP/cap"; xt_fail "echo request at h2 without ttl 63"; }

H2_ADDR=198.18.1.1
ex_iperf_udp udp 198.18.1.1 5201 2 -b 20M -l 1200
echo "UDP IPv4: $udp datagrams received"
[ "$udp" -gt 1000 ] || xt_fail "iperf3 UDP through l3fwd: only $udp datagrams"
ex_iperf_udp udp6 2001:2:0:1::1 5203 2 -b 20M -l 1200
echo "UDP IPv6: $udp6 datagrams received"
[ "$udp6" -gt 1000 ] || xt_fail "iperf3 UDP over IPv6 through l3fwd: only $udp6 datagrams"
eng_iperf tcp 5202 3
echo "TCP IPv4: $tcp bytes"
H2_ADDR=2001:2:0:1::1
eng_iperf tcp6 5204 2
echo "TCP IPv6: $tcp6 bytes"

# Drops by reason. No route: 198.18.5.1 and 2001:2:0:5::1 (no port 5); TTL 1.
ip netns exec "$H1" ping -c 3 -i 0.1 -W 1 198.18.5.1 >/dev/null 2>&1 && xt_fail "198.18.5.1 answered"
ip netns exec "$H1" ping -c 3 -i 0.1 -W 1 2001:2:0:5::1 >/dev/null 2>&1 && xt_fail "2001:2:0:5::1 answered"
ip netns exec "$H1" ping -c 3 -i 0.1 -W 1 -t 1 198.18.1.1 >/dev/null 2>&1 && xt_fail "ping with TTL 1 answered"
ip netns exec "$H1" ping -c 3 -i 0.1 -W 1 -t 1 2001:2:0:1::1 >/dev/null 2>&1 && xt_fail "ping with hop limit 1 answered"

ex_stop "$L3" || { rc=$?; cat "$XT_TMP/L3.err"; xt_fail "l3fwd exited with status $rc"; }
line=$(grep '^l3fwd ' "$XT_TMP/L3.err")
echo "$line"
[ "$(ex_field "$XT_TMP/L3.err" forwarded)" -gt 2000 ] || xt_fail "forwarded: $line"
# IPv6 multicast (MLD, ND of the hosts) has no route either: at least ours.
[ "$(ex_field "$XT_TMP/L3.err" no_route)" -ge 6 ] || xt_fail "no_route not counted: $line"
[ "$(ex_field "$XT_TMP/L3.err" ttl_expired)" -ge 6 ] || xt_fail "ttl_expired not counted: $line"
# The hosts' MLD reports (hop limit 1) count there too, a few; good packets must not.
[ "$(ex_field "$XT_TMP/L3.err" ttl_expired)" -le 20 ] || xt_fail "ttl_expired counted more than sent: $line"
[ "$(ex_field "$XT_TMP/L3.err" bad_header)" = 0 ] || xt_fail "a good packet called bad: $line"
eng_ledger_ok "$XT_TMP/L3.json" || { grep ledger "$XT_TMP/L3.json"; xt_fail "the exit ledger is not clean"; }
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP left attached"
echo ok
