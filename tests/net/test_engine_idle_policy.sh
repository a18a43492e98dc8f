#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The idle policy on real traffic (issue 28, section 1; user/idle.c): an fwd engine says
# once what a wake-up costs (measured at start, or --idle-wake-us) and which busy-poll
# path is in use (auto where the interfaces defer their IRQs); with a wake-up given as 10 ms (a loaded machine's
# generator sends in bursts milliseconds apart) its worker sleeps between pings 50 ms
# apart (low rate: the gap is over a wake-up) and spins through 300 kpps from an xpile
# txonly (high rate: the gap is under it), as its --json idle lines say; measured, the choice follows
# this machine's figure. Every ping is answered and the ledger is clean either way.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_wire_hosts 198.18.9 1500
H2_ADDR=198.18.9.2
# The engine's worker on the last core, everything else of this suite (pings, the generator
# and the softirqs they run) on the first: a worker sharing its core with them is
# right not to spin (it would starve them), and would show nothing here.
last=$(($(nproc) - 1))
[ "$last" -gt 0 ] || xt_fail "one CPU: the worker's core cannot be kept to itself"
all=$(taskset -pc $$ | awk '{print $NF}')

# The idle lines' policies between two times: "POLICY COUNT" per policy seen.
policies() { # file from to
	jq -r --argjson a "$2" --argjson b "$3" \
		'select(.type == "idle" and .time > $a and .time <= $b) | .policy' "$1" | sort | uniq -c
}
now_t() { # file: the last interval's time
	jq -r 'select(.type == "interval") | .time' "$1" | tail -1
}

for run in given measured; do
	v=ENG_$run
	args=()
	[ "$run" = given ] && args=(--idle-wake-us 10000)
	eng_start "$v" "$E" --iface e1 --iface e2 --mode fwd --cores "$last" --ledger-debug \
		--interval 0.25 "${args[@]}"
	out=$XT_TMP/$v
	n=$(grep -c '"type":"idle_policy"' "$out.json")
	[ "$n" = 1 ] || { cat "$out.err"; xt_fail "$run: $n idle_policy lines, want 1"; }
	pol=$(grep '"type":"idle_policy"' "$out.json")
	wake=$(jq -r 'select(.type == "idle_policy") | .wake_ns' "$out.json")
	measured=$(jq -r 'select(.type == "idle_policy") | .measured' "$out.json")
	if [ "$run" = given ]; then
		[ "$wake" = 10000000 ] && [ "$measured" = false ] || xt_fail "given: $pol"
	else
		[ "$measured" = true ] && [ "$wake" -gt 0 ] && [ "$wake" -lt 10000000 ] ||
			xt_fail "measured: $pol"
	fi
	grep -q '"busy_poll":"off"' <<<"$pol" || xt_fail "$run: busy-poll not said off: $pol"
	taskset -pc 0 $$ >/dev/null || xt_fail "cannot pin the suite to core 0"
	xt_wait_for 5 ip netns exec "$H1" ping -c 1 -W 1 "$H2_ADDR" ||
		xt_fail "$run: no ping through the engine within 5 s"
	# Low rate: 40 pings 50 ms apart; the idle lines of the last second of them.
	ip netns exec "$H1" ping -c 40 -i 0.05 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1
	grep -q '40 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "$run: pings lost"; }
	t1=$(now_t "$out.json")
	low=$(policies "$out.json" "$(awk -v t="$t1" 'BEGIN {print t - 1}')" "$t1")
	# High rate: 300 kpps from an xpile txonly on H1's side, for 3 s; the idle lines
	# of its last second.
	ip netns exec "$H1" "$XPILE" run --iface h1 --mode txonly --cores 0 --rate 300000 \
		--duration 3 --quiet >"$XT_TMP/gen" 2>&1 || { cat "$XT_TMP/gen"; xt_fail "$run: txonly failed"; }
	t2=$(now_t "$out.json")
	high=$(policies "$out.json" "$(awk -v t="$t2" 'BEGIN {print t - 1}')" "$t2")
	fwd=$(jq -s '[.[] | select(.type == "interval" and .port == "e2")] | last | .tx_packets' "$out.json")
	[ "${fwd:-0}" -gt 100000 ] || xt_fail "$run: only ${fwd:-0} packets forwarded of 900000"
	# A core of a busy machine is at times shared, and then right not to spin: one
	# spinning line of the last second will do.
	spun=$(awk '$2 == "spin" {print $1}' <<<"$high")
	taskset -pc "$all" $$ >/dev/null || xt_fail "cannot give the suite its cores back"
	eng_stop "${!v}" || { rc=$?; cat "$out.err"; xt_fail "$run: exit status $rc"; }
	eng_ledger_ok "$out.json" || xt_fail "$run: ledger not clean"
	low1=$(awk 'NR == 1 || $1 > m {m = $1; p = $2} END {print p}' <<<"$low")
	high1=$(awk 'NR == 1 || $1 > m {m = $1; p = $2} END {print p}' <<<"$high")
	[ -n "$low1" ] && [ -n "$high1" ] || xt_fail "$run: no idle lines (low: $low; high: $high)"
	high=$(tr '\n' ' ' <<<"$high")
	if [ "$run" = given ]; then
		[ "$low1" = sleep ] || xt_fail "given 10 ms: pings 50 ms apart chose $low1, want sleep"
		grep -q spin <<<"$low" && xt_fail "given 10 ms: pings 50 ms apart chose spin: $low"
		[ -n "$spun" ] || { grep '"type":"idle"' "$out.json" | tail -6 >&2; xt_fail "given 10 ms: 300 kpps chose $high, want spin"; }
		spins=$(jq -s '[.[] | select(.type == "idle")] | last | .spins' "$out.json")
		sleeps=$(jq -s '[.[] | select(.type == "idle")] | last | .sleeps' "$out.json")
		[ "$spins" -gt 0 ] && [ "$sleeps" -gt 0 ] ||
			xt_fail "given 10 ms: $spins idle periods ended spinning, $sleeps asleep"
	else
		case "$low1" in sleep | nap) ;; *) xt_fail "measured: pings 50 ms apart chose $low1" ;; esac
	fi
	echo "$run: wake-up ${wake} ns; pings 50 ms apart -> $low1; 300 kpps ($fwd forwarded) -> $high"
