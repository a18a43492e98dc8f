#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent puts its steer program back when someone moves it, each case under a
# 100/s ping from A to b0:
#  - its bpf_link detached (`bpftool link detach`), nothing in its place: noticed by
#    the 1 s check, re-attached through a new pinned link with the same program and
#    maps (rules and counters go on); no echo lost (no program passes everything);
#  - its link detached and a foreign program that drops everything attached through
#    netlink microseconds later: the netlink notification wakes the agent, which
#    removes the foreign program and re-attaches; echoes are lost only while the
#    foreign program was there (the window, measured by tests/harness/xdpforeign);
#  - with on_replace "report" (set by SIGHUP) the foreign program stays, /readyz is
#    503 naming the cause; once it is removed (`ip link set dev b0 xdp off`) the
#    agent re-attaches to the empty interface and /readyz is 200 again;
#  - a foreign program held by its own bpf_link cannot be removed: logged once,
#    /readyz 503; once its holder exits, ours goes back;
#  - each event is one log line, xpile_interface_reattach_total counts the three
#    re-attaches; at exit (--detach-on-exit) nothing is left.
# Prints the windows.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
FOREIGN=$XT_BUILD/tests/harness/xdpforeign
[ -x "$FOREIGN" ] || xt_skip "xdpforeign harness not built: run make"
command -v bpftool >/dev/null || xt_skip "bpftool missing: apt-get install bpftool"
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"
command -v curl >/dev/null || xt_skip "curl missing: apt-get install curl"

