#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The map of the tree stays true: every source file under lib/, user/ and tools/ (C,
# shell, Python, JavaScript) is named in README.md or a page of docs/, by its path
# (a pair as PATH.[ch] counts for both; a public header also as xpile/NAME.h, the way
# it is included). A new file fails here until a doc says where it belongs.
set -u
cd "$(dirname "$0")/../.." || exit 1
docs=(README.md docs/*.md)
missing=0 n=0
while IFS= read -r f; do
	[ -f "$f" ] || continue # listed by git, removed in the working tree
	n=$((n + 1))
	names=(-e "$f" -e "${f%.*}.[ch]")
	[[ $f == lib/include/* ]] && names+=(-e "${f#lib/include/}")
	grep -qF "${names[@]}" "${docs[@]}" && continue
	echo "not named in README.md or docs/*.md: $f"
	missing=$((missing + 1))
done < <(git ls-files --cached --others --exclude-standard lib user tools |
	grep -E '\.(c|h|sh|py|js)$' | sort -u)
[ "$n" -gt 0 ] || { echo "no source file found: not a git checkout?"; exit 1; }
[ "$missing" = 0 ] || { echo "FAIL: $missing of $n files named in no doc: say where each belongs"; exit 1; }
echo "ok: all $n source files under lib/, user/, tools/ are named in a doc"
