# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the agent's suites (tests/net/test_agent_*.sh), from the repository
# root: sources tests/lib/netns.sh, steer.sh and engine.sh, whose helpers they use.
#
#   ag_require                skip unless root and xpile-agent, the engine, dpclient exist
#   ag_dir VAR                a directory other users may traverse (the sockets' home)
#   ag_start VAR NS CFG ARGS  start `xpile-agent run --config CFG ARGS` in NS; VAR gets its
#                             pid, its log is $XT_TMP/VAR.log; returns once it is ready
#   ag_stop PID               SIGTERM, wait (bounded); returns the agent's exit status
#   ag_wait_log S FILE TEXT   wait up to S seconds for TEXT in FILE
#   DPCLIENT                  the protocol client (tests/harness/dpclient.c)

source tests/lib/netns.sh
source tests/lib/steer.sh
source tests/lib/engine.sh

AGENT=${AGENT:-$XT_BUILD/xpile-agent}
DPCLIENT=${DPCLIENT:-$XT_BUILD/tests/harness/dpclient}

ag_require() {
	eng_require
	[ -x "$AGENT" ] || xt_skip "xpile-agent not built: run make"
	[ -x "$DPCLIENT" ] || xt_skip "dpclient not built: run make"
}

ag_dir() {
	local d
	d=$(mktemp -d /tmp/xpile-agent.XXXXXX) || xt_fail "mktemp failed"
	chmod 755 "$d"
	# --one-file-system: never into a mount left inside it (an image root with bpffs bound)
	xt_on_exit rm -rf --one-file-system "$d"
	printf -v "$1" '%s' "$d"
}

ag_wait_log() { # seconds file text
	xt_wait_for "$1" grep -qF -- "$3" "$2"
}

ag_start() {
	local var=$1 ns=$2 cfg=$3 pid
	shift 3
	: >"$XT_TMP/$var.log"
	ip netns exec "$ns" "$AGENT" run --config "$cfg" "$@" 2>>"$XT_TMP/$var.log" &
	pid=$!
	XT_PIDS+=("$pid")
	printf -v "$var" '%s' "$pid"
	if ! ag_wait_log 10 "$XT_TMP/$var.log" "xpile-agent: ready:"; then
		cat "$XT_TMP/$var.log" >&2
		xt_fail "agent ($cfg) did not become ready"
	fi
}

ag_stop() {
	local pid=$1
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	wait "$pid"
}
