#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The engine benchmark behind `xpile-bench engine` (see docs/bench-engine.md).
# Driven by environment variables so the C front end stays a thin option table:
#
#   XB_MODES    rxdrop,fwd       modes to measure
#   XB_RUNS     5                runs per contender and mode (A/B interleaved)
#   XB_SECONDS  4                measured window per run
#   XB_WARMUP   1                seconds of traffic before the window opens
#   XB_PKT      64               frame size the generator sends
#   XB_DPDK     auto             auto|yes|no: run DPDK testpmd (net_af_xdp) too
#   XB_GEN      auto             auto|testpmd|xpile|xdp: the one traffic source for both
#   XB_RATE     0                the generator's packets a second (--gen xpile); 0 = unlimited
#   XB_GEN_CORE 0, XB_DUT_CORE 1 cores of the generator and of the contender
#   XB_HUGEPAGES 256             2 MiB pages reserved while it runs (2 x testpmd -m 128)
#   XB_XPILE    build/xpile      the engine binary
#   XB_XPILE_ARGS ""             extra `xpile run` options (e.g. --busy-poll)
#   XB_AGAINST  ""               another xpile binary (an old build) as the second
#                                contender "old" instead of DPDK: new/old, interleaved
#   XB_NAPI     ""               DEFER,TIMEOUT_NS: napi_defer_hard_irqs, gro_flush_timeout on d0,d1
#   XB_NAPI_THREAD 0             1: d0/d1 NAPI in a kthread pinned to the contender's core
#   XB_SINK_NAPI 0               1: s1's receive (NAPI, GRO on) in a kthread on the generator's core
#   XB_LOGS     ""               directory that keeps each contender's output, per run
#   XB_TESTPMD  (from PATH)      dpdk-testpmd binary; empty = as if DPDK were absent
#   XB_DPDK_ARGS  ""             extra net_af_xdp devargs (e.g. busy_budget=0)
#
# Topology (all names unique to this run, 198.18.0.0/15, everything removed on exit):
#   [gen] g0 <-veth-> d0 [dut] d1 <-veth-> s1 [sink]
# The generator sends on g0; in rxdrop the contender drops what d0 receives, in fwd it
# forwards d0 -> d1 and the sink's kernel counts what arrives on s1.
#
# Both contenders are measured by the same outside observer, never by their own
# counters: rxdrop = the kernel's successful XDP redirects into the AF_XDP socket on d0
# (veth rx_queue_0_xdp_redirect), fwd = frames received by s1. CPU time is the
# contender's utime+stime over the same window (/proc/PID/stat).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh

modes=${XB_MODES:-rxdrop,fwd}
runs=${XB_RUNS:-5}
win=${XB_SECONDS:-4}
warm=${XB_WARMUP:-1}
pkt=${XB_PKT:-64}
want_dpdk=${XB_DPDK:-auto}
gen=${XB_GEN:-auto}
rate=${XB_RATE:-0}
gcore=${XB_GEN_CORE:-0}
dcore=${XB_DUT_CORE:-1}
hpages=${XB_HUGEPAGES:-256}
xpile=${XB_XPILE:-$XT_BUILD/xpile}
xargs_extra=${XB_XPILE_ARGS:-}
dargs_extra=${XB_DPDK_ARGS:-}
napi=${XB_NAPI:-}
napi_thread=${XB_NAPI_THREAD:-0}
sink_napi=${XB_SINK_NAPI:-0}
against=${XB_AGAINST:-}

die() { echo "xpile-bench engine: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP, AF_XDP): run as root"
for v in "$runs" "$win" "$warm" "$pkt" "$gcore" "$dcore" "$hpages" "$rate"; do
	[[ $v =~ ^[0-9]+$ ]] || die "'$v' is not a number; see --help"
done
[ "$runs" -ge 1 ] && [ "$win" -ge 1 ] || die "--runs and --seconds must be >= 1"
[ "$pkt" -ge 60 ] && [ "$pkt" -le 1514 ] || die "--pkt-size $pkt out of range 60..1514"
case $napi_thread in 0 | 1) ;; *) die "--napi-thread '$napi_thread': use 0 or 1" ;; esac
case $sink_napi in 0 | 1) ;; *) die "--sink-napi '$sink_napi': use 0 or 1" ;; esac
IFS=, read -ra mode_list <<<"$modes"
for m in "${mode_list[@]}"; do
	case $m in rxdrop | fwd) ;; *) die "unknown mode '$m'; use rxdrop and/or fwd" ;; esac
