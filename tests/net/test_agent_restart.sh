#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent's life cycle on real traffic (veth between two namespaces):
#  - ping and UDP through the config's rules (a drop rule counts what it drops);
#  - a rule change by SIGHUP and one by the control socket, each under a 100/s ping:
#    no echo lost, and the new rule counts what it matches;
#  - a config that fails on SIGHUP is refused with one line; program and rules stay;
#  - SIGTERM leaves the program, its bpf_link and its pins: traffic flows with no
#    agent; the next agent adopts them (same program id) and its counters go on;
#  - kill -9 under a 100/s ping and a new agent: 0 lost, adopted, counters go on;
#  - a client that detaches through netlink (as DPDK's port close does) cannot remove
#    the program attached through the link;
#  - `xpile-loader unload` removes what an agent left (link included);
#  - --detach-on-exit leaves nothing: no program, no pins, no sockets.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"
command -v curl >/dev/null || xt_skip "curl missing: apt-get install curl"

eng_pair 198.18.31
ag_dir D
CTL=$D/ctl.sock
config() { # rules as JSON array items
	cat >"$D/agent.json" <<EOF
{
  "interfaces": [{"name": "b0", "default": "pass", "rules": [$1]}],
  "control": {"path": "$CTL"},
  "device_plugin": {"dir": "$D/dp"}
}
EOF
}
ctl() { "$AGENT" ctl --socket "$CTL" "$@"; }
prog_id() { ctl status | jq -r '.interfaces[0].prog_id'; }
rule_packets() { # rule text -> its packet counter
	ctl rules b0 | jq -r --arg r "$1" '.rules[] | select(.rule | endswith($r)) | .packets'
}
metric() { # name{labels} -> value (the agent in B serves 127.0.0.1:9469)
	ip netns exec "$B" curl -s -m 2 http://127.0.0.1:9469/metrics | grep -v '^#' | grep -F "$1 " | awk '{print $2}'
}
# pings N at 100/s from A, prints how many were answered.
ping100() {
	ip netns exec "$A" ping -c "$1" -i 0.01 -W 1 198.18.31.2 2>/dev/null |
		grep -o '[0-9]* received' | cut -d' ' -f1
}

config '"udp dport 6000 action drop"'
ag_start AG "$B" "$D/agent.json"
ID=$(prog_id)
[ -n "$ID" ] && [ "$ID" != null ] || xt_fail "no program id in status: $(ctl status)"
PIN=$(st_pin_dir "$B" b0)
[ -e "$PIN/xp_link" ] || xt_fail "link not pinned in $PIN"

[ "$(eng_pings 20 198.18.31.2)" = 20 ] || xt_fail "ping does not pass the steer program"
st_udp "$A" 198.18.31.2 6000 200 || xt_fail "sending UDP failed"
got=$(rule_packets "udp dport 6000 action drop")
[ "$got" = 200 ] || xt_fail "drop rule counted $got of 200"
echo "rules from the config: 20/20 pings pass, 200/200 UDP to 6000 dropped and counted"

# SIGHUP under a 100/s ping: the new rule set is swapped in, no echo is lost.
ping100 300 >"$XT_TMP/ping1" &
PP=$!
sleep 1
config '"udp dport 6000 action drop", "udp dport 7000 action drop"'
kill -HUP "$AG"
ag_wait_log 5 "$XT_TMP/AG.log" "generation 2" || xt_fail "SIGHUP not applied: $(tail -3 "$XT_TMP/AG.log")"
wait "$PP"
[ "$(cat "$XT_TMP/ping1")" = 300 ] || xt_fail "SIGHUP rule change lost echoes: $(cat "$XT_TMP/ping1")/300"
st_udp "$A" 198.18.31.2 7000 100 || xt_fail "sending UDP failed"
[ "$(rule_packets "udp dport 7000 action drop")" = 100 ] || xt_fail "new rule did not count 100: $(ctl rules b0)"
# The rule that stayed kept its id and its counter.
[ "$(rule_packets "udp dport 6000 action drop")" = 200 ] || xt_fail "kept rule lost its counter: $(ctl rules b0)"
[ "$(prog_id)" = "$ID" ] || xt_fail "SIGHUP re-attached the program"
echo "SIGHUP: 300/300 pings during the swap, new rule counts 100/100, kept rule keeps its 200"

# The control socket's replace, under a 100/s ping.
ping100 300 >"$XT_TMP/ping2" &
PP=$!
sleep 1
ctl rules-replace b0 "udp dport 8000 action drop" >/dev/null || xt_fail "rules-replace refused"
wait "$PP"
[ "$(cat "$XT_TMP/ping2")" = 300 ] || xt_fail "control-socket replace lost echoes: $(cat "$XT_TMP/ping2")/300"
st_udp "$A" 198.18.31.2 8000 50 || xt_fail "sending UDP failed"
[ "$(rule_packets "udp dport 8000 action drop")" = 50 ] || xt_fail "replaced rule: $(ctl rules b0)"
echo "control socket: 300/300 pings during the swap, the new rule counts 50/50"

