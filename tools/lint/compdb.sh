#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Writes a compile_commands.json for clang-tidy from the flags the Makefile compiles with,
# without building anything (bear would need a full build).
#   tools/lint/compdb.sh CC FLAGS... -- SOURCES...   (JSON on stdout)
set -euo pipefail
cc=$1
shift
flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	flags+=("$1")
	shift
done
[ "${1:-}" = -- ] || { echo "usage: $0 CC FLAGS... -- SOURCES..." >&2; exit 2; }
shift
json() { local s=${1//\\/\\\\}; printf '"%s"' "${s//\"/\\\"}"; }
dir=$(pwd)
sep=''
echo '['
for src in "$@"; do
	printf '%s{"directory":%s,"file":%s,"arguments":[%s' "$sep" "$(json "$dir")" \
		"$(json "$src")" "$(json "$cc")"
	for f in "${flags[@]}" -c "$src"; do printf ',%s' "$(json "$f")"; done
	printf ']}\n'
	sep=','
done
echo ']'
