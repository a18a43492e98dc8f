#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# libxpile.so exports exactly its public API: every defined dynamic symbol is an XP_API
# declaration of lib/include/xpile/, every XP_API declaration is exported, and each is
# in the version script's node (lib/libxpile.map); every global of libxpile.a is xp_*.
# Needs no network and no root.
set -u
cd "$(dirname "$0")/../.." || exit 2
so=${XPILE_BUILD:-build}/libxpile.so
[ -f "$so" ] || { echo "FAIL: $so missing: run make"; exit 1; }
command -v nm >/dev/null || { echo "SKIP: nm missing: apt-get install binutils"; exit 77; }

tmp=$(mktemp -d /tmp/xpile-exports.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Function symbols only: the version node itself shows up as an absolute symbol.
nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
grep -ho '^XP_API[^(]*\bxp_[a-z0-9_]*(' lib/include/xpile/*.h |
	grep -o 'xp_[a-z0-9_]*($' | tr -d '(' | sort -u >"$tmp/declared"
sed -n 's/^[[:space:]]*\(xp_[a-z0-9_]*\);$/\1/p' lib/libxpile.map | sort -u >"$tmp/mapped"

rc=0
indent() { sed "s/^/  /"; }
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
unmapped=$(comm -13 "$tmp/mapped" "$tmp/declared")
stale=$(comm -23 "$tmp/mapped" "$tmp/declared")
[ -z "$extra" ] || { echo "FAIL: exported but no XP_API declaration in lib/include/xpile/ (make it static, or declare it XP_API):"; indent <<<"$extra"; rc=1; }
[ -z "$missing" ] || { echo "FAIL: declared XP_API but not exported (add it to lib/libxpile.map, or define it):"; indent <<<"$missing"; rc=1; }
[ -z "$unmapped" ] || { echo "FAIL: XP_API but not in lib/libxpile.map:"; indent <<<"$unmapped"; rc=1; }
[ -z "$stale" ] || { echo "FAIL: in lib/libxpile.map but declared nowhere:"; indent <<<"$stale"; rc=1; }
# Every export carries the version node, so a later incompatible change can add a new one.
unversioned=$(nm -D --defined-only --with-symbol-versions "$so" 2>/dev/null |
	awk '$2 != "A" && $3 !~ /@LIBXPILE_0\.[0-9]+$/ { print $3 }')
[ -z "$unversioned" ] || { echo "FAIL: exported without a LIBXPILE_0.x version (first 10):"; echo "$unversioned" | head -n 10 | indent; rc=1; }
# A static embedder links every global of libxpile.a into its own namespace: all are xp_*.
a=${so%.so}.a
if [ -f "$a" ]; then
	foreign=$(nm -g --defined-only "$a" | awk 'NF == 3 && $3 !~ /^xp_/ { print $3 }' | sort -u)
	[ -z "$foreign" ] || { echo "FAIL: globals of $a outside the xp_ prefix:"; indent <<<"$foreign"; rc=1; }
fi
soname=$(objdump -p "$so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libxpile.so.0 ] || { echo "FAIL: soname is '$soname', expected libxpile.so.0"; rc=1; }

[ $rc = 0 ] && echo "ok: $(wc -l <"$tmp/exported") symbols exported, all XP_API, all versioned LIBXPILE_0.x"
exit $rc
