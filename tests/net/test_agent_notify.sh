#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent under a stand-in for systemd's NOTIFY_SOCKET (tests/harness/notify.c):
#  - READY=1 once every interface is attached and every socket serves; a SIGHUP is
#    RELOADING=1 then READY=1; SIGTERM is STOPPING=1 and exit 0;
#  - idle, the loop sleeps: under 1% of a CPU over 10 s and about one wake-up a
#    second (the tick that closes idle device-plugin connections).
# Prints the figures: start to READY=1, idle CPU, wake-ups, RSS.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
NOTIFY=$XT_BUILD/tests/harness/notify
[ -x "$NOTIFY" ] || xt_skip "notify harness not built: run make"

eng_pair 198.18.51
ag_dir D
cat >"$D/agent.json" <<EOF
{
  "interfaces": [{"name": "b0", "default": "pass", "rules": ["udp dport 6000 action drop"]}],
  "control": {"path": "$D/ctl.sock"},
  "device_plugin": {"dir": "$D/dp"}
}
EOF
ip netns exec "$B" "$NOTIFY" "$D/notify.sock" "$AGENT" run --config "$D/agent.json" \
	--detach-on-exit >"$D/notify.out" 2>"$D/agent.log" &
N=$!
XT_PIDS+=("$N")
xt_wait_for 10 grep -q ' READY=1' "$D/notify.out" || xt_fail "no READY=1: $(cat "$D/notify.out" "$D/agent.log")"
ready=$(grep -m1 ' READY=1' "$D/notify.out" | cut -d' ' -f1)
grep -q "xpile-agent: ready:" "$D/agent.log" || xt_fail "READY=1 before the agent was ready"
[ -S "$D/ctl.sock" ] && [ -S "$D/dp/b0/afxdp.sock" ] || xt_fail "READY=1 before the sockets served"
AG=$(pgrep -P "$N" -f xpile-agent | head -1)
[ -n "$AG" ] || xt_fail "agent process not found"

# Idle: CPU ticks and wake-ups over 10 s.
cpu() { awk '{print $14 + $15}' "/proc/$AG/stat"; }
wakes() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$AG/status"; }
oncpu() { cut -d' ' -f1 "/proc/$AG/schedstat"; } # ns on a CPU, finer than ticks
c0=$(cpu) w0=$(wakes) n0=$(oncpu)
sleep 10
c1=$(cpu) w1=$(wakes) n1=$(oncpu)
hz=$(getconf CLK_TCK)
ticks=$((c1 - c0))
[ $((ticks * 100)) -le $((hz * 10)) ] || xt_fail "idle agent used $ticks ticks of $((hz * 10)) in 10 s (over 1%)"
[ $((w1 - w0)) -le 30 ] || xt_fail "idle agent woke $((w1 - w0)) times in 10 s"
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$AG/status")

kill -HUP "$N"
xt_wait_for 5 grep -q ' RELOADING=1' "$D/notify.out" || xt_fail "no RELOADING=1 on SIGHUP"
# A function, so that the count is read again at every try, not once at the call.
ready_twice() { [ "$(grep -c ' READY=1' "$D/notify.out")" -ge 2 ]; }
xt_wait_for 15 ready_twice ||
	xt_fail "no READY=1 within 15 s of the reload: $(cat "$D/notify.out" "$D/agent.log")"
echo "figure: reload: RELOADING=1 at $(grep -m1 ' RELOADING=1' "$D/notify.out" | cut -d' ' -f1) s, READY=1 again at $(grep ' READY=1' "$D/notify.out" | sed -n 2p | cut -d' ' -f1) s"
kill -TERM "$N"
wait "$N"
rc=$?
[ $rc = 0 ] || xt_fail "agent exit $rc: $(cat "$D/agent.log")"
grep -q ' STOPPING=1' "$D/notify.out" || xt_fail "no STOPPING=1: $(cat "$D/notify.out")"
st_no_trace "$B" b0 || xt_fail "left behind"
echo "figure: start to READY=1: ${ready} s (1 interface attached, control, device-plugin and HTTP sockets serving)"
echo "figure: idle: $ticks of $((hz * 10)) CPU ticks in 10 s ($(((n1 - n0) / 1000)) us on a CPU), $((w1 - w0)) wake-ups; RSS ${rss} KiB"
echo PASS
