#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The router benchmark (issue 27, docs/router.md "Figures of the router"):
#
#   forward  xpile --mode router against the kernel's own forwarding (forwarding=1)
#            in the same namespaces, with the same routes and the same generator,
#            against DPDK's examples/l3fwd -L (net_af_xdp on e1 and e2, the same
#            route as a static rule and the sink's MAC as --eth-dest; where DPDK is
#            installed: tools/bench/dpdk_env.sh), and xpile --mode fwd (a wire, no
#            lookup: the engine's ceiling on this path), interleaved, medians of XR_RUNS:
#              [gen] g0 <-veth-> e1 [rtr] e2 <-veth-> s1 [sink]
#            The generator (XR_GEN: trafgen, netsniff-ng's, by default; txonly: xpile's
#            own AF_XDP sender; 64-byte UDP, 16 flows) sends as fast as it can on its
#            core; e1's NAPI runs threaded on the router's core, so the router's core
#            decides the rate. The sink drops in XDP (XR_SINK=drop, the default:
#            bpf/sink_drop.bpf.c; stack: into s1's stack), so what a veth makes its
#            receiver do on the sender's core is no contender's. Rate = frames the
#            sink's s1 received over the window; CPU = the router core's busy time
#            (/proc/stat) over the same window, per forwarded packet. Contenders:
#            kernel, xpile (the router's XDP fast path), engine (--router-xdp off),
#            dpdk, fwd (XR_CONTENDERS to choose).
#            Why trafgen: an AF_XDP sender's skbs (txonly) are completed on the
#            router's core under the socket's completion lock, which the sender takes
#            too: over half that core went there in perf, for every contender.
#            XR_GEN=relay: trafgen into a veth pair t0-t1 in the generator's namespace
#            whose XDP program (the steer program, default "redirect g0") hands each
#            frame on to g0, so e1 receives xdp_frames, as a NIC's ring holds them,
#            instead of skbs that veth must copy into a page first (skb_pp_cow_data:
#            the larger part of a router core's cost with trafgen alone); t1's NAPI
#            runs on the generator's core.
#   scale    XR_ROUTES (100000,1000000) IPv4 routes loaded with `ip -batch` into the
#            router's namespace while xpile routes: the time ip took, the router's
#            longest burst of changes (first notification read to last commit: the
#            convergence), its LPM tables and RSS growth, then the same deleted.
#
#   change   a route flipped between two gateways (s1 behind e2, s2 behind e3) while
#            the generator sends 100 kpps to it: the time from `ip route replace`
#            returning (the kernel has sent its notification) to the first packet on
#            the new path, seen by tcpdump on the sink (10 us resolution), XR_CHANGES
#            times, for the xpile router and for the kernel's forwarding.
#
#   XR_WHAT     forward,change,scale  what to run
#   XR_CHANGES  20               change: route flips per contender
#   XR_RUNS     5                forward: runs per contender
#   XR_SECONDS  4                forward: measured window
#   XR_ROUTES   100000,1000000   scale: table sizes
#   XR_GEN_CORE 0, XR_DUT_CORE 1
#   XR_GEN trafgen|relay|txonly, XR_SINK drop|stack, XR_SINK_CORE (s1's NAPI's core),
#   XR_CONTENDERS, XR_DEBUG=1 (per-core busy)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh
. tools/bench/dpdk_env.sh

what=${XR_WHAT:-forward,change,scale}
changes=${XR_CHANGES:-20}
runs=${XR_RUNS:-5}
win=${XR_SECONDS:-4}
sizes=${XR_ROUTES:-100000,1000000}
gcore=${XR_GEN_CORE:-0}
dcore=${XR_DUT_CORE:-1}
xpile=${XR_XPILE:-$XT_BUILD/xpile}
gen=${XR_GEN:-trafgen}
if [[ $gen == trafgen || $gen == relay ]] && ! command -v trafgen >/dev/null; then
	echo "router bench: trafgen not found (apt-get install netsniff-ng): the generator is xpile txonly" >&2
	gen=txonly
fi

