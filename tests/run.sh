#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs every suite and ends with one line "N passed, N failed, N skipped" (suites).
#
#   unit   build/tests/unit/test_*           plain build
#   asan   build/asan/tests/unit/test_*      ASan+UBSan build of the same suites
#   tsan   build/tsan/tests/unit/*_mt        the concurrent suites under TSan
#   bpf    build/tests/bpf/test_*            BPF_PROG_TEST_RUN suites (root)
#   net    tests/net/test_*.sh               namespaces + veth, real traffic (root)
#
# A suite passes on exit 0, is skipped on exit 77 (it prints why), fails otherwise or
# on timeout. A C suite may skip single cases ("  skip CASE: why", tests/lib/xt.h):
# they are listed under the suite's line and counted before the closing line.
# Every suite a source calls for must have a binary: one that is missing (a variant
# that failed to build) is a skip here, a failure in strict mode.
#
# Strict mode (CI=true or XPILE_STRICT=1; .ci/run sets it): a skip, of a suite or of a
# case, FAILS unless it is on the allowlist below with its reason, a missing binary
# fails, and not being root fails.
#
# Usage: tests/run.sh [FILTER]  (runs only suites whose label contains FILTER)
# XPILE_TEST_TIMEOUT (seconds, default 300) bounds each suite.
set -u
cd "$(dirname "$0")/.." || exit 1

# Skips strict mode accepts: "LABEL|CASE|REASON" (CASE - for the whole suite, REASON an
# extended regex matched against the suite's "SKIP: ..." line or the case's reason).
# Keep it short: each entry is a reason the kernel, not the code, gives.
strict_allow=(
	# libxdp's dispatcher needs freplace; xpile-loader probes it and names the refusal.
	'net/test_xdp_tools_dispatcher|-|^SKIP: libxdp dispatcher unavailable: the kernel refuses freplace'
)
strict=0
[ "${CI:-}" = true ] || [ "${XPILE_STRICT:-0}" = 1 ] && strict=1

filter=${1:-}
timeout_s=${XPILE_TEST_TIMEOUT:-300}
passed=0 failed=0 skipped=0 case_skips=0
whys=()
failures=()
logdir=$(mktemp -d /tmp/xpile-tests.XXXXXX)
trap 'rm -rf "$logdir"' EXIT

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
export XPILE_BUILD=${XPILE_BUILD:-build}

