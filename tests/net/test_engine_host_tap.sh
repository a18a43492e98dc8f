#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --host-tap (issue 11, section 1): h1 <-> [e1 xpile fwd e2] <-> h2 with a TAP xp-e1 in
# the engine's namespace holding 198.18.5.3. h1 pings the host (ARP goes up as a
# broadcast copy, the reply comes down by inject), an iperf3 TCP stream h1 -> host runs
# while h1 <-> h2 pings through fwd keep working; the counters say what went up and
# down; the TAP deleted under traffic is told once and fwd goes on; the ledger is clean
# and the TAP is gone at exit; the TAP's carrier follows the port's. The inject reads with multishot (the default here); then
# with --host-tap-read fixed (the fallback) and --host-tap-keep: the TAP and the address
# given to it stay at exit, the next start reuses them, and without the flag it goes.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"
[ -c /dev/net/tun ] || xt_skip "/dev/net/tun missing: modprobe tun"

eng_wire_hosts 198.18.5 1500
HOST=198.18.5.3

# Bad TAP names: one line each naming why. An interface that exists and is not a TAP
# (the other port, a TUN device) cannot be one; a '/', ':' or a space is never a name.
ip -n "$E" tuntap add dev xp-tun mode tun
badtap() { # --host-tap-value status line
	ip netns exec "$E" timeout 10 "$XPILE" run --iface e1 --iface e2 --mode fwd --cores 0 \
		--duration 1 --host-tap "$1" >/dev/null 2>"$XT_TMP/tap.err"
	rc=$?
	[ $rc = "$2" ] && [ "$(cat "$XT_TMP/tap.err")" = "$3" ] ||
		xt_fail "--host-tap $1: exit $rc, want $2: got '$(cat "$XT_TMP/tap.err")', want '$3'"
	eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "--host-tap $1: XDP program left attached"
}
badtap e1=e2 1 "xpile: --host-tap e1=e2: e2 exists and is not a TAP (driver veth): name a new interface, e.g. --host-tap e1=xp-e1"
badtap e1=xp-tun 1 "xpile: --host-tap e1=xp-tun: xp-tun exists and is a TUN device, not a TAP: name a new interface, e.g. --host-tap e1=xp-e1"
badtap e1=a/b 2 "xpile: --host-tap e1=a/b: an interface name has no '/', ':' or white space (see 'xpile run --help')"
badtap 'e1=a b' 2 "xpile: --host-tap 'e1=a b': an interface name has no '/', ':' or white space (see 'xpile run --help')"
ip -n "$E" link del xp-tun
echo "bad TAP names: $(cat "$XT_TMP/tap.err")"

eng_start ENG "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug --audit \
	--interval 0.5 --host-tap e1
ip -n "$E" link show xp-e1 >/dev/null 2>&1 || xt_fail "no TAP xp-e1 in the engine's namespace"
[ "$(ip -n "$E" -o link show xp-e1 | grep -o 'link/ether [0-9a-f:]*')" = \
	"$(ip -n "$E" -o link show e1 | grep -o 'link/ether [0-9a-f:]*')" ] || xt_fail "xp-e1 has not e1's MAC"
eng_quiet "$E" xp-e1
ip -n "$E" addr add "$HOST/24" dev xp-e1
sleep 0.5 # an engine started again on the same veth may miss its first ~150 ms

ip netns exec "$H1" ping -c 10 -i 0.05 -W 2 "$HOST" >"$XT_TMP/ping" 2>&1
grep -q '10 received' "$XT_TMP/ping" || { cat "$XT_TMP/ping" "$XT_TMP/ENG.err"; xt_fail "the host behind the TAP does not answer pings"; }
rtt=$(grep -o 'rtt [^=]*= [0-9.]*/[0-9.]*' "$XT_TMP/ping" | cut -d/ -f5)

# iperf3 h1 -> host while h1 pings h2 through fwd.
ip netns exec "$E" iperf3 -s -1 -p 5212 -B "$HOST" >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$E" bash -c "ss -ltn | grep -q :5212" || xt_fail "iperf3 server did not start"
ip netns exec "$H1" ping -c 40 -i 0.05 -W 2 198.18.5.2 >"$XT_TMP/ping2" 2>&1 &
P=$!
ip netns exec "$H1" timeout 20 iperf3 -c "$HOST" -p 5212 -t 2 -J >"$XT_TMP/iperf" 2>&1 ||
	{ tail -5 "$XT_TMP/iperf"; xt_fail "iperf3 h1 -> host through the TAP failed"; }
