#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The examples as a user meets them: `make install` into a scratch DESTDIR puts their
# sources under share/doc/xpile/examples/NAME/, and each builds from there with nothing
# but `cc -O2 -Wall -Wextra -Werror NAME/*.c $(pkg-config --cflags --libs xpile)`, links
# libxpile.so.0 and answers --help; so does docs/tutorial.md's shortest program. Needs
# no network.
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${XPILE_BUILD:-build}
[ -f "$build/libxpile.so" ] && [ -f "$build/xpile.pc" ] || { echo "FAIL: run make first"; exit 1; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config missing: apt-get install pkg-config"; exit 77; }
tmp=$(mktemp -d /tmp/xpile-examples.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

prefix=$(sed -n 's/^prefix=//p' "$build/xpile.pc")
libdir=$(sed -n 's/^libdir=//p' "$build/xpile.pc")
make -s --no-print-directory BUILD="$build" PREFIX="$prefix" install DESTDIR="$tmp" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "make install DESTDIR=$tmp failed"; }
ex=$tmp$prefix/share/doc/xpile/examples
export PKG_CONFIG_SYSROOT_DIR=$tmp PKG_CONFIG_PATH=$tmp$libdir/pkgconfig
flags=$(pkg-config --cflags --libs xpile) || fail "pkg-config does not find xpile in $PKG_CONFIG_PATH"
n=0
for src in tools/examples/*/; do
	name=$(basename "$src")
	[ -d "$ex/$name" ] || fail "examples/$name not installed in $ex"
	for f in "$src"*; do
		cmp -s "$f" "$ex/$name/${f##*/}" || fail "$f installed differently"
	done
	# shellcheck disable=SC2086 # flags are words
	(cd "$ex/$name" && cc -O2 -Wall -Wextra -Werror -o "$tmp/$name" ./*.c $flags) 2>"$tmp/cc.log" ||
		{ cat "$tmp/cc.log"; fail "examples/$name does not build with \`pkg-config --cflags --libs xpile\` alone"; }
	objdump -p "$tmp/$name" | grep -q 'NEEDED *libxpile\.so\.0$' || fail "$name does not need libxpile.so.0"
	LD_LIBRARY_PATH=$tmp$libdir "$tmp/$name" --help | grep -q "^Usage: $name " || fail "$name --help"
	LD_LIBRARY_PATH=$tmp$libdir "$tmp/$name" --no-such-option >/dev/null 2>&1
	[ $? = 2 ] || fail "$name: a bad option does not exit 2"
	echo "examples/$name: built from the installed tree ($(wc -l "$ex/$name"/* | tail -1 | awk '{print $1}') lines), --help ok"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n examples"
# The tutorial's shortest complete program, as the installed page has it, builds too.
awk '/^```c$/ { on = 1; next } /^```$/ { if (on) exit } on' "$tmp$prefix/share/doc/xpile/tutorial.md" >"$tmp/bounce.c"
[ -s "$tmp/bounce.c" ] || fail "no C program in the installed tutorial.md"
# shellcheck disable=SC2086
cc -O2 -Wall -Wextra -Werror -o "$tmp/bounce" "$tmp/bounce.c" $flags 2>"$tmp/cc.log" ||
	{ cat "$tmp/cc.log"; fail "docs/tutorial.md's program does not build"; }
echo "docs/tutorial.md: its program builds ($(wc -l <"$tmp/bounce.c") lines)"
echo ok