eng_pair 198.18.61
ag_dir D
CTL=$D/ctl.sock
config() { # on_replace
	cat >"$D/agent.json" <<EOF
{
  "interfaces": [{"name": "b0", "default": "pass", "on_replace": "$1",
                  "rules": ["udp dport 6000 action drop"]}],
  "control": {"path": "$CTL"},
  "device_plugin": {"dir": "$D/dp"}
}
EOF
}
ctl() { "$AGENT" ctl --socket "$CTL" "$@"; }
prog_id() { ctl status | jq -r '.interfaces[0].prog_id'; }
link_id() { # the XDP link of program $1 (links are global: pick ours by program)
	ip netns exec "$B" bpftool -j link show | jq -r --argjson p "$1" \
		'.[] | select(.type == "xdp" and .prog_id == $p) | .id' | head -1
}
drops() { ctl rules b0 | jq -r '.rules[0].packets'; }
readyz() { ip netns exec "$B" curl -s -m 2 -w ' %{http_code}' http://127.0.0.1:9469/readyz | tr '\n' ' '; }
ping100() { # count -> answered
	ip netns exec "$A" ping -c "$1" -i 0.01 -W 1 198.18.61.2 2>/dev/null |
		grep -o '[0-9]* received' | cut -d' ' -f1
}
log_count() { grep -c -- "$1" "$XT_TMP/AG.log"; }

config reattach
ag_start AG "$B" "$D/agent.json" --detach-on-exit
ID=$(prog_id)
L1=$(link_id "$ID")
[ -n "$L1" ] || xt_fail "no XDP link of program $ID: $(ip netns exec "$B" bpftool link show)"
st_udp "$A" 198.18.61.2 6000 50 || xt_fail "sending UDP failed"
[ "$(drops)" = 50 ] || xt_fail "drop rule counted $(drops) of 50"

# 1. The link detached, nothing in its place.
ping100 300 >"$XT_TMP/ping1" &
PP=$!
sleep 1
t0=$(date +%s%N)
ip netns exec "$B" bpftool link detach id "$L1" || xt_fail "bpftool link detach failed"
ag_wait_log 3 "$XT_TMP/AG.log" "steer program gone from the interface" ||
	xt_fail "detached link not noticed in 3 s: $(tail -3 "$XT_TMP/AG.log")"
t1=$(date +%s%N)
wait "$PP"
[ "$(cat "$XT_TMP/ping1")" = 300 ] || xt_fail "link detach lost echoes: $(cat "$XT_TMP/ping1")/300"
[ "$(prog_id)" = "$ID" ] || xt_fail "re-attached program $(prog_id), not $ID"
L2=$(link_id "$ID")
[ -n "$L2" ] && [ "$L2" != "$L1" ] || xt_fail "no new link for program $ID (old $L1, now '$L2')"
[ -e "$(st_pin_dir "$B" b0)/xp_link" ] || xt_fail "new link not pinned"
st_udp "$A" 198.18.61.2 6000 50 || xt_fail "sending UDP failed"
[ "$(drops)" = 100 ] || xt_fail "rules or counters lost over the re-attach: $(ctl rules b0)"
echo "link detached: noticed and re-attached in $(((t1 - t0) / 1000000)) ms (the 1 s check), 300/300 pings, same program $ID, new link $L2, rule counter 50 -> 100"

# 2. A foreign program in its place, attached by netlink right after the detach.
ping100 500 >"$XT_TMP/ping2" &
PP=$!
sleep 1
ip netns exec "$B" "$FOREIGN" b0 drv 5 "$L2" >"$XT_TMP/foreign2" 2>&1 ||
	xt_fail "foreign program: $(cat "$XT_TMP/foreign2")"
wait "$PP"
win=$(grep -o 'replaced after [0-9.]* ms' "$XT_TMP/foreign2" | grep -o '[0-9.]*')
[ -n "$win" ] || xt_fail "no window: $(cat "$XT_TMP/foreign2")"
ag_wait_log 2 "$XT_TMP/AG.log" "had replaced the steer program: removed it" ||
	xt_fail "foreign program not logged: $(tail -3 "$XT_TMP/AG.log")"
got=$(cat "$XT_TMP/ping2")
lost=$((500 - got))
# One echo per 10 ms arrives in the window; one more for the edges.
allowed=$(awk -v w="$win" 'BEGIN { print int(w / 10) + 2 }')
[ "$lost" -le "$allowed" ] || xt_fail "$lost echoes lost, the window ($win ms) explains $allowed"
[ "$(prog_id)" = "$ID" ] || xt_fail "after the foreign program: program $(prog_id), not $ID"
ip -n "$B" link show b0 | grep -q "prog/xdp id $ID" || xt_fail "b0 does not run $ID: $(ip -n "$B" link show b0)"
st_udp "$A" 198.18.61.2 6000 50 || xt_fail "sending UDP failed"
[ "$(drops)" = 150 ] || xt_fail "rules or counters lost: $(ctl rules b0)"
echo "foreign program: removed and ours back after $win ms (netlink notification), $lost of 500 pings lost (the window allows $allowed)"

# 3. on_replace "report": the foreign program stays, /readyz says why.
config report
kill -HUP "$AG"
ag_wait_log 5 "$XT_TMP/AG.log" "generation 2" || xt_fail "SIGHUP not applied"
L3=$(link_id "$ID")
ip netns exec "$B" "$FOREIGN" b0 drv 2 "$L3" >"$XT_TMP/foreign3" 2>&1
grep -q 'still attached after 2 s' "$XT_TMP/foreign3" ||
	xt_fail "on_replace report removed the foreign program: $(cat "$XT_TMP/foreign3")"
[ "$(log_count 'left in place (on_replace "report")')" = 1 ] ||
	xt_fail "report not logged once: $(tail -3 "$XT_TMP/AG.log")"
r=$(readyz)
[[ $r == *"b0: steer program not attached"*" 503" ]] || xt_fail "readyz with a foreign program: $r"
[ "$(eng_pings 5 198.18.61.2)" = 0 ] || xt_fail "the foreign program does not drop: is it there?"
ip -n "$B" link set dev b0 xdpdrv off || xt_fail "cannot remove the foreign program"
twice_gone() { [ "$(log_count "steer program gone from the interface")" = 2 ]; }
xt_wait_for 3 twice_gone ||
	xt_fail "not re-attached to the empty interface: $(tail -3 "$XT_TMP/AG.log")"
is_ready() { [ "$(readyz)" = "ready  200" ]; }
xt_wait_for 3 is_ready || xt_fail "readyz after re-attach: $(readyz)"
[ "$(eng_pings 5 198.18.61.2)" = 5 ] || xt_fail "no traffic after the re-attach"
n=$(ip netns exec "$B" curl -s -m 2 http://127.0.0.1:9469/metrics | grep '^xpile_interface_reattach_total{interface="b0"}')
[ "$n" = 'xpile_interface_reattach_total{interface="b0"} 3' ] || xt_fail "reattach counter: '$n', want 3"
echo "on_replace report: foreign program left 2 s, /readyz 503; removed, ours back, /readyz 200"

# 4. A foreign program held by a bpf_link of its own: nobody but its holder may
# remove it; the agent says so once and /readyz reports it until it goes.
config reattach
kill -HUP "$AG"
ag_wait_log 5 "$XT_TMP/AG.log" "generation 3" || xt_fail "SIGHUP not applied"
L4=$(link_id "$ID")
ip netns exec "$B" "$FOREIGN" b0 link 2 "$L4" >"$XT_TMP/foreign4" 2>&1
grep -q 'still attached after 2 s' "$XT_TMP/foreign4" ||
	xt_fail "a foreign link was removed: $(cat "$XT_TMP/foreign4")"
[ "$(log_count "cannot be removed")" = 1 ] || xt_fail "not logged once: $(tail -3 "$XT_TMP/AG.log")"
# Its holder exited with it: the interface is empty, ours goes back.
thrice_gone() { [ "$(log_count "steer program gone from the interface")" = 3 ]; }
xt_wait_for 3 thrice_gone || xt_fail "not re-attached after the foreign link went: $(tail -3 "$XT_TMP/AG.log")"
xt_wait_for 3 is_ready || xt_fail "readyz after re-attach: $(readyz)"
echo "foreign bpf_link: $(grep -o 'another XDP program ([^)]*) replaced the steer program and cannot be removed ([^)]*)' "$XT_TMP/AG.log"); back once it went"

ag_stop "$AG" || xt_fail "agent exit status $?: $(cat "$XT_TMP/AG.log")"
st_no_trace "$B" b0 || xt_fail "left behind after --detach-on-exit"
echo PASS
