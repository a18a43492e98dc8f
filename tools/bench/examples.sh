#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# xpile's examples (tools/examples/: build/examples/l2fwd, l3fwd) against DPDK 22.11's
# own examples/l2fwd and examples/l3fwd -L, built unchanged from Debian's dpdk-doc
# sources against libdpdk-dev (tools/bench/dpdk_examples.sh) with --vdev net_af_xdp
# ports. DPDK is optional, never needed by `make` or CI:
#   apt-get install dpdk-doc libdpdk-dev        (or XPILE_WITH_DPDK=1 tools/setup/install-deps.sh)
# Without it the script says so and measures xpile alone. Root; docs/tutorial.md has
# the figures and how they were taken.
#
#   XE_APPS     l2fwd,l3fwd      which pair(s) to measure
#   XE_RUNS     5                runs per contender, A/B interleaved, order flipped per run
#   XE_SECONDS  4                measured window per run
#   XE_WARMUP   1                seconds of traffic before the window
#   XE_PKT      64               frame size (no FCS)
#   XE_RATE     30000            offered packets/s of the equal-rate (CPU per packet) runs
#   XE_MEASURE  rate,cpu         rate: receiver-bound maximum (the XDP live-frames
#                                generator, as fast as the kernel takes it);
#                                cpu: CPU per forwarded packet at XE_RATE for both
#   XE_GEN_CORE 0, XE_DUT_CORE 1 cores of the generator and of the forwarder
#   XE_DPDK_DIR build/dpdk-examples   where dpdk_examples.sh put l2fwd and l3fwd
#   XE_XPILE_ARGS ""            extra options for xpile's examples
#   XE_CONTENDERS xpile,dpdk    who runs (DPDK only where its examples are built)
#
# Topology (names unique to this run, 198.18.0.0/15, all removed on exit):
#   [gen] g0 <-veth-> d0 [dut] d1 <-veth-> s1 [sink]
# The generator sends one UDP/IPv4 flow 198.18.0.1 -> 198.18.0.2 to d0's MAC. Both
# forwarders send it out of d1: l2fwd by its port pair (0 <-> 1), l3fwd by the route
# 198.18.0.0/24 -> port 1 (the same route file, in DPDK's format, for both). d0's and
# d1's NAPI run threaded, in kthreads pinned to the forwarder's core (as one NIC
# queue's interrupt and its application share a core), so the receiver, not the
# sender, decides the rate. The observer is the same for both: frames that reach s1
# (its kernel counter), and CPU = the forwarder's utime+stime plus its NAPI kthreads'
# over the window (/proc), per forwarded packet.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh
. tools/bench/dpdk_env.sh

apps=${XE_APPS:-l2fwd,l3fwd}
runs=${XE_RUNS:-5}
win=${XE_SECONDS:-4}
warm=${XE_WARMUP:-1}
pkt=${XE_PKT:-64}
rate=${XE_RATE:-30000}
measures=${XE_MEASURE:-rate,cpu}
gcore=${XE_GEN_CORE:-0}
dcore=${XE_DUT_CORE:-1}
ddir=${XE_DPDK_DIR:-$XT_BUILD/dpdk-examples}
xdir=$XT_BUILD/examples
xargs_extra=${XE_XPILE_ARGS:-}
bench=$XT_BUILD/xpile-bench
xpile=$XT_BUILD/xpile

die() { echo "examples bench: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP, AF_XDP): run as root"
for v in "$runs" "$win" "$warm" "$pkt" "$rate" "$gcore" "$dcore"; do
	[[ $v =~ ^[0-9]+$ ]] || die "'$v' is not a number"
done
[ "$runs" -ge 1 ] && [ "$win" -ge 1 ] && [ "$rate" -ge 1 ] || die "XE_RUNS, XE_SECONDS and XE_RATE must be >= 1"
IFS=, read -ra app_list <<<"$apps"
IFS=, read -ra meas_list <<<"$measures"
for a in "${app_list[@]}"; do case $a in l2fwd | l3fwd) ;; *) die "XE_APPS: unknown '$a'; use l2fwd and/or l3fwd" ;; esac; done
for m in "${meas_list[@]}"; do case $m in rate | cpu) ;; *) die "XE_MEASURE: unknown '$m'; use rate and/or cpu" ;; esac; done
[ -x "$bench" ] && [ -x "$xpile" ] || die "$bench or $xpile not built: run make"

