#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent where io_uring is refused, as containerd's and podman's default seccomp
# profiles refuse it: the agent runs under a libseccomp filter (tests/harness/
# seccomp_deny) that fails io_uring_setup with ENOSYS (or EPERM, or lets it through
# and fails io_uring_enter) and says once, in one line, that its loop is epoll and why:
#  - the control socket (status says "event_loop": "epoll", rules, rule-add), SIGHUP,
#    /metrics and /healthz, device-plugin handshakes (100 in a row, 20 at once, an idle
#    client closed after the bound: the epoll loop's timers), a detach and an attach
#    through the control socket (a server's accept cancelled, then served again);
#  - the device-plugin and restart suites, whole, with the agent under the filter;
#  - --loop io_uring under the filter: one line, exit 1; --loop epoll without it: epoll;
#  - one thread on either loop (so no TSan build is due).
# (Before the epoll loop the agent died: "io_uring: Function not implemented".)
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
DENY=$XT_BUILD/tests/harness/seccomp_deny
[ -x "$DENY" ] || xt_skip "seccomp_deny not built: run make (needs libseccomp-dev)"
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"
command -v curl >/dev/null || xt_skip "curl missing: apt-get install curl"

eng_pair 198.18.41
ag_dir D
CTL=$D/ctl.sock
cat >"$D/agent.json" <<EOF
{
  "interfaces": [{"name": "b0", "default": "pass", "rules": ["udp dport 6000 action drop"]}],
  "control": {"path": "$CTL"},
  "metrics": {"address": "127.0.0.1:9471"},
  "device_plugin": {"dir": "$D/dp", "idle_timeout": 1}
}
EOF
REAL=$AGENT
# The agent under the filter, its log lines about the loop kept (the suites run below
# keep their logs to themselves).
wrap() { # errno-spec -> $D/agent-$1 (a drop-in for $AGENT)
	cat >"$D/agent-$1" <<EOF
#!/usr/bin/env bash
exec "$DENY" "$1" "$REAL" "\$@" 2> >(tee -a "$D/loops.log" >&2)
EOF
	chmod 755 "$D/agent-$1"
}
ctl() { "$REAL" ctl --socket "$CTL" "$@"; }
S=$D/dp/b0/afxdp.sock
HS=("/connect,node1" /version "/xsk_map_fd,b0" /fin)
WANT=$'/host_ok\n0.1\n/fd_ack +fd=xskmap\n/fin_ack'
handshake() { [ "$(timeout 20 "$DPCLIENT" "$S" "${HS[@]}" 2>&1)" = "$WANT" ]; }

# 1. ENOSYS, what a profile without io_uring answers.
wrap io_uring_setup:ENOSYS
AGENT=$D/agent-io_uring_setup:ENOSYS ag_start AG "$B" "$D/agent.json" --detach-on-exit
want="xpile-agent: event loop: epoll (io_uring refused: io_uring_setup: Function not implemented; a seccomp profile without io_uring, as containerd's and podman's defaults, or a kernel without it)"
[ "$(grep -c 'event loop' "$XT_TMP/AG.log")" = 1 ] && grep -qxF "$want" "$XT_TMP/AG.log" ||
	xt_fail "the loop's line: $(cat "$XT_TMP/AG.log")"