# A config that fails on SIGHUP: one line, nothing changes (the socket's rules stay).
printf '{"interfaces": [{"name": "b0", "rules": ["udp dport 70000 action drop"]}]}' >"$D/agent.json"
kill -HUP "$AG"
ag_wait_log 5 "$XT_TMP/AG.log" "reload refused" || xt_fail "bad SIGHUP config not refused"
line=$(grep "reload refused" "$XT_TMP/AG.log")
want="xpile-agent: reload refused, running state kept: $D/agent.json: interfaces[0].rules[0]: dport: expected PORT or LO-HI with LO <= HI in 0..65535, got '70000'"
[ "$line" = "$want" ] || xt_fail "refusal line: '$line', want '$want'"
[ "$(rule_packets "udp dport 8000 action drop")" = 50 ] || xt_fail "state changed on a refused reload"
[ "$(ctl status | jq -r .last_reload_ok)" = false ] || xt_fail "status does not say the reload failed"
[ "$(metric xpile_agent_last_reload_success)" = 0 ] || xt_fail "metric does not say the reload failed"
echo "bad SIGHUP config refused in one line, state kept"

# SIGTERM: program, link and pins stay, traffic flows without the agent.
config '"udp dport 6000 action drop"'
before=$(metric 'xpile_verdict_packets_total{interface="b0",action="pass"}')
ag_stop "$AG" || xt_fail "agent exit status $? at SIGTERM"
ip -n "$B" link show b0 | grep -q xdp || xt_fail "SIGTERM detached the program"
[ -e "$PIN/xp_link" ] && [ -e "$PIN/xp_steer" ] || xt_fail "SIGTERM removed the pins"
[ "$(eng_pings 20 198.18.31.2)" = 20 ] || xt_fail "no traffic while the agent is down"
# A netlink detach, as DPDK's port close does, fails on a link: the program stays.
ip -n "$B" link set dev b0 xdp off 2>/dev/null
ip -n "$B" link show b0 | grep -q xdp || xt_fail "a netlink detach removed the link-attached program"
ag_start AG "$B" "$D/agent.json"
grep -q "b0: adopted the steer program (id $ID) and its link" "$XT_TMP/AG.log" ||
	xt_fail "not adopted: $(cat "$XT_TMP/AG.log")"
[ "$(prog_id)" = "$ID" ] || xt_fail "new agent runs program $(prog_id), not $ID"
after=$(metric 'xpile_verdict_packets_total{interface="b0",action="pass"}')
[ "$after" -ge $((before + 20)) ] || xt_fail "pass counter went from $before to $after over a restart"
echo "SIGTERM: program and pins stayed, 20/20 pings with no agent, netlink detach refused; adopted (id $ID), pass counter $before -> $after"

# kill -9 under a 100/s ping, and a new agent while it runs.
ping100 400 >"$XT_TMP/ping3" &
PP=$!
sleep 1
kill -9 "$AG"
wait "$AG" 2>/dev/null
sleep 0.5
ag_start AG "$B" "$D/agent.json"
wait "$PP"
[ "$(cat "$XT_TMP/ping3")" = 400 ] || xt_fail "kill -9 and restart lost echoes: $(cat "$XT_TMP/ping3")/400"
grep -q "b0: adopted the steer program (id $ID)" "$XT_TMP/AG.log" || xt_fail "not adopted after kill -9"
again=$(metric 'xpile_verdict_packets_total{interface="b0",action="pass"}')
[ "$again" -ge $((after + 400)) ] || xt_fail "pass counter went from $after to $again over kill -9"
echo "kill -9 under ping: 400/400 answered, adopted (id $ID), pass counter $after -> $again"

# What an agent left, the loader removes: the link goes with its pin.
ag_stop "$AG"
st_loader "$B" unload b0 >"$XT_TMP/unload" 2>&1 || xt_fail "xpile-loader unload: $(cat "$XT_TMP/unload")"
st_no_trace "$B" b0 || xt_fail "xpile-loader unload left something of the agent's"
# --detach-on-exit: nothing left.
ag_start AG "$B" "$D/agent.json" --detach-on-exit
grep -q "b0: steer program attached through a pinned bpf_link" "$XT_TMP/AG.log" ||
	xt_fail "after an unload the agent did not attach afresh"
ag_stop "$AG" || xt_fail "agent exit status $?"
st_no_trace "$B" b0 || xt_fail "--detach-on-exit left something"
[ ! -e "$CTL" ] && [ ! -e "$D/dp/b0" ] || xt_fail "sockets left: $(ls -R "$D")"
echo "PASS"