# DPDK's binaries, built here if the sources and the library are installed, and a
# private hugetlbfs: net_af_xdp puts its UMEM in the mbuf pool, and l3fwd its rte_lpm
# tables (IPv4 and IPv6, about 200 MB), in hugepages.
dpdk_env_init "$ddir"
IFS=, read -ra want <<<"${XE_CONTENDERS:-xpile,dpdk}"
contenders=()
for c in "${want[@]}"; do
	case $c in
	xpile)
		for a in "${app_list[@]}"; do
			[ -x "$xdir/$a" ] || die "$xdir/$a not built: run make (or XE_CONTENDERS=dpdk)"
		done
		contenders+=(xpile) ;;
	dpdk) [ "$have_dpdk" = 1 ] && contenders+=(dpdk) ;;
	*) die "XE_CONTENDERS: unknown '$c'; use xpile and/or dpdk" ;;
	esac
done
[ ${#contenders[@]} -gt 0 ] || die "nothing to measure (XE_CONTENDERS=${XE_CONTENDERS:-xpile,dpdk})"
have_both=$([ ${#contenders[@]} = 2 ] && echo 1 || echo 0)

log=$(mktemp -d /tmp/xpile-bench-examples.XXXXXX)
xt_on_exit "rm -rf '$log'"

xt_ns gen >/dev/null && xt_ns dut >/dev/null && xt_ns sink >/dev/null
gns=$XT_ID-gen dns=$XT_ID-dut sns=$XT_ID-sink
xt_veth "$gns" g0 "$dns" d0
xt_veth "$dns" d1 "$sns" s1
for p in "$gns g0" "$dns d0" "$dns d1" "$sns s1"; do
	ip netns exec "${p% *}" sysctl -qw "net.ipv6.conf.${p#* }.disable_ipv6=1"
done
ip -n "$gns" addr add 198.18.0.1/24 dev g0
ip -n "$sns" addr add 198.18.0.2/24 dev s1
dmac=$(ip -n "$dns" -o link show d0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
smac=$(ip -n "$sns" -o link show s1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
# One route file for both l3fwds, in DPDK's format (xpile's reads it too).
printf '# the bench flow 198.18.0.1 -> 198.18.0.2 leaves on port 1 (d1)\nR198.18.0.0/24 1\n' >"$log/routes4.cfg"
printf 'R2001:0002:0000:0000:0000:0000:0000:0000/64 1\n' >"$log/routes6.cfg"
cat "$log/routes4.cfg" "$log/routes6.cfg" >"$log/routes.cfg"
hz=$(getconf CLK_TCK)

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
ticks_all() { local p s=0; for p in "$@"; do s=$((s + $(ticks "$p"))); done; echo $s; }
rx() { ip netns exec "$sns" cat /sys/class/net/s1/statistics/rx_packets; }

start_dut() { # contender app
	local mem=128
	[ "$2" = l3fwd ] && mem=384
	local eal
	eal=$(dpdk_eal "$mem" "$dcore" "${XT_ID}d")
	[ "$1" = dpdk ] && hp_ensure $((mem / 2 + 16))
	local vdevs="--vdev net_af_xdp0,iface=d0 --vdev net_af_xdp1,iface=d1"
	# exec: $! is the forwarder itself (ip netns exec execs it), whose CPU is measured.
	case $1-$2 in
	dpdk-l2fwd)
		# -q 2: both ports on the one lcore; -T 0: no statistics screen. MAC updating
		# (the default) rewrites the destination per port, as xpile's l2fwd does.
		# shellcheck disable=SC2086
		exec ip netns exec "$dns" "$ddir/l2fwd" $eal $vdevs -- -p 0x3 -q 2 -T 0 ;;
	dpdk-l3fwd)
		# shellcheck disable=SC2086
		exec ip netns exec "$dns" "$ddir/l3fwd" $eal $vdevs -- -p 0x3 -L --parse-ptype \
			--config="(0,0,$dcore),(1,0,$dcore)" --rule_ipv4="$log/routes4.cfg" \
			--rule_ipv6="$log/routes6.cfg" --eth-dest=1,"$smac" ;;
	xpile-l2fwd)
		# shellcheck disable=SC2086
		exec ip netns exec "$dns" "$xdir/l2fwd" --iface d0 --iface d1 --cores "$dcore" $xargs_extra ;;
	xpile-l3fwd)
		# shellcheck disable=SC2086
		exec ip netns exec "$dns" "$xdir/l3fwd" --iface d0 --iface d1 --cores "$dcore" \
			--routes "$log/routes.cfg" --eth-dest 1,"$smac" $xargs_extra ;;
	esac >"$log/dut.log" 2>&1 </dev/null &
	dpid=$!
}

start_gen() { # measure
	if [ "$1" = rate ]; then
		ip netns exec "$gns" taskset -c "$gcore" "$bench" gen --iface g0 --dst-mac "$dmac" \
			--pkt-size "$pkt" --seconds $((warm + win + 20)) >"$log/gen.log" 2>&1 </dev/null &
	else
		# The engine's txonly paces to --rate; its --pkt-size counts the FCS.
		ip netns exec "$gns" "$xpile" run --iface g0 --cores "$gcore" --quiet --mode txonly \
			--pkt-size $((pkt + 4)) --dst-mac "$dmac" --src-ip 198.18.0.1 --dst-ip 198.18.0.2 \
			--rate "$rate" --duration $((warm + win + 20)) >"$log/gen.log" 2>&1 </dev/null &
	fi
	gpid=$!
}

# d0/d1 NAPI into kthreads pinned to the forwarder's core; prints their pids. veth has
# NAPI only while an XDP program is attached, so this follows the attach, per run.
napi_to_dut() {
	local before after p
	before=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\//{print $1}' | sort)
	for d in d0 d1; do
		ip netns exec "$dns" sh -c "echo 0 >/sys/class/net/$d/threaded; echo 1 >/sys/class/net/$d/threaded"
	done
	sleep 0.1
	after=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\//{print $1}' | sort)
	for p in $(comm -13 <(echo "$before") <(echo "$after")); do
		taskset -pc "$dcore" "$p" >/dev/null && echo "$p"
	done
}

idle() { [ -z "$(ip netns exec "$dns" ss --xdp -a -H)" ] && ! ip -n "$dns" link show | grep -q 'prog/xdp'; }

# One run: "MPPS NS_PER_PKT NS_PER_PKT_WITH_NAPI", or "failed - -" with why on stderr.
measure() { # contender app measure
	local a b t0 t1 c0 c1 n0 n1 napi
	xt_wait_for 10 idle || echo "# $1 $2: the previous contender's sockets are still there" >&2
	# A closed socket frees its queue in deferred work: a start that finds it busy
	# (DPDK: queue set-up -EINVAL, xpile: busy) is retried.
	local try
	for try in 1 2 3 4; do
		start_dut "$1" "$2"
		xt_wait_for 20 bash -c "[ \$(ip -n '$dns' link show | grep -c prog/xdp) = 2 ] || ! kill -0 $dpid" &&
			kill -0 "$dpid" 2>/dev/null && break
		grep -qi 'busy\|err=-22\|err=-16' "$log/dut.log" && [ $try -lt 4 ] || break
		xt_stop "$dpid"
		sleep 1
	done
	if ! xt_wait_for 20 bash -c "[ \$(ip -n '$dns' link show | grep -c prog/xdp) = 2 ] || ! kill -0 $dpid" ||
		! kill -0 "$dpid" 2>/dev/null; then
		echo "# $1 $2: never attached; its log:" >&2
		tail -"${XE_LOGLINES:-5}" "$log/dut.log" | sed 's/^/#   /' >&2
		xt_stop "$dpid"
		echo "failed - -"
		return
	fi
	# shellcheck disable=SC2207
	napi=($(napi_to_dut))
	sleep 0.5
	start_gen "$3"
	sleep "$warm"
	a=$(rx) c0=$(ticks "$dpid") n0=$(ticks_all "${napi[@]}") t0=$(date +%s%N)
	sleep "$win"
	b=$(rx) c1=$(ticks "$dpid") n1=$(ticks_all "${napi[@]}") t1=$(date +%s%N)
	local alive=1
	kill -0 "$dpid" 2>/dev/null || alive=0
	xt_stop "$gpid"
	xt_stop "$dpid"
	if [ $alive = 0 ] || [ "$a" = "$b" ]; then
		echo "# $1 $2 $3: $([ $alive = 0 ] && echo died || echo 'nothing forwarded'); its log:" >&2
		tail -"${XE_LOGLINES:-5}" "$log/dut.log" | sed 's/^/#   /' >&2
		echo "failed - -"
		return
	fi
	awk -v p=$((b - a)) -v dt=$((t1 - t0)) -v c=$((c1 - c0)) -v n=$((n1 - n0)) -v hz="$hz" 'BEGIN {
		printf "%.3f %.0f %.0f\n", p * 1000 / dt, c * 1e9 / hz / p, (c + n) * 1e9 / hz / p }'
}

median() { tr ' ' '\n' | grep . | sort -g | awk -v f="$1" '{v[NR] = $1} END {
	if (!NR) { print "n/a"; exit }
	printf(f, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }'; }

echo "# examples bench: apps=$apps measure=$measures pkt=${pkt}B rate=${rate}pps runs=$runs" \
	"window=${win}s cores gen=$gcore dut=$dcore napi=threaded,dut_core contenders=${contenders[*]}" \
	"load=$(cut -d' ' -f1-3 /proc/loadavg)"
for app in "${app_list[@]}"; do
	for m in "${meas_list[@]}"; do
		declare -A mpps=() ns=() nsn=()
		for r in $(seq "$runs"); do
			order=("${contenders[@]}")
			[ $((r % 2)) = 0 ] && [ ${#order[@]} = 2 ] && order=("${order[1]}" "${order[0]}")
			for c in "${order[@]}"; do
				read -r v n nn < <(measure "$c" "$app" "$m")
				echo "examples app=$app measure=$m run=$r contender=$c mpps=$v cpu_ns_per_pkt=$n cpu_ns_per_pkt_with_napi=$nn"
				[ "$v" = failed ] && continue
				mpps[$c]+="$v " ns[$c]+="$n " nsn[$c]+="$nn "
			done
		done
		line="examples app=$app measure=$m"
		for c in "${contenders[@]}"; do
			line+=" ${c}_mpps=$(median %.3f <<<"${mpps[$c]:-}") ${c}_ns_per_pkt=$(median %.0f <<<"${ns[$c]:-}")"
			line+=" ${c}_ns_per_pkt_with_napi=$(median %.0f <<<"${nsn[$c]:-}")"
		done
		if [ "$have_both" = 1 ]; then
			line+=" rate_ratio=$(ratio "$(median %.3f <<<"${mpps[xpile]:-}")" "$(median %.3f <<<"${mpps[dpdk]:-}")")"
			line+=" cpu_ratio=$(ratio "$(median %.0f <<<"${ns[xpile]:-}")" "$(median %.0f <<<"${ns[dpdk]:-}")")"
			line+=" cpu_ratio_with_napi=$(ratio "$(median %.0f <<<"${nsn[xpile]:-}")" "$(median %.0f <<<"${nsn[dpdk]:-}")")"
		fi
		echo "$line runs=$runs"
		unset mpps ns nsn
	done
done