done

if [ -n "$against" ]; then
	[ -x "$against" ] && "$against" run --help >/dev/null 2>&1 ||
		die "--against $against: not an xpile binary with a 'run' command (build the old tree with make)"
	want_dpdk=no
fi
testpmd=${XB_TESTPMD-$(command -v dpdk-testpmd || true)}
[ -n "$testpmd" ] && [ ! -x "$testpmd" ] && testpmd=
case $want_dpdk in
auto) use_dpdk=$([ -n "$testpmd" ] && echo 1 || echo 0) ;;
yes) [ -n "$testpmd" ] || die "dpdk-testpmd not found; apt-get install dpdk, or --dpdk no"
	use_dpdk=1 ;;
no) use_dpdk=0 ;;
*) die "--dpdk '$want_dpdk': use auto, yes or no" ;;
esac
have_xpile=0
[ -x "$xpile" ] && "$xpile" run --help >/dev/null 2>&1 && have_xpile=1
case $gen in
auto) gen=$([ "$use_dpdk" = 1 ] && echo testpmd || echo xpile) ;;
testpmd) [ -n "$testpmd" ] || die "--gen testpmd needs dpdk-testpmd; apt-get install dpdk" ;;
xpile | xdp) ;;
*) die "--gen '$gen': use auto, testpmd, xpile or xdp" ;;
esac
[ "$gen" = xdp ] && { [ -x "${XB_SELF:-}" ] || die "--gen xdp needs XB_SELF (run it as xpile-bench engine)"; }
[ "$gen" = xpile ] && [ "$have_xpile" = 0 ] &&
	die "no traffic source: $xpile is not built (make) and dpdk-testpmd is absent"
[ "$rate" != 0 ] && [ "$gen" != xpile ] &&
	die "--rate needs --gen xpile (the generator '$gen' has no rate limit)"
[ "$gen" = testpmd ] && use_hp=1 || use_hp=$use_dpdk

contenders=()
[ "$have_xpile" = 1 ] && contenders+=(xpile) ||
	echo "# xpile skipped: $xpile not built or has no 'run' command (make)"
# The second contender: an old xpile build (--against), else DPDK testpmd.
other=dpdk
[ -n "$against" ] && other=old && contenders+=(old)
[ -z "$against" ] && { [ "$use_dpdk" = 1 ] && contenders+=(dpdk) ||
	echo "# DPDK skipped: $([ -n "$testpmd" ] && echo "--dpdk no" || echo "dpdk-testpmd not installed (apt-get install dpdk)")"; }
