# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the handover suites (tests/net/test_engine_handover*.sh). Source after
# tests/lib/engine.sh.
#
#   ho_next VAR OLD NS ARGS...   start `xpile run ARGS --json` in NS taking over from the
#                                engine OLD (pid) and wait until it polls and OLD exited;
#                                VAR gets the new pid, OLD's status must be 0
#   ho_fds PID                   fds the process has open
#   ho_maps PID                  its memfd mappings (UMEM, arena)
#   ho_pause FILE                the pause (ns) the new engine's handover line reports

ho_next() { # var old ns args...
	local var=$1 old=$2 ns=$3 rc
	shift 3
	if ! eng_launch "$var" "$ns" '"role":"new"' "$@"; then
		cat "$XT_TMP/$var.err" >&2
		grep -v '"interval"\|"live"' "$XT_TMP/$var.json" | tail -3 >&2
		xt_fail "the new engine ($*) did not take over from pid $old"
	fi
	for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
	wait "$old"
	rc=$?
	[ "$rc" = 0 ] || xt_fail "the old engine (pid $old) exited with status $rc after the handover"
}

ho_fds() { find "/proc/$1/fd" -mindepth 1 2>/dev/null | wc -l; }

ho_maps() { grep -c 'memfd:' "/proc/$1/maps" 2>/dev/null; }

ho_pause() { grep -o '"pause_ns":[0-9]*' "$1" | head -1 | cut -d: -f2; }