[ "$(ctl status | jq -r .event_loop)" = epoll ] || xt_fail "status: $(ctl status)"
# One thread, HTTP included (libmicrohttpd runs in the loop, no thread of its own): no
# data race to look for, so the agent has no TSan build.
[ "$(find "/proc/$AG/task" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ] ||
	xt_fail "the agent runs $(find "/proc/$AG/task" -mindepth 1 -maxdepth 1 | wc -l) threads, not 1: a TSan suite is due"
[ "$(eng_pings 10 198.18.41.2)" = 10 ] || xt_fail "ping does not pass the steer program"
st_udp "$A" 198.18.41.2 6000 100 || xt_fail "sending UDP failed"
[ "$(ctl rules b0 | jq -r '.rules[0].packets')" = 100 ] || xt_fail "rules: $(ctl rules b0)"
ctl rule-add b0 prio 5 udp dport 6001 action drop >/dev/null || xt_fail "rule-add refused"
kill -HUP "$AG"
ag_wait_log 5 "$XT_TMP/AG.log" "reloaded" || xt_fail "SIGHUP: $(cat "$XT_TMP/AG.log")"
[ "$(ctl rules b0 | jq '.rules | length')" = 1 ] || xt_fail "reload kept the runtime rule"
m=$(ip netns exec "$B" curl -s -m 2 http://127.0.0.1:9471/metrics)
grep -q '^xpile_verdict_packets_total{interface="b0",action="drop"} 100$' <<<"$m" ||
	xt_fail "/metrics: $(grep verdict_packets <<<"$m")"
[ "$(ip netns exec "$B" curl -s -m 2 http://127.0.0.1:9471/healthz)" = ok ] || xt_fail "/healthz"
handshake || xt_fail "device-plugin handshake: $(timeout 20 "$DPCLIENT" "$S" "${HS[@]}" 2>&1)"
out=$(timeout 40 "$DPCLIENT" -n 100 "$S" "${HS[@]}") || xt_fail "100 handshakes: $out"
out=$(timeout 40 "$DPCLIENT" -c 20 "$S" "${HS[@]}") || xt_fail "20 clients at once: $out"
[ "$(timeout 20 "$DPCLIENT" "$S" /connect,n '!eof')" = $'/host_ok\neof after 1 s' ] ||
	xt_fail "an idle client is not closed after the 1 s bound"
ctl detach b0 >/dev/null && [ ! -e "$S" ] || xt_fail "detach: $(ctl status)"
ctl attach b0 >/dev/null && handshake || xt_fail "attach: no handshake after it"
echo "ENOSYS: epoll loop, one line; control socket, SIGHUP, /metrics, 100 + 20 handshakes, idle bound, detach/attach"
ag_stop "$AG" || xt_fail "agent exit status $?: $(cat "$XT_TMP/AG.log")"
st_no_trace "$B" b0 || xt_fail "b0 not clean after --detach-on-exit"

# 2. EPERM (kernel.io_uring_disabled, or a profile answering EPERM), and a filter that
# lets io_uring_setup through but refuses io_uring_enter.
for spec in io_uring_setup:EPERM io_uring_enter:ENOSYS; do
	wrap "$spec"
	AGENT=$D/agent-$spec ag_start AG "$B" "$D/agent.json" --detach-on-exit
	grep -q "event loop: epoll (io_uring refused: ${spec%%:*}: " "$XT_TMP/AG.log" ||
		xt_fail "$spec: $(cat "$XT_TMP/AG.log")"
	handshake || xt_fail "$spec: no handshake"
	ag_stop "$AG" || xt_fail "$spec: exit status $?"
	echo "$spec: $(grep -o 'event loop: .*' "$XT_TMP/AG.log")"
done

# 3. --loop io_uring refuses to start without it; --loop epoll needs no filter.
out=$(ip netns exec "$B" "$DENY" io_uring_setup "$REAL" run --config "$D/agent.json" \
	--loop io_uring 2>&1)
rc=$?
[ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q '^xpile-agent: --loop io_uring: io_uring refused: io_uring_setup: Function not implemented' <<<"$out" ||
	xt_fail "--loop io_uring under the filter: exit $rc: $out"
st_no_trace "$B" b0 || xt_fail "a refused start left something"
ag_start AG "$B" "$D/agent.json" --detach-on-exit --loop epoll
grep -qx 'xpile-agent: event loop: epoll (--loop epoll)' "$XT_TMP/AG.log" || xt_fail "--loop epoll"
handshake || xt_fail "--loop epoll: no handshake"
ag_stop "$AG" || xt_fail "--loop epoll: exit status $?"
# On io_uring, the only other tasks are the kernel's io-wq workers (iou-wrk-*).
ag_start AG "$B" "$D/agent.json" --detach-on-exit
grep -qx 'xpile-agent: event loop: io_uring (256 entries)' "$XT_TMP/AG.log" || xt_fail "io_uring loop"
handshake || xt_fail "io_uring: no handshake"
n=$(cat /proc/"$AG"/task/*/comm | grep -vc '^iou-')
[ "$n" = 1 ] || xt_fail "the agent on io_uring runs $n threads of its own, not 1: a TSan suite is due"
ag_stop "$AG" || xt_fail "io_uring: exit status $?"

# 4. Two of the agent's suites, whole, with the agent under the filter (not under ASan:
# test_agent_asan runs them itself, and this suite's cases above).
[ "${XT_AGENT_NOURING_SUITES:-1}" = 0 ] && { echo PASS; exit 0; }
: >"$D/loops.log"
for t in dp restart; do
	AGENT=$D/agent-io_uring_setup:ENOSYS bash "tests/net/test_agent_$t.sh" >"$D/$t.log" 2>&1 ||
		xt_fail "test_agent_$t under the filter: $(tail -n 5 "$D/$t.log")"
done
n=$(grep -c 'event loop: ' "$D/loops.log")
[ "$n" -gt 0 ] && [ "$(grep -c 'event loop: epoll (io_uring refused: ' "$D/loops.log")" = "$n" ] ||
	xt_fail "not every agent of the suites ran epoll: $(grep 'event loop' "$D/loops.log" | sort | uniq -c)"
echo "test_agent_dp and test_agent_restart pass with io_uring refused ($n agents, each on epoll)"
echo PASS
