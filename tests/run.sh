#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs every suite and ends with one line "N passed, N failed, N skipped".
#
#   unit   build/tests/unit/test_*           plain build
#   asan   build/asan/tests/unit/test_*      ASan+UBSan build of the same suites
#   tsan   build/tsan/tests/unit/*_mt        the concurrent suites under TSan
#   bpf    build/tests/bpf/test_*            BPF_PROG_TEST_RUN suites (root)
#   net    tests/net/test_*.sh               namespaces + veth, real traffic (root)
#
# A suite passes on exit 0, is skipped on exit 77 (it prints why), fails otherwise or
# on timeout. Usage: tests/run.sh [FILTER]  (runs only suites whose label contains FILTER)
# XPILE_TEST_TIMEOUT (seconds, default 300) bounds each suite.
set -u
cd "$(dirname "$0")/.."

filter=${1:-}
timeout_s=${XPILE_TEST_TIMEOUT:-300}
passed=0 failed=0 skipped=0
failures=()
logdir=$(mktemp -d /tmp/xpile-tests.XXXXXX)
trap 'rm -rf "$logdir"' EXIT

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
export XPILE_BUILD=${XPILE_BUILD:-build}

run_one() { # label cmd...
	local label=$1
	shift
	[ -n "$filter" ] && [[ $label != *"$filter"* ]] && return
	local log="$logdir/${label//\//_}.log" t0=$SECONDS rc
	timeout --kill-after=10 "$timeout_s" "$@" >"$log" 2>&1
	rc=$?
	local dt=$((SECONDS - t0))
	case $rc in
	0)
		passed=$((passed + 1))
		printf 'ok    %-44s %3ss\n' "$label" "$dt"
		;;
	77)
		skipped=$((skipped + 1))
		printf 'skip  %-44s %s\n' "$label" "$(grep -m1 -o 'SKIP.*' "$log" || echo '(no reason given)')"
		;;
	*)
		failed=$((failed + 1))
		failures+=("$label")
		[ $rc = 124 ] && echo "  (timed out after ${timeout_s}s)" >>"$log"
		printf 'FAIL  %-44s %3ss (exit %s)\n' "$label" "$dt" "$rc"
		tail -n 40 "$log" | sed 's/^/      | /'
		;;
	esac
}

# The harness must report a broken suite as failed: run the deliberately broken one
# through a nested runner and check its verdict.
harness_selfcheck() {
	local out
	out=$("$XPILE_BUILD/tests/harness/broken" 2>&1)
	local rc=$?
	[ $rc -ne 0 ] || { echo "broken suite exited 0"; return 1; }
	grep -q 'FAIL failing_case' <<<"$out" || { echo "failure not reported"; return 1; }
	grep -q 'ok   passing_case' <<<"$out" || { echo "passing case not reported"; return 1; }
	return 0
}
export -f harness_selfcheck
run_one harness/selfcheck bash -c harness_selfcheck

for t in build/tests/unit/test_*; do
	[ -x "$t" ] && run_one "unit/${t##*/}" "$t"
done
for t in build/asan/tests/unit/test_*; do
	[ -x "$t" ] && run_one "asan/${t##*/}" "$t"
done
for t in build/tsan/tests/unit/*_mt; do
	[ -x "$t" ] && run_one "tsan/${t##*/}" setarch "$(uname -m)" -R "$t"
done
for t in build/tests/bpf/test_*; do
	[ -x "$t" ] && run_one "bpf/${t##*/}" "$t"
done
for t in tests/net/test_*.sh; do
	[ -f "$t" ] && run_one "net/$(basename "$t" .sh)" bash "$t"
done

[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