allowed() { # label case reason
	local e
	for e in "${strict_allow[@]}"; do
		[ "${e%%|*}" = "$1" ] || continue
		e=${e#*|}
		[ "${e%%|*}" = "$2" ] || continue
		[[ $3 =~ ${e#*|} ]] && return 0
	done
	return 1
}

fail_line() { # label seconds why [log]
	failed=$((failed + 1))
	failures+=("$1")
	printf 'FAIL  %-44s %3ss (%s)\n' "$1" "$2" "$3"
	local why=$3
	if [ -n "${4:-}" ]; then
		# The suite's own verdict first: a reader shown only the head of what follows
		# (CI's summaries cut the middle) still learns why.
		why=$(grep -E 'FAIL|[Ff]ail(ed|ure)?:|ERROR|[Ee]rror:' "$4" | tail -n 1 | cut -c1-300)
		[ -n "$why" ] || why=$(grep -v '^[[:space:]]*$' "$4" | tail -n 1 | cut -c1-300)
		printf '      | why: %s\n' "$why"
		tail -n 40 "$4" | sed 's/^/      | /'
	fi
	whys+=("$1: $why")
	return 0
}

run_one() { # label cmd...
	local label=$1
	shift
	[ -n "$filter" ] && [[ $label != *"$filter"* ]] && return
	local log="$logdir/${label//\//_}.log" t0=$SECONDS rc why c r bad=() cases=()
	timeout --kill-after=10 "$timeout_s" "$@" >"$log" 2>&1
	rc=$?
	local dt=$((SECONDS - t0))
	mapfile -t cases < <(grep -E '^  skip [^ :]+: ' "$log" | sed 's/^  skip //')
	case $rc in
	0)
		if [ $strict = 1 ]; then
			for c in "${cases[@]}"; do
				r=${c#*: }
				allowed "$label" "${c%%: *}" "$r" || bad+=("$c")
			done
		fi
		if [ ${#bad[@]} -gt 0 ]; then
			fail_line "$label" "$dt" "strict: ${#bad[@]} case(s) skipped, not on the allowlist"
			printf '      | skip %s\n' "${bad[@]}"
			return
		fi
		passed=$((passed + 1))
		case_skips=$((case_skips + ${#cases[@]}))
		printf 'ok    %-44s %3ss%s\n' "$label" "$dt" \
			"$([ ${#cases[@]} -gt 0 ] && echo " (${#cases[@]} case(s) skipped)")"
		[ ${#cases[@]} -gt 0 ] && printf '      skip %s\n' "${cases[@]}"
		;;
	77)
		why=$(grep -m1 -o 'SKIP.*' "$log" || echo '(no reason given)')
		if [ $strict = 1 ] && ! allowed "$label" - "$why"; then
			fail_line "$label" "$dt" "strict: skipped, not on the allowlist" "$log"
			return
		fi
		skipped=$((skipped + 1))
		printf 'skip  %-44s %s\n' "$label" "$why"
		;;
	*)
		[ $rc = 124 ] && echo "  (timed out after ${timeout_s}s)" >>"$log"
		fail_line "$label" "$dt" "exit $rc" "$log"
		;;
	esac
}

# A suite its source calls for but whose binary is not there: its variant failed to
# build or was never built. Never silently absent.
missing() { # label how-to-build
	[ -n "$filter" ] && [[ $1 != *"$filter"* ]] && return
	if [ $strict = 1 ]; then
		fail_line "$1" 0 "not built: $2"
	else
		skipped=$((skipped + 1))
		printf 'skip  %-44s %s\n' "$1" "SKIP: not built: $2"
	fi
}

# run_built LABEL-PREFIX BINARY-DIR HOW-TO-BUILD SOURCES...: one suite per source.
run_built() {
	local pre=$1 dir=$2 how=$3 src bin
	shift 3
	for src in "$@"; do
		[ -f "$src" ] || continue
		bin=$dir/$(basename "$src" .c)
		if [ -x "$bin" ]; then
			if [ "$pre" = tsan ]; then
				run_one "$pre/${bin##*/}" setarch "$(uname -m)" -R "$bin"
			else
				run_one "$pre/${bin##*/}" "$bin"
			fi
		else
			missing "$pre/${bin##*/}" "$how"
		fi
	done
}

if [ $strict = 1 ] && [ "$(id -u)" != 0 ]; then
	fail_line strict/root 0 "strict mode needs root: the bpf, net and mem suites would only skip"
fi

# The harness must report a broken suite as failed and a skipped case as skipped: run
# the deliberately broken one through a nested runner and check its verdict.
harness_selfcheck() {
	local out rc
	out=$("$XPILE_BUILD/tests/harness/broken" 2>&1)
	rc=$?
	[ $rc -ne 0 ] || { echo "broken suite exited 0"; return 1; }
	grep -q 'FAIL failing_case' <<<"$out" || { echo "failure not reported"; return 1; }
	grep -q 'ok   passing_case' <<<"$out" || { echo "passing case not reported"; return 1; }
	grep -q '^  skip skipping_case: no hugepages here (0 free)$' <<<"$out" ||
		{ echo "skipped case not reported with its reason"; return 1; }
	grep -q 'ok   skipping_case' <<<"$out" && { echo "skipped case reported as ok"; return 1; }
	grep -q '^  FAIL fail_then_skip_case' <<<"$out" ||
		{ echo "a skip hid an earlier failure"; return 1; }
	out=$("$XPILE_BUILD/tests/harness/broken" skip 2>&1)
	rc=$?
	[ $rc = 77 ] || { echo "suite whose every case skipped exited $rc, not 77"; return 1; }
	grep -q '^SKIP: every case skipped (first: skipping_case: ' <<<"$out" ||
		{ echo "all-skipped suite gave no reason"; return 1; }
	return 0
}
export -f harness_selfcheck
run_one harness/selfcheck bash -c harness_selfcheck

run_built unit build/tests/unit "make all" tests/unit/test_*.c
run_built asan build/asan/tests/unit "make SAN=asan all" tests/unit/test_*.c
run_built tsan build/tsan/tests/unit "make SAN=tsan all" tests/unit/*_mt.c
run_built bpf build/tests/bpf "make all" tests/bpf/test_*.c
for t in tests/tree/test_*.sh; do
	[ -f "$t" ] && run_one "tree/$(basename "$t" .sh)" bash "$t"
done
for t in tests/net/test_*.sh; do
	[ -f "$t" ] && run_one "net/$(basename "$t" .sh)" bash "$t"
done

[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[*]}" && printf '  why %s\n' "${whys[@]}"
[ $case_skips -gt 0 ] && echo "$case_skips case(s) skipped inside suites that passed (listed above)"
[ $strict = 1 ] && echo "strict mode: skips off the allowlist and missing builds failed"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
