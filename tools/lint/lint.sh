#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make lint`: the static checks CI runs before the tests, each at zero findings.
#   1. clang-format: every .c/.h of ours, checked against .clang-format, never rewritten
#   2. shell: every shell script (*.sh and files with a shell #!), sourced libs too,
#      through shellcheck (.shellcheckrc)
#   3. clang-tidy: lib/ user/ tools/ with the checks in .clang-tidy (compile database
#      in BUILD, written by the Makefile)
# Usage: tools/lint/lint.sh BUILD SOURCES...   (LINT_JOBS: parallel clang-tidy runs)
# Prints one line per check and the findings; exits 1 if any check found something.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
build=$1
shift
jobs=${LINT_JOBS:-$(nproc)}
out=$(mktemp -d /tmp/xpile-lint.XXXXXX)
trap 'rm -rf "$out"' EXIT
bad=0

for tool in clang-format shellcheck clang-tidy; do
	command -v "$tool" >/dev/null ||
		{ echo "lint: $tool missing: run tools/setup/install-deps.sh" >&2; exit 1; }
done

# Our files only: not build output, not fuzz corpora.
ours() { find lib user tools tests bpf .ci "$@" -not -path '*/corpus/*' 2>/dev/null | sort; }

report() { # name seconds findings-file
	local n
	n=$(grep -c . "$3")
	if [ "$n" -gt 0 ]; then
		bad=1
		echo "lint: $1: FAILED (${2}s)"
		sed 's/^/  /' "$3"
	else
		echo "lint: $1: clean (${2}s)"
	fi
}

t0=$SECONDS
mapfile -t cfiles < <(ours -type f \( -name '*.c' -o -name '*.h' \))
clang-format --dry-run -Werror "${cfiles[@]}" >"$out/fmt.raw" 2>&1
# One line per file that would change, with the fix; the full diff is one command away.
grep -o '^[^:]*\.[ch]:' "$out/fmt.raw" | sort -u | sed 's/:$//; s/$/: not clang-formatted (fix: clang-format -i FILE)/' >"$out/fmt"
[ -s "$out/fmt" ] || ! grep -q . "$out/fmt.raw" || cp "$out/fmt.raw" "$out/fmt"
report clang-format $((SECONDS - t0)) "$out/fmt"

t0=$SECONDS
mapfile -t sh < <({
	ours -type f -name '*.sh'
	ours -type f -perm -u+x -not -name '*.sh' -exec awk 'NR == 1 && /^#!.*sh( |$)/ { print FILENAME } { exit }' {} \;
} | sort -u)
# -x: follow `source` of the shared libs; gcc format: one line per finding.
shellcheck -x -f gcc "${sh[@]}" >"$out/sh" 2>&1
# After X || { cat LOG; xt_fail "...$?"; } the status is cat's (0), not X's: save it first.
grep -nE '^[^#]*\{ *cat [^;]*; *(xt_fail|die|echo) [^;]*\$\?' "${sh[@]}" |
	sed 's/$/  <- $? here is the status of cat: rc=$? first/' >>"$out/sh"
report "shellcheck (${#sh[@]} scripts)" $((SECONDS - t0)) "$out/sh"

t0=$SECONDS
printf '%s\n' "$@" | xargs -P "$jobs" -n 1 clang-tidy -p "$build" --quiet >"$out/tidy.raw" 2>"$out/tidy.err"
# Findings are "file:line:col: warning|error: ... [check]" plus their context lines.
grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' "$out/tidy.raw" | sed "s|^$PWD/||" | sort -u >"$out/tidy"
grep -E 'error:' "$out/tidy.err" | grep -v 'warnings\? generated' >>"$out/tidy"
report "clang-tidy ($# files)" $((SECONDS - t0)) "$out/tidy"

exit $bad
