#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every libFuzzer target built by `make SAN=fuzz fuzz-bins` for SECONDS each
# (one at a time: each is single-threaded), starting from its seed corpus
# tests/fuzz/corpus/NAME/ (read only; new inputs go to build/fuzz/corpus/NAME/).
# Prints libFuzzer's final figures per target (executions, cov:, ft:) and exits 1 if any
# target crashed or broke a property (the input is saved as build/fuzz/crash/NAME-*:
# turn it into a corpus file, which the regular suites replay). A target that needs
# root (steer) is skipped without it, and that skip fails the run when CI=true.
#   usage: tests/fuzz/run.sh [SECONDS] [NAME...]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

secs=${1:-20}
shift || true
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] ||
	{ echo "fuzz: SECONDS must be a whole number >= 1, got '$secs'" >&2; exit 2; }
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		n=${f##*/fuzz_}
		names+=("${n%.c}")
	done
fi

failed=0 skipped=0 ran=0
mkdir -p build/fuzz/crash
for n in "${names[@]}"; do
	bin=build/fuzz/fuzz_$n seeds=tests/fuzz/corpus/$n work=build/fuzz/corpus/$n
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin is not built; run: make SAN=fuzz fuzz-bins" >&2
		failed=$((failed + 1))
		continue
	fi
	if [ "$n" = cli ] && [ ! -f tools/util/cli.c ]; then
		echo "fuzz $n: not applicable (tools/util/cli.c is not in this tree)"
		continue
	fi
	if [ "$n" = steer ] && [ "$(id -u)" != 0 ]; then
		echo "fuzz $n: SKIP (needs root: BPF_PROG_TEST_RUN)"
		skipped=$((skipped + 1))
		continue
	fi
	mkdir -p "$work"
	log=build/fuzz/$n.log
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=build/fuzz/crash/"$n"- "$work" "$seeds" >"$log" 2>&1
	rc=$?
	ran=$((ran + 1))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1 ft \2/p' <<<"$last")
	if [ $rc -ne 0 ]; then
		echo "fuzz $n: FAILED (exit $rc) after ${execs:-?} executions; log $log:"
		grep -E 'PROPERTY BROKEN|ERROR: (Address|Undefined|libFuzzer)|runtime error|SUMMARY|Test unit written' "$log" | head -8
		failed=$((failed + 1))
	else
		echo "fuzz $n: ok, ${secs}s, ${execs:-?} executions, ${cov:-cov ?}, corpus $(find "$work" -type f | wc -l) + $(find "$seeds" -type f | wc -l) seeds"
	fi
done
echo "fuzz: $ran run, $failed failed, $skipped skipped"
[ $failed -ne 0 ] && exit 1
[ $skipped -ne 0 ] && [ "${CI:-}" = true ] && { echo "fuzz: skips fail the run in CI" >&2; exit 1; }
exit 0