use_other=$([ ${#contenders[@]} = 2 ] && echo 1 || echo 0)
[ ${#contenders[@]} -gt 0 ] || die "nothing to measure: build xpile (make) or install dpdk"

# testpmd's AF_XDP PMD puts its UMEM in the mbuf pool, which only works from hugepages
# here (with --no-huge its rings stall after one burst), so reserve some for the run on
# a private hugetlbfs mount and give them back on exit.
hp_sys=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
hp_give_back() {
	local cur
	cur=$(cat $hp_sys)
	echo $((cur > $1 ? cur - $1 : 0)) >$hp_sys
}
if [ "$use_hp" = 1 ]; then
	hp_dir=$(mktemp -d /tmp/xpile-bench-huge.XXXXXX)
	hp_old=$(cat $hp_sys)
	hp_free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	xt_on_exit "umount '$hp_dir'; rmdir '$hp_dir'"
	if [ "$hp_free" -lt "$hpages" ]; then
		echo $((hp_old + hpages - hp_free)) >$hp_sys
		# Give back what we added, not the old count: others (tests of lib/mem.c) may
		# change nr_hugepages meanwhile.
		xt_on_exit "hp_give_back $(($(cat $hp_sys) - hp_old))"
	fi
	mount -t hugetlbfs -o pagesize=2M none "$hp_dir" || die "cannot mount hugetlbfs on $hp_dir"
	hp_free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	[ "$hp_free" -ge "$hpages" ] || die "only $hp_free free 2 MiB hugepages, need $hpages: free memory or --hugepages"
fi
eal() { # core-list main-lcore prefix
	echo "--no-pci --huge-dir $hp_dir -m 128 --in-memory --no-telemetry" \
		"--file-prefix ${XT_ID}$3 -l $1 --main-lcore $2"
}

# xt_ns called directly (not in $(...)) so its cleanup list lives in this shell.
xt_ns gen >/dev/null && xt_ns dut >/dev/null && xt_ns sink >/dev/null
gns=$XT_ID-gen dns=$XT_ID-dut sns=$XT_ID-sink
xt_veth "$gns" g0 "$dns" d0
xt_veth "$dns" d1 "$sns" s1
ip -n "$gns" addr add 198.18.0.1/24 dev g0
ip -n "$sns" addr add 198.18.1.2/24 dev s1
# Optional NAPI deferral on the contender's veths, the same for both contenders: with
# a busy-polling receiver (SO_PREFER_BUSY_POLL) the veth's NAPI then runs in the
# receiver's syscalls instead of the generator's softirq.
if [ -n "$napi" ]; then
	[[ $napi =~ ^[0-9]+,[0-9]+$ ]] || die "--napi '$napi': use DEFER_HARD_IRQS,GRO_FLUSH_TIMEOUT_NS"
	for d in d0 d1; do
		ip netns exec "$dns" sh -c "echo ${napi%,*} >/sys/class/net/$d/napi_defer_hard_irqs &&
			echo ${napi#*,} >/sys/class/net/$d/gro_flush_timeout" || die "cannot set NAPI deferral on $d"
	done
fi
dmac=$(ip -n "$dns" -o link show d0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)

counter() { # ns dev what
	if [ "$3" = redirect ]; then
		ip netns exec "$1" ethtool -S "$2" | awk '/rx_queue_0_xdp_redirect:/ {print $2}'
	else
		ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"
	fi
}
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)

# Ready once every interface the contender needs carries an XDP program; gives up at
# once if the contender exits.
wait_xdp() { # pid ns dev...
	local pid=$1 ns=$2 d
	shift 2
	for d in "$@"; do
		xt_wait_for 15 bash -c "ip -n '$ns' link show '$d' | grep -q 'prog/xdp' ||
			! kill -0 $pid" && kill -0 "$pid" 2>/dev/null || return 1
	done
}

start_gen() {
	if [ "$gen" = testpmd ]; then
		# shellcheck disable=SC2046 # eal's words are separate arguments
		ip netns exec "$gns" "$testpmd" $(eal "$gcore,$dcore" "$dcore" g) \
			--vdev "net_af_xdp0,iface=g0" -- --forward-mode=txonly --txpkts="$pkt" \
			--total-num-mbufs=16384 --stats-period 1 --auto-start \
			--eth-peer=0,"$dmac" >"$log/gen.log" 2>&1 </dev/null &
	elif [ "$gen" = xdp ]; then
		ip netns exec "$gns" taskset -c "$gcore" "$XB_SELF" gen --iface g0 --dst-mac "$dmac" \
			--pkt-size "$pkt" --seconds $((warm + win + 20)) >"$log/gen.log" 2>&1 </dev/null &
	else
		# xpile's --pkt-size counts the FCS, testpmd's --txpkts does not.
		ip netns exec "$gns" "$xpile" run --iface g0 --cores "$gcore" --quiet \
			--mode txonly --pkt-size $((pkt + 4)) --dst-mac "$dmac" --rate "$rate" \
			--duration $((warm + win + 20)) >"$log/gen.log" 2>&1 </dev/null &
	fi
	gpid=$!
}

start_dut() { # contender mode
	local ifs="--iface d0" vdevs="--vdev net_af_xdp0,iface=d0${dargs_extra:+,$dargs_extra}"
	[ "$2" = fwd ] && ifs+=" --iface d1" &&
		vdevs+=" --vdev net_af_xdp1,iface=d1${dargs_extra:+,$dargs_extra}"
	if [ "$1" = dpdk ]; then
		local fm=rxonly
		[ "$2" = fwd ] && fm=io
		# shellcheck disable=SC2046,SC2086 # eal's and vdevs' words are separate arguments
		ip netns exec "$dns" "$testpmd" $(eal "$gcore,$dcore" "$gcore" d) $vdevs -- \
			--forward-mode=$fm --total-num-mbufs=16384 --stats-period 1 \
			--auto-start >"$log/dut.log" 2>&1 </dev/null &
	else
		local bin=$xpile
		[ "$1" = old ] && bin=$against
		# shellcheck disable=SC2086
		ip netns exec "$dns" "$bin" run $ifs --cores "$dcore" --mode "$2" --interval 1 \
			--duration $((warm + win + 30)) $xargs_extra >"$log/dut.log" 2>&1 </dev/null &
	fi
	dpid=$!
}

log=$(mktemp -d /tmp/xpile-bench-engine.XXXXXX)
xt_on_exit "rm -rf '$log'"

# --napi-thread: the veth's NAPI (XDP program, redirect, copy into the UMEM) leaves the
# generator's softirq for a kthread pinned to the contender's core, as when a NIC queue's
# interrupt and the application share a core. veth only has NAPI while a program is
# attached, so this is done per run, after the contender attached; the kthreads are
# the ones that appear when the switch flips.
napi_pin() { # ns core dev...
	local ns=$1 core=$2 d before after p
	shift 2
	before=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\//{print $1}' | sort)
	for d in "$@"; do
		ip netns exec "$ns" sh -c "echo 0 >/sys/class/net/$d/threaded; echo 1 >/sys/class/net/$d/threaded" ||
			echo "# cannot make $d's NAPI threaded" >&2
	done
	sleep 0.1
	after=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\//{print $1}' | sort)
	for p in $(comm -13 <(echo "$before") <(echo "$after")); do
		taskset -pc "$core" "$p" >/dev/null || echo "# cannot pin NAPI thread $p" >&2
		[ -n "${XB_LOGS:-}" ] && echo "# napi thread $p $(grep Cpus_allowed_list "/proc/$p/status")" >&2
	done
}
napi_to_dut() { napi_pin "$dns" "$dcore" "$@"; }

# The sink's receive work is the sink's (--sink-napi 1): s1 gets NAPI (GRO on) in a
# kthread on the generator's core. Without it veth runs the sink's whole receive path
# inside the sender's syscall, so a fwd contender pays for the sink too (a NIC's wire
# asks nothing of the sender); the same for both contenders.
if [ "$sink_napi" = 1 ]; then
	ip netns exec "$sns" ethtool -K s1 gro on >/dev/null || echo "# cannot turn GRO on for s1" >&2
	napi_pin "$sns" "$gcore" s1
fi

# The previous contender's sockets and programs go away asynchronously after it exits;
# the next one would find its queues busy.
wait_idle() {
	xt_wait_for 10 bash -c "[ -z \"\$(ip netns exec '$dns' ss --xdp -a -H)\" ] &&
		! ip -n '$dns' link show | grep -q 'prog/xdp'"
}

# One measurement: prints "MPPS NS_PER_PKT", "0 zero" when the contender ran and
# nothing arrived (a result: 0 Mpps), or "failed -" (no measurement: the contender
# never attached or died, or the generator died) with the reason on stderr.
measure() { # contender mode
	local c=$1 m=$2 ifs=(d0) a b t0 t1 c0 c1 s0 s1
	[ "$m" = fwd ] && ifs+=(d1)
	wait_idle || echo "# $c $m: the previous contender's sockets are still there" >&2
	# The kernel frees a closed socket's hold on its queue in deferred work that
	# `ss` no longer shows: a start that finds the queue busy is retried.
	local try
	for try in 1 2 3 4; do
		start_dut "$c" "$m"
		wait_xdp "$dpid" "$dns" "${ifs[@]}" && break
		grep -q busy "$log/dut.log" && [ $try -lt 4 ] || break
		xt_stop "$dpid"
		sleep 1
	done
	if ! kill -0 "$dpid" 2>/dev/null || ! wait_xdp "$dpid" "$dns" "${ifs[@]}"; then
		echo "# $c $m: never attached; its log:" >&2
		tail -5 "$log/dut.log" | sed 's/^/#   /' >&2
		xt_stop "$dpid"
		echo "failed -"
		return
	fi
	[ "$napi_thread" = 1 ] && napi_to_dut "${ifs[@]}"
	sleep 0.5
	start_gen
	sleep "$warm"
	if [ "$m" = rxdrop ]; then a=$(counter "$dns" d0 redirect); else a=$(counter "$sns" s1 rx_packets); fi
	c0=$(cputicks "$dpid") t0=$(date +%s%N) s0=$(corestat)
	sleep "$win"
	if [ "$m" = rxdrop ]; then b=$(counter "$dns" d0 redirect); else b=$(counter "$sns" s1 rx_packets); fi
	c1=$(cputicks "$dpid") t1=$(date +%s%N) s1=$(corestat)
	local alive=1 galive=1
	kill -0 "$dpid" 2>/dev/null || alive=0
	kill -0 "$gpid" 2>/dev/null || galive=0
	xt_stop "$gpid"
	xt_stop "$dpid"
	if [ -n "${XB_LOGS:-}" ]; then
		mkdir -p "$XB_LOGS" && cp "$log/dut.log" "$XB_LOGS/$m-$c-$(date +%H%M%S).log"
	fi
	if [ $galive = 0 ]; then
		echo "# $c $m: the generator died; its log:" >&2
		tail -5 "$log/gen.log" | sed 's/^/#   /' >&2
		echo "failed -"
		return
	fi
	if [ $alive = 0 ] || [ -z "$a" ] || [ -z "$b" ]; then
		echo "# $c $m: contender died or no counter; its log:" >&2
		tail -5 "$log/dut.log" | sed 's/^/#   /' >&2
		echo "failed -"
		return
	fi
	if [ "$a" = "$b" ]; then
		echo "# $c $m: nothing arrived in the window: counted as 0 Mpps; the generator's log:" >&2
		tail -5 "$log/gen.log" | sed 's/^/#   /' >&2
		echo "0.000 zero"
		return
	fi
	awk -v p=$((b - a)) -v dt=$((t1 - t0)) -v ct=$((c1 - c0)) -v hz="$hz" 'BEGIN {
		printf "%.3f %.0f ", p * 1000 / dt, (p > 0 ? ct * 1e9 / hz / p : 0) }'
	cpusplit "$s0" "$s1"
}

# Busy and softirq share of the generator's and the contender's cores over the window:
# on veth the receive side's XDP work runs in the softirq of the sending core.
corestat() { awk -v g="cpu$gcore" -v d="cpu$dcore" '$1 == g || $1 == d' /proc/stat | tr '\n' ' '; }
cpusplit() { # "before" "after" (two corestat lines: gen core, dut core, in /proc/stat order)
	awk -v a="$1" -v b="$2" -v g="cpu$gcore" 'BEGIN {
		na = split(a, x, " "); split(b, y, " ")
		for (o = 0; o < na; o += 11) {
			tot = 0
			for (i = 2; i <= 11; i++) tot += y[o + i] - x[o + i]
			idle = y[o + 5] - x[o + 5] + y[o + 6] - x[o + 6]
			si = y[o + 8] - x[o + 8]
			name = x[o + 1] == g ? "gen" : "dut"
			if (tot > 0) printf "%s_core=%.0f%%(si %.0f%%) ", name, 100 * (tot - idle) / tot, 100 * si / tot
		}
	}'
	echo
}

median() { # printf-format, values on stdin
	tr ' ' '\n' | grep . | sort -g | awk -v f="$1" '{v[NR] = $1} END {
	if (!NR) { print "n/a"; exit }
	printf(f, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# shellcheck disable=SC2016 # the quotes around $xargs_extra are printed, it expands
echo "# engine bench: gen=$gen$([ "$rate" != 0 ] && echo " rate=${rate}pps") pkt=${pkt}B runs=$runs window=${win}s cores gen=$gcore dut=$dcore" \
	"contenders=${contenders[*]} load=$(cut -d' ' -f1-3 /proc/loadavg)" \
	"${napi:+napi=$napi }$([ "$napi_thread" = 1 ] && echo "napi_thread=dut_core ")$([ "$sink_napi" = 1 ] && echo "sink_napi=gen_core ")${xargs_extra:+xpile_args='$xargs_extra' }${dargs_extra:+dpdk_args=$dargs_extra}"
for m in "${mode_list[@]}"; do
	declare -A mpps=() nspp=() this=() fails=() zeros=()
	pairs=''
	for r in $(seq "$runs"); do
		# A/B interleaved, and the order flips every run so neither always goes first.
		order=("${contenders[@]}")
		[ $((r % 2)) = 0 ] && [ ${#order[@]} = 2 ] && order=("${order[1]}" "${order[0]}")
		for c in "${order[@]}"; do
			read -r v ns split < <(measure "$c" "$m")
			this[$c]=$v
			if [ "$v" = failed ]; then
				fails[$c]=$((${fails[$c]:-0} + 1))
			elif [ "$ns" = zero ]; then
				# Nothing arrived: a result, 0 Mpps, in the median (no CPU figure).
				zeros[$c]=$((${zeros[$c]:-0} + 1))
				mpps[$c]+="0 " ns=-
			else
				mpps[$c]+="$v " nspp[$c]+="$ns "
			fi
			echo "engine run=$r mode=$m contender=$c mpps=$v cpu_ns_per_pkt=$ns" \
				"${split:+$split }load=$(cut -d' ' -f1 /proc/loadavg)"
		done
		# The two runs of a pair are seconds apart, so their ratio cancels most of the
		# load the other users of the machine put on it.
		[ ${#order[@]} = 2 ] && pairs+="$(awk -v a="${this[xpile]}" -v b="${this[$other]}" \
			'BEGIN { if (a != "failed" && b != "failed" && b + 0 > 0) printf "%.4f", a / b }') "
	done
	line="engine mode=$m"
	xm=$(median %.3f <<<"${mpps[xpile]:-}") dm=$(median %.3f <<<"${mpps[$other]:-}")
	[ "$have_xpile" = 1 ] && line+=" xpile_mpps=$xm"
	[ "$use_other" = 1 ] && line+=" ${other}_mpps=$dm"
	if [ "$have_xpile" = 1 ] && [ "$use_other" = 1 ]; then
		line+=" ratio=$(awk -v a="$xm" -v b="$dm" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }')"
		line+=" paired_ratio=$(median %.2f <<<"$pairs")"
	fi
	[ "$have_xpile" = 1 ] && line+=" xpile_ns_per_pkt=$(median %.0f <<<"${nspp[xpile]:-}")"
	[ "$use_other" = 1 ] && line+=" ${other}_ns_per_pkt=$(median %.0f <<<"${nspp[$other]:-}")"
	# Failed runs (the contender never attached or died) are left out of the medians;
	# runs where nothing arrived are in them as 0.
	for c in "${contenders[@]}"; do
		[ -n "${fails[$c]:-}" ] && line+=" ${c}_failed_runs=${fails[$c]}"
		[ -n "${zeros[$c]:-}" ] && line+=" ${c}_zero_runs=${zeros[$c]}" &&
			echo "# $c $m: ${zeros[$c]} run(s) where nothing arrived count as 0 Mpps in its median" >&2
	done
	echo "$line runs=$runs"
	unset mpps nspp this fails zeros
done