done
# The interfaces deferring their IRQs (the kernel's AF_XDP busy-poll set-up): preferred
# busy polling on by itself, said; veth gives no NAPI id, so no queue is polled and the
# engine says why; traffic still flows.
for d in e1 e2; do
	ip netns exec "$E" sh -c "echo 2 >/sys/class/net/$d/napi_defer_hard_irqs &&
		echo 200000 >/sys/class/net/$d/gro_flush_timeout" || xt_fail "cannot set $d's IRQ deferral"
done
eng_start ENG_bp "$E" --iface e1 --iface e2 --mode fwd --cores "$last" --interval 0.25
out=$XT_TMP/ENG_bp
grep -q '"type":"idle_policy".*"busy_poll":"auto"' "$out.json" ||
	{ grep idle_policy "$out.json"; xt_fail "deferring IRQs: busy-poll not said auto"; }
xt_wait_for 5 ip netns exec "$H1" ping -c 1 -W 1 "$H2_ADDR" ||
	xt_fail "busy-poll auto: no ping through the engine within 5 s"
ip netns exec "$H1" ping -c 10 -i 0.05 -W 2 "$H2_ADDR" >"$XT_TMP/ping" 2>&1
grep -q '10 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping"; xt_fail "busy-poll auto: pings lost"; }
xt_wait_for 3 grep -q 'no NAPI id.*not busy polled' "$out.err" ||
	{ cat "$out.err"; xt_fail "busy-poll auto on veth: the missing NAPI id not said"; }
# shellcheck disable=SC2154 # eng_start sets it (printf -v)
eng_stop "$ENG_bp" || { rc=$?; cat "$out.err"; xt_fail "busy-poll auto: exit status $rc"; }
echo "deferring IRQs: busy-poll auto, veth's queues not polled (no NAPI id), 10/10 pings"
echo ok