die() { echo "router bench: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP, AF_XDP): run as root"
[ -x "$xpile" ] || die "$xpile not built: run make"
tmp=$(mktemp -d /tmp/xpile-bench-router.XXXXXX)
xt_on_exit "rm -rf '$tmp'"
contenders="kernel xpile engine fwd"
if [[ $what == *forward* ]]; then
	dpdk_env_init "${XR_DPDK_DIR:-$XT_BUILD/dpdk-examples}"
	[ "$have_dpdk" = 1 ] && contenders="kernel xpile engine dpdk fwd"
	contenders=${XR_CONTENDERS:-$contenders}
	printf 'R198.18.161.0/24 1\n' >"$tmp/routes4.cfg"
	printf 'R2001:0002:0000:0000:0000:0000:0000:0000/64 1\n' >"$tmp/routes6.cfg"
fi

xt_ns_var G h27r-gen
xt_ns_var R h27r-rtr
xt_ns_var S h27r-sink
xt_veth "$G" g0 "$R" e1
xt_veth "$R" e2 "$S" s1
xt_ns_var S2 h27r-sink2
xt_veth "$R" e3 "$S2" s2
ip netns exec "$S2" sysctl -qw net.ipv6.conf.s2.disable_ipv6=1
ip -n "$S2" addr add 198.18.162.1/24 dev s2
# The sinks' NAPI (GRO on) for every contender: a veth takes frames an XDP program
# redirects to it only while its peer has NAPI, and the kernel's skbs then take the
# same path, so the topology is one for all.
# g0 without TSO: veth hands a frame to its peer's NAPI (e1's, threaded on the router's
# core) only when it cannot be a TSO skb; else (an AF_XDP sender's skbs are never
# sock_wfree's) it goes to the backlog of the sending core, and the kernel would forward
# on the generator's core, not the router's.
ip netns exec "$G" ethtool -K g0 tso off >/dev/null 2>&1
ip netns exec "$S" ethtool -K s1 gro "${XR_SINK_GRO:-on}" >/dev/null 2>&1
ip netns exec "$S2" ethtool -K s2 gro "${XR_SINK_GRO:-on}" >/dev/null 2>&1
# A device's NAPI as a kthread on a core (the new napi/ kthreads its threaded mode starts).
napi_thread() { # ns dev core
	local before after p
	before=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\//{print $1}' | sort)
	ip netns exec "$1" sh -c "echo 0 >/sys/class/net/$2/threaded; echo 1 >/sys/class/net/$2/threaded"
	sleep 0.1
	after=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\//{print $1}' | sort)
	for p in $(comm -13 <(echo "$before") <(echo "$after")); do
		taskset -pc "$3" "$p" >/dev/null
		[ -n "${XR_DEBUG:-}" ] && echo "napi_thread: $2's $p ($(ps -o comm= -p "$p")) on core $3" >&2
	done
}
# XR_SINK=drop: s1 drops in XDP (bpf/sink_drop.bpf.c), still counting rx_packets, so
# the sink's own receive (skb, stack), which a veth runs on the router's core, is no
# contender's; stack: s1 receives into its stack (UDP to a closed port).
sink=${XR_SINK:-drop}
if [ "$sink" = drop ] && [[ $what == *forward* ]]; then
	ip -n "$S" link set dev s1 xdpdrv obj "$XT_BUILD/bpf/sink_drop.o" sec xdp ||
		die "cannot attach $XT_BUILD/bpf/sink_drop.o to s1"
fi
# XR_SINK_CORE=N: s1's receive as a kthread on core N; by default it runs where veth
# runs it, in the softirq of the core that forwarded the frame: the router's.
[ -n "${XR_SINK_CORE:-}" ] && napi_thread "$S" s1 "$XR_SINK_CORE"
s2mac=$(ip -n "$S2" -o link show s2 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
for x in "$G g0" "$S s1"; do
	# shellcheck disable=SC2086
	ip netns exec ${x% *} sysctl -qw net.ipv6.conf.${x#* }.disable_ipv6=1
done
ip netns exec "$R" sysctl -qw net.ipv4.conf.all.forwarding=1
ip netns exec "$R" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$S" addr add 198.18.161.1/24 dev s1
smac=$(ip -n "$S" -o link show s1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
emac=$(ip -n "$R" -o link show e1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)

# XR_GEN=relay: trafgen sends into t0; t1, its peer in the generator's namespace, takes
# the frames into XDP (the steer program, default "redirect g0") on the generator's core
# and hands them to e1 as xdp_frames, as a NIC's ring holds them: the router's side of
# e1 sees no sender's skb, for every contender (the kernel builds its own, as a NIC
# driver does).
if [ "$gen" = relay ]; then
	loader=${XR_LOADER:-$XT_BUILD/xpile-loader}
	xt_veth "$G" t0 "$G" t1
	ip netns exec "$G" sysctl -qw net.ipv6.conf.t0.disable_ipv6=1 net.ipv6.conf.t1.disable_ipv6=1
	ip netns exec "$G" ethtool -K t0 tso off >/dev/null 2>&1
	ip netns exec "$G" "$loader" load t1 --mode native --default "redirect g0" >/dev/null ||
		die "cannot load the relay's steer program on t1"
	xt_on_exit "ip netns exec '$G' '$loader' unload t1 >/dev/null 2>&1"
	napi_thread "$G" t1 "$gcore"
fi

# trafgen (netsniff-ng): the same 64-byte UDP frame to the sink, 16 flows by source port.
hexmac() { echo "0x${1//:/, 0x}"; }
gmac=$(ip -n "$G" -o link show g0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
cat >"$tmp/trafgen.cfg" <<EOF
{ $(hexmac "$emac"), $(hexmac "$gmac"), 0x08, 0x00,
  0x45, 0x00, 0x00, 0x32, 0x00, 0x00, 0x00, 0x00, 0x40, 0x11, csumip(14, 33),
  198, 18, 160, 1, 198, 18, 161, 1,
  0x04, drnd(1), 0x00, 0x09, 0x00, 0x1e, 0x00, 0x00,
  fill(0x00, 22) }
EOF

# The router's side of the links: on e1/e2 for the kernel, on the TAPs for xpile.
addrs() { # if1 if2
	ip -n "$R" addr add 198.18.160.254/24 dev "$1"
	ip -n "$R" addr add 198.18.161.254/24 dev "$2"
	ip -n "$R" neigh replace 198.18.161.1 lladdr "$smac" dev "$2" nud permanent
}
unaddrs() { # if1 if2
	ip -n "$R" addr flush dev "$1" 2>/dev/null
	ip -n "$R" addr flush dev "$2" 2>/dev/null
}

# e1's NAPI as a kthread on the router's core (veth has NAPI with GRO on or a program).
napi_to_dut() { napi_thread "$R" e1 "$dcore"; }

busy() { # jiffies the core was busy
	[ -n "${XR_DEBUG:-}" ] && awk '$1 ~ /^cpu[0-9]/ {printf "%s %d ", $1, $2 + $3 + $4 + $7 + $8 + $9} END {print ""}' /proc/stat >&2
	awk -v c="cpu$dcore" '$1 == c {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}
rxp() { ip netns exec "$S" cat /sys/class/net/s1/statistics/rx_packets; }

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

one_run() { # contender -> "pps ns_per_packet"
	local pid gpid p0 p1 b0 b1
	if [ "$1" = kernel ]; then
		addrs e1 e2
		ip netns exec "$R" ethtool -K e1 gro on >/dev/null 2>&1
		napi_to_dut
	elif [ "$1" = dpdk ]; then
		ip netns exec "$R" ethtool -K e1 gro off >/dev/null 2>&1
		hp_ensure 208
		# shellcheck disable=SC2046 # the EAL's words
		ip netns exec "$R" "$dpdk_dir/l3fwd" $(dpdk_eal 384 "$dcore" "h27r$$") \
			--vdev net_af_xdp0,iface=e1 --vdev net_af_xdp1,iface=e2 -- -p 0x3 -L \
			--parse-ptype --config="(0,0,$dcore),(1,0,$dcore)" --rule_ipv4="$tmp/routes4.cfg" \
			--rule_ipv6="$tmp/routes6.cfg" --eth-dest=1,"$smac" >"$tmp/d.log" 2>&1 </dev/null &
		pid=$!
		xt_wait_for 20 bash -c "[ \$(ip -n '$R' link show | grep -c prog/xdp) = 2 ] || ! kill -0 $pid" &&
			kill -0 "$pid" 2>/dev/null || { tail -5 "$tmp/d.log" >&2; die "DPDK l3fwd did not start"; }
		napi_to_dut
	elif [ "$1" = fwd ]; then
		ip netns exec "$R" ethtool -K e1 gro off >/dev/null 2>&1
		ip netns exec "$R" "$xpile" run --iface e1 --iface e2 --mode fwd --cores "$dcore" \
			--json --duration $((win + 30)) >"$tmp/f.json" 2>"$tmp/f.err" &
		pid=$!
		xt_wait_for 10 grep -q '"type":"ready"' "$tmp/f.json" || { cat "$tmp/f.err" >&2; die "fwd not ready"; }
		napi_to_dut
	else
		# xpile: the XDP fast path; engine: --router-xdp off, every packet by the engine.
		local xdp=on
		[ "$1" = engine ] && xdp=off
		ip netns exec "$R" ethtool -K e1 gro off >/dev/null 2>&1
		ip netns exec "$R" "$xpile" run --iface e1 --iface e2 --mode router --cores "$dcore" \
			--router-xdp "$xdp" --json --duration $((win + 30)) >"$tmp/r.json" 2>"$tmp/r.err" &
		pid=$!
		xt_wait_for 10 grep -q '"type":"ready"' "$tmp/r.json" || { cat "$tmp/r.err" >&2; die "router not ready"; }
		addrs xp-e1 xp-e2
		napi_to_dut
	fi
	if [ "$gen" = trafgen ] || [ "$gen" = relay ]; then
		local dev=g0
		[ "$gen" = relay ] && dev=t0
		ip netns exec "$G" timeout $((win + 10)) taskset -c "$gcore" trafgen --dev "$dev" \
			--conf "$tmp/trafgen.cfg" --cpus 1 --no-sock-mem -t 0 -q >/dev/null 2>"$tmp/tg.err" &
	else
		ip netns exec "$G" "$xpile" run --iface g0 --cores "$gcore" --quiet --mode txonly \
			--pkt-size 68 --dst-mac "$emac" --src-ip 198.18.160.1 --dst-ip 198.18.161.1 \
			--flows 16 --duration $((win + 10)) >/dev/null 2>&1 &
	fi
	gpid=$!
	sleep 1.5
	p0=$(rxp) b0=$(busy)
	sleep "$win"
	p1=$(rxp) b1=$(busy)
	kill -INT "$gpid" 2>/dev/null
	[ -n "${XR_DEBUG:-}" ] && [ -s "$tmp/tg.err" ] && { cat "$tmp/trafgen.cfg" "$tmp/tg.err" >&2; }
	wait "$gpid" 2>/dev/null
	if [ "$1" = kernel ]; then
		unaddrs e1 e2
	else
		kill -INT "$pid"
		wait "$pid"
		[ "$1" = xpile ] && grep '"type":"router"' "$tmp/r.json" | tail -1 >"$tmp/r.last"
		[[ $1 == xpile || $1 == engine ]] && unaddrs xp-e1 xp-e2
		xt_wait_for 10 bash -c "! ip -n '$R' link show | grep -q 'prog/xdp'"
	fi
	awk -v p=$((p1 - p0)) -v b=$((b1 - b0)) -v w="$win" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f %.1f\n", p / w, p ? b * 1e9 / hz / p : 0 }'
}

if [[ $what == *forward* ]]; then
	: >"$tmp/kernel" && : >"$tmp/xpile" && : >"$tmp/engine" && : >"$tmp/fwd" && : >"$tmp/dpdk"
	for i in $(seq "$runs"); do
		for c in $contenders; do
			r=$(one_run "$c")
			echo "run $i $c: pps ${r% *}, ns of the router's core per packet ${r#* }"
			echo "$r" >>"$tmp/$c"
		done
	done
	kp=$(cut -d' ' -f1 "$tmp/kernel" | median) kc=$(cut -d' ' -f2 "$tmp/kernel" | median)
	xp=$(cut -d' ' -f1 "$tmp/xpile" | median) xc=$(cut -d' ' -f2 "$tmp/xpile" | median)
	echo "forward medians of $runs: kernel $kp pps, $kc ns/packet; xpile router $xp pps, $xc ns/packet;" \
		"rate ratio xpile/kernel $(awk -v a="$xp" -v b="$kp" 'BEGIN {printf "%.2f", b ? a / b : 0}')," \
		"CPU ratio $(awk -v a="$xc" -v b="$kc" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
	if [ -s "$tmp/dpdk" ]; then
		dp=$(cut -d' ' -f1 "$tmp/dpdk" | median) dc=$(cut -d' ' -f2 "$tmp/dpdk" | median)
		echo "forward medians of $runs: DPDK l3fwd $dp pps, $dc ns/packet;" \
			"rate ratio xpile/DPDK $(awk -v a="$xp" -v b="$dp" 'BEGIN {printf "%.2f", b ? a / b : 0}')," \
			"CPU ratio $(awk -v a="$xc" -v b="$dc" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
	fi
	ep=$(cut -d' ' -f1 "$tmp/engine" | median) ec=$(cut -d' ' -f2 "$tmp/engine" | median)
	echo "forward medians of $runs: xpile router through the engine only (--router-xdp off) $ep pps, $ec ns/packet;" \
		"rate ratio engine/kernel $(awk -v a="$ep" -v b="$kp" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
	echo "the engine's ceiling on this path (fwd, a wire e1 -> e2, no lookup): $(cut -d' ' -f1 "$tmp/fwd" | median) pps, $(cut -d' ' -f2 "$tmp/fwd" | median) ns/packet"
	[ -s "$tmp/r.last" ] && echo "last xpile run: $(cat "$tmp/r.last")"
	ip -n "$S" link set dev s1 xdp off 2>/dev/null # change: tcpdump watches s1
fi

# One flip to @gw: microseconds from the command written to a running `ip -batch -`
# (no process start in the measure) to the first packet on @sink's side.
flip() { # gw dev sink_ns sink_if
	local t tpid first
	: >"$tmp/td.err"
	ip netns exec "$3" timeout 5 tcpdump -c 1 -tt -n -i "$4" udp >"$tmp/td" 2>"$tmp/td.err" &
	tpid=$!
	# Only once it captures: a late start would be counted as the router's delay.
	xt_wait_for 5 grep -q listening "$tmp/td.err"
	sleep 0.05
	t=$EPOCHREALTIME
	echo "route replace 198.18.170.0/24 via $1 dev $2" >&"${IPB[1]}"
	wait "$tpid"
	first=$(awk 'NR == 1 {print $1}' "$tmp/td")
	[ -n "$first" ] && awk -v f="$first" -v t="$t" 'BEGIN { printf "%.0f\n", (f - t) * 1e6 }'
}

if [[ $what == *change* ]]; then
	for c in kernel xpile engine; do
		if [ "$c" = kernel ]; then
			addrs e1 e2
			ip -n "$R" addr add 198.18.162.254/24 dev e3
			ip -n "$R" neigh replace 198.18.162.1 lladdr "$s2mac" dev e3 nud permanent
			d2=e2 d3=e3
		else
			xdp=on
			[ "$c" = engine ] && xdp=off
			ip netns exec "$R" "$xpile" run --iface e1 --iface e2 --iface e3 --mode router \
				--cores "$dcore" --router-xdp "$xdp" --json >"$tmp/c.json" 2>"$tmp/c.err" &
			pid=$!
			xt_wait_for 10 grep -q '"type":"ready"' "$tmp/c.json" || { cat "$tmp/c.err" >&2; die "router not ready"; }
			addrs xp-e1 xp-e2
			ip -n "$R" addr add 198.18.162.254/24 dev xp-e3
			ip -n "$R" neigh replace 198.18.162.1 lladdr "$s2mac" dev xp-e3 nud permanent
			d2=xp-e2 d3=xp-e3
		fi
		ip -n "$R" route replace 198.18.170.0/24 via 198.18.161.1 dev "$d2"
		ip netns exec "$G" "$xpile" run --iface g0 --cores "$gcore" --quiet --mode txonly \
			--pkt-size 68 --dst-mac "$emac" --src-ip 198.18.160.1 --dst-ip 198.18.170.1 \
			--rate 100000 --duration 600 >/dev/null 2>&1 &
		gpid=$!
		coproc IPB { ip -n "$R" -force -batch - >/dev/null 2>&1; }
		sleep 1
		: >"$tmp/lat.$c"
		for _ in $(seq "$changes"); do
			flip 198.18.162.1 "$d3" "$S2" s2 >>"$tmp/lat.$c"
			flip 198.18.161.1 "$d2" "$S" s1 >>"$tmp/lat.$c"
		done
		kill -INT "$gpid"
		wait "$gpid" 2>/dev/null
		eval "exec ${IPB[1]}>&-"
		wait "$IPB_PID" 2>/dev/null
		ip -n "$R" route del 198.18.170.0/24
		if [ "$c" = kernel ]; then
			unaddrs e1 e2
			ip -n "$R" addr flush dev e3
		else
			kill -INT "$pid"
			wait "$pid"
			grep '"type":"router"' "$tmp/c.json" | tail -1 | grep -o '"apply_us[a-z0-9_]*":[0-9.]*' | tr '\n' ' '
			echo
			xt_wait_for 10 bash -c "! ip -n '$R' link show | grep -q 'prog/xdp'"
		fi
		sort -n "$tmp/lat.$c" | awk -v c="$c" '{a[NR] = $1} END {
			if (!NR) { print "change " c ": no packet seen"; exit }
			printf "change %s: %d flips, route replace -> first packet on the new path: median %d us, p99 %d us, max %d us\n",
				c, NR, a[int((NR + 1) / 2)], a[int(NR * 0.99) ? int(NR * 0.99) : 1], a[NR] }'
	done
fi

if [[ $what == *scale* ]]; then
	IFS=, read -ra ns <<<"$sizes"
	for n in "${ns[@]}"; do
		ip netns exec "$R" "$xpile" run --iface e1 --iface e2 --mode router --cores "$dcore" \
			--fib-groups 65536 --json >"$tmp/s.json" 2>"$tmp/s.err" &
		pid=$!
		xt_wait_for 10 grep -q '"type":"ready"' "$tmp/s.json" || { cat "$tmp/s.err" >&2; die "router not ready"; }
		addrs xp-e1 xp-e2
		sleep 0.5
		rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
		# Prefixes outside 198.18.0.0/15: they exist only in this namespace, no packet
		# is sent to them.
		awk -v n="$n" 'BEGIN {
			for (i = 0; i < n; i++)
				printf "route add %d.%d.%d.0/24 via 198.18.161.1\n", 16 + int(i / 65536), int(i / 256) % 256, i % 256
			}' >"$tmp/add"
		sed 's/^route add/route del/' "$tmp/add" >"$tmp/del"
		t0=$(date +%s%N)
		ip -n "$R" -batch "$tmp/add" || die "ip -batch add failed"
		t1=$(date +%s%N)
		sleep 3
		rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
		kill -INT "$pid"
		wait "$pid"
		line=$(grep '"type":"router"' "$tmp/s.json" | tail -1)
		last=$(echo "$line" | grep -o '"last_change_unix_ms":[0-9]*' | cut -d: -f2)
		echo "scale $n routes: ip -batch add $(((t1 - t0) / 1000000)) ms; the router's last change applied $((last - t0 / 1000000)) ms after ip started; router RSS growth $(((rss1 - rss0) / 1024)) MiB"
		echo "$line"
		ip -n "$R" -batch "$tmp/del" >/dev/null 2>&1
		unaddrs xp-e1 xp-e2
		xt_wait_for 10 bash -c "! ip -n '$R' link show | grep -q 'prog/xdp'"
	done
fi
