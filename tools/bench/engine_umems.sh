#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What several UMEMs cost the engine at start-up (issue 16, item 1): xpile rxdrop on N
# veth ports with --umem shared (one UMEM) against --umem per-port (N UMEMs carved from
# the one arena of the node), alternating, medians over the runs.
#
#   tools/bench/engine_umems.sh [N...]     (default: 1 4 8; the engine takes 8 ports at most)
#   EU_RUNS 5, EU_HUGEPAGES never|auto|require (default never)
#
# Start-up is from the exec to the ready line (the JSON "ready" object); memory is read
# at ready from /proc/PID: resident set (VmRSS), mappings, memfd mappings (the arena),
# open fds, and the UMEM bytes the ready line reports. Prints per run
#   engine_umems n=N umem=MODE ms=T rss_kib=R maps=M memfd_maps=F fds=D umems=U umem_bytes=B
# and per N and mode the medians.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh

runs=${EU_RUNS:-5}
hp=${EU_HUGEPAGES:-never}
xpile=${EU_XPILE:-$XT_BUILD/xpile}
ns_list=("$@")
[ ${#ns_list[@]} -gt 0 ] || ns_list=(1 4 8)
[ "$(id -u)" = 0 ] || { echo "engine_umems.sh: needs root" >&2; exit 2; }
[ -x "$xpile" ] || { echo "engine_umems.sh: $xpile missing: run make" >&2; exit 2; }
tmp=$(mktemp -d /tmp/xpile-eu.XXXXXX)
xt_on_exit "rm -rf '$tmp'"
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
field() { grep -o "\"$1\":[0-9]*" "$2" | head -1 | cut -d: -f2; }

for n in "${ns_list[@]}"; do
	ans=$(xt_ns "eua$n") bns=$(xt_ns "eub$n")
	args=()
	for ((i = 0; i < n; i++)); do
		xt_veth "$ans" "a$i" "$bns" "b$i"
		ip netns exec "$bns" sysctl -qw "net.ipv6.conf.b$i.disable_ipv6=1"
		args+=(--iface "b$i")
	done
	for ((r = 0; r < runs; r++)); do
		order=(shared per-port)
		((r % 2)) && order=(per-port shared)
		for u in "${order[@]}"; do
			rm -f "$tmp/out" # a fresh file: the job opens it after the fork
			t0=$(date +%s%N)
			ip netns exec "$bns" "$xpile" run "${args[@]}" --mode rxdrop --umem "$u" \
				--hugepages "$hp" --json --interval 3600 >"$tmp/out" 2>"$tmp/err" &
			pid=$!
			XT_PIDS+=("$pid")
			xt_wait_for 30 grep -qs '"type":"ready"' "$tmp/out" || { cat "$tmp/err" >&2; exit 1; }
			t1=$(date +%s%N)
			rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
			maps=$(wc -l <"/proc/$pid/maps")
			memfd=$(grep -c 'memfd:' "/proc/$pid/maps")
			fds=$(find "/proc/$pid/fd" -mindepth 1 | wc -l)
			umems=$(field umems "$tmp/out")
			bytes=$(field umem_bytes "$tmp/out")
			kill -INT "$pid"
			wait "$pid"
			ms=$(((t1 - t0) / 1000000))
			echo "engine_umems n=$n umem=$u ms=$ms rss_kib=$rss maps=$maps memfd_maps=$memfd fds=$fds umems=$umems umem_bytes=$bytes"
			for k in ms rss maps memfd fds; do echo "${!k}" >>"$tmp/$n.$u.$k"; done
		done
	done
	for u in shared per-port; do
		line="engine_umems median n=$n umem=$u runs=$runs"
		for k in ms rss maps memfd fds; do line+=" $k=$(median <"$tmp/$n.$u.$k")"; done
		echo "$line"
	done
	for ((i = 0; i < n; i++)); do ip -n "$ans" link del "a$i" 2>/dev/null; done
done