wait "$P"
grep -q '40 received' "$XT_TMP/ping2" || { cat "$XT_TMP/ping2"; xt_fail "fwd lost pings while the host took a TCP stream"; }
got=$(grep -o '"bytes":[[:space:]]*[0-9]*' "$XT_TMP/iperf" | tail -1 | grep -o '[0-9]*$')
[ "${got:-0}" -gt 1000000 ] || xt_fail "iperf3 to the host moved only ${got:-0} bytes"

# The port's carrier on its TAP: h1 down takes e1's carrier, and xp-e1 loses its own
# within the engine's watch (200 ms), so the kernel marks its routes linkdown; h1 up
# gives it back and the host answers again.
carrier() { ip -n "$E" -o link show xp-e1 | grep -q 'NO-CARRIER' && echo off || echo on; }
[ "$(carrier)" = on ] || xt_fail "xp-e1 has no carrier while e1 has"
ip -n "$H1" link set h1 down
t0=$(date +%s%N)
xt_wait_for 3 bash -c "ip -n '$E' -o link show xp-e1 | grep -q NO-CARRIER" ||
	{ cat "$XT_TMP/ENG.err"; xt_fail "xp-e1 kept its carrier with e1's link down"; }
off_ms=$((($(date +%s%N) - t0) / 1000000))
ip -n "$E" route show dev xp-e1 | grep -q linkdown ||
	xt_fail "the kernel's route through xp-e1 is not marked linkdown: $(ip -n "$E" route show dev xp-e1)"
ip -n "$H1" link set h1 up
t0=$(date +%s%N)
xt_wait_for 3 bash -c "! ip -n '$E' -o link show xp-e1 | grep -q NO-CARRIER" ||
	{ cat "$XT_TMP/ENG.err"; xt_fail "xp-e1 did not get its carrier back with e1's link"; }
on_ms=$((($(date +%s%N) - t0) / 1000000))
xt_wait_for 5 ip netns exec "$H1" ping -c 1 -W 1 "$HOST" >/dev/null ||
	xt_fail "the host behind the TAP does not answer after the link came back"
echo "host tap carrier: off ${off_ms} ms after h1 went down, on ${on_ms} ms after it came up"

# The TAP deleted under traffic: one line, fwd goes on.
ip netns exec "$H1" ping -c 40 -i 0.05 -W 2 198.18.5.2 >"$XT_TMP/ping3" 2>&1 &
P=$!
ip netns exec "$H1" ping -c 20 -i 0.02 -W 0.1 "$HOST" >/dev/null 2>&1 &
P2=$!
sleep 0.3
ip -n "$E" link del xp-e1 || xt_fail "cannot delete xp-e1"
wait "$P"
wait "$P2"
grep -q '40 received' "$XT_TMP/ping3" || { cat "$XT_TMP/ping3"; xt_fail "fwd lost pings when the TAP was deleted"; }
GONE="xpile: host TAP xp-e1 was deleted (ip link del?): punt and inject for e1 stop, the fast path goes on; restart the engine to get the TAP back"
xt_wait_for 3 grep -qxF "$GONE" "$XT_TMP/ENG.err" || { cat "$XT_TMP/ENG.err"; xt_fail "no line saying the TAP was deleted"; }
[ "$(grep -c 'host TAP xp-e1' "$XT_TMP/ENG.err")" = 1 ] || { cat "$XT_TMP/ENG.err"; xt_fail "the deleted TAP was told more than once"; }
# Idle with the TAP gone, the worker sleeps (its fd is no longer in the wait).
c0=$(awk '{print $14 + $15}' "/proc/$ENG/stat")
sleep 1
c1=$(awk '{print $14 + $15}' "/proc/$ENG/stat")
[ $((c1 - c0)) -lt $(($(getconf CLK_TCK) / 2)) ] || xt_fail "the idle engine used $((c1 - c0)) ticks in 1 s with its TAP gone"
echo "host tap deleted: $(grep 'host TAP xp-e1 was' "$XT_TMP/ENG.err" | head -c 200); 40/40 pings through fwd; idle: $((c1 - c0)) ticks in 1 s"

eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exited with status $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || { grep ledger "$XT_TMP/ENG.json" | tail -3; xt_fail "ledger not clean"; }
grep -q '"type":"ledger","when":"audit"' "$XT_TMP/ENG.json" || xt_fail "no audit ran"
# Frames in io_uring (the inject's provided frames, punts being written) have their own
# ledger place: the audits while running count them, and at exit every one is back.
grep '"type":"ledger"' "$XT_TMP/ENG.json" | grep -v '"when":"exit"' | grep -q '"uring":[1-9]' ||
	{ grep '"type":"ledger"' "$XT_TMP/ENG.json" | head -3; xt_fail "no audit counted frames in io_uring"; }
grep '"type":"ledger","when":"exit"' "$XT_TMP/ENG.json" | grep -q '"uring":0,' ||
	{ grep '"when":"exit"' "$XT_TMP/ENG.json"; xt_fail "frames still in io_uring at exit"; }
line=$(grep '"type":"host_tap"' "$XT_TMP/ENG.json")
for f in punted copied injected; do
	v=$(grep -o "\"$f\":[0-9]*" <<<"$line" | cut -d: -f2)
	[ "${v:-0}" -gt 0 ] || xt_fail "host_tap $f is ${v:-0}: $line"
done
eng_tap_gone "$E" xp-e1 || xt_fail "xp-e1 left behind"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP program left attached"
grep -q '"inject_read":"multishot"' <<<"$line" || xt_fail "the inject did not read with multishot: $line"
echo "host tap: 10/10 pings to the host (avg rtt $rtt ms), iperf3 $got bytes to it, 40/40 pings through fwd meanwhile; $line"

# host_ping NAME: 10 pings to the host answered, through a TAP of an engine started again.
host_ping() {
	xt_wait_for 5 ip netns exec "$H1" ping -c 1 -W 1 "$HOST" || xt_fail "$1: no answer from the host within 5 s"
	ip netns exec "$H1" ping -c 10 -i 0.05 -W 2 "$HOST" >"$XT_TMP/ping_$1" 2>&1
	grep -q '10 received' "$XT_TMP/ping_$1" || { cat "$XT_TMP/ping_$1"; xt_fail "$1: pings to the host lost"; }
}
host_exit_ok() { # NAME VAR READ
	eng_stop "$2" || { rc=$?; cat "$XT_TMP/$1.err"; xt_fail "$1: exit status $rc"; }
	eng_ledger_ok "$XT_TMP/$1.json" || { grep ledger "$XT_TMP/$1.json" | tail -3; xt_fail "$1: ledger not clean"; }
	grep '"type":"host_tap"' "$XT_TMP/$1.json" | grep -q "\"inject_read\":\"$3\".*\"injected\":[1-9]" ||
		{ grep host_tap "$XT_TMP/$1.json"; xt_fail "$1: no inject with $3"; }
}
eng_start KEEP "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug --host-tap e1 \
	--host-tap-read fixed --host-tap-keep
eng_quiet "$E" xp-e1
ip -n "$E" addr add "$HOST/24" dev xp-e1
# shellcheck disable=SC2153 # eng_start sets KEEP and AGAIN (printf -v)
host_ping keep
host_exit_ok KEEP "$KEEP" fixed
ip -n "$E" -o addr show dev xp-e1 2>/dev/null | grep -q "$HOST/24" ||
	xt_fail "--host-tap-keep: xp-e1 or its address did not stay at exit"
eng_start AGAIN "$E" --iface e1 --iface e2 --mode fwd --cores 0 --ledger-debug --host-tap e1
host_ping again
host_exit_ok AGAIN "$AGAIN" multishot
eng_tap_gone "$E" xp-e1 || xt_fail "xp-e1 left behind after a start without --host-tap-keep"
echo "host tap kept: 10/10 pings with READ_FIXED, the TAP and $HOST stayed at exit, 10/10 pings through it again after a restart (multishot), removed at the next exit"
echo ok
