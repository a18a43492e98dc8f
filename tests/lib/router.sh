# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the router suites (tests/net/test_router*.sh). Source after
# tests/lib/netns.sh and tests/lib/engine.sh.
#
#   rt_wire VAR_R            a router namespace VAR_R: forwarding on, no IPv6 autoconf
#                            chatter beyond link-local, rp_filter off
#   rt_host NS IF ADDR4/LEN ADDR6/LEN GW4 GW6
#                            a host: addresses, default routes via the router's TAP,
#                            checksums and segmentation in software (AF_XDP: eng_host);
#                            GRO as RT_HOST_GRO says (off by default: the router's port
#                            then takes no redirected frames, and every packet goes
#                            through the engine; on: its NAPI takes the XDP fast path's)
#   rt_tap_addr NS TAP ADDR4/LEN ADDR6/LEN
#                            the router port's addresses, on its TAP (once the engine made it)
#   rt_field FILE FIELD      a number from the router's exit line (punted/dropped too:
#                            "ttl", "no_neigh", ...); 0 when absent

rt_wire() { # var name
	eng_ns "$1" "$2"
	local ns=${!1}
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.forwarding=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.default.rp_filter=0
	# What the kernel forwards for the router (punted before a neighbour is known)
	# spreads over ECMP paths by ports too, as the fast path's hash does.
	ip netns exec "$ns" sysctl -qw net.ipv4.fib_multipath_hash_policy=1
	ip netns exec "$ns" sysctl -qw net.ipv6.fib_multipath_hash_policy=1
}

rt_host() { # ns if addr4 addr6 gw4 gw6
	local ns=$1 ifn=$2
	ip -n "$ns" addr add "$3" dev "$ifn"
	ip -n "$ns" -6 addr add "$4" dev "$ifn" nodad
	ip -n "$ns" route add default via "$5"
	ip -n "$ns" -6 route add default via "$6"
	ip netns exec "$ns" ethtool -K "$ifn" tx off tso off gso off gro "${RT_HOST_GRO:-off}" >/dev/null 2>&1
	return 0
}

rt_tap_addr() { # ns tap addr4 addr6
	ip -n "$1" link set "$2" up
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$1" -6 addr add "$4" dev "$2" nodad
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off >/dev/null 2>&1
	return 0
}

rt_field() { # file field
	local v
	v=$(grep '"type":"router"' "$1" | tail -1 | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2)
	echo "${v:-0}"
}
