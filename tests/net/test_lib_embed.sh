#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# An embedder's view of libxpile: `make install` into a scratch DESTDIR, then a tiny
# program that includes every installed header (as C, and as C++ when g++ is there)
# builds with nothing but `pkg-config --cflags --libs xpile`, links libxpile.so.0 and
# runs a pool, the opts rule and the number parser through it; the engine's entry points
# (xpile/engine.h) link. The BPF-only headers are not installed, and an internal
# function does not link. Needs no network.
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${XPILE_BUILD:-build}
[ -f "$build/libxpile.so" ] && [ -f "$build/xpile.pc" ] || { echo "FAIL: run make first"; exit 1; }
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config missing: apt-get install pkg-config"; exit 77; }

tmp=$(mktemp -d /tmp/xpile-embed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The PREFIX build/xpile.pc was made with, so that install rewrites nothing in build/.
prefix=$(sed -n 's/^prefix=//p' "$build/xpile.pc")
libdir=$(sed -n 's/^libdir=//p' "$build/xpile.pc")
make -s --no-print-directory BUILD="$build" PREFIX="$prefix" install DESTDIR="$tmp" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "make install DESTDIR=$tmp failed"; }
inc=$tmp$(sed -n 's/^includedir=//p' "$build/xpile.pc")/xpile
for h in lib/include/xpile/*.h bpf/steer_abi.h; do
	[ -f "$inc/${h##*/}" ] || fail "${h##*/} not installed in $inc"
done
for h in parse.h xsks_map.h; do
	[ -e "$inc/$h" ] && fail "BPF-only $h installed in $inc"
done
[ -L "$tmp$libdir/libxpile.so.0" ] || fail "libxpile.so.0 not installed in $tmp$libdir"

export PKG_CONFIG_SYSROOT_DIR=$tmp PKG_CONFIG_PATH=$tmp$libdir/pkgconfig
flags=$(pkg-config --cflags --libs xpile) || fail "pkg-config does not find xpile in $PKG_CONFIG_PATH"

includes=""
for h in "$inc"/*.h; do
	[ "${h##*/}" = steer_abi.h ] || includes+="#include <xpile/${h##*/}>"$'\n'
done
cat >"$tmp/embed.c" <<EOF
$includes
#include <stdio.h>

int main(void)
{
	__u64 h[64], got[40];
	struct xp_pool *p;
	struct xp_cache *c;
	uint64_t v;
	int err;

	for (int i = 0; i < 64; i++)
		h[i] = (__u64)i * 2048;
	XP_OPTS(xp_pool_opts, o, .backend = XP_POOL_PILE, .stripes = 1);
	err = xp_pool_create(h, 64, &o, &p);
	if (err)
		return printf("xp_pool_create: %d\n", err), 1;
	err = xp_cache_create(p, 64, &c);
	err = err ?: xp_cache_get(c, got, 40);
	err = err ?: xp_cache_put(c, got, 40);
	if (err || xp_cache_count(c) + xp_pool_avail(p) != 64)
		return printf("pool round trip: %d\n", err), 1;
	xp_cache_destroy(c);
	err = xp_pool_audit(p);
	xp_pool_destroy(p);
	if (err)
		return printf("audit: %d\n", err), 1;
	if (xp_parse_u64("0x40", 0, 100, &v) || v != 64)
		return printf("xp_parse_u64\n"), 1;
	/* The engine is in the library too (xpile/engine.h): its entry points link. */
	int (*create)(const struct xp_engine_opts *, struct xp_engine **) = xp_engine_create;
	__u32 (*rx)(struct xp_worker *, struct xp_queue *, struct xp_pkt *, __u32) = xp_rx_burst;
	if (!create || !rx)
		return printf("xp_engine_create\n"), 1;
	puts("embedded ok");
	return 0;
}
EOF
# shellcheck disable=SC2086
cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/embed" "$tmp/embed.c" $flags ||
	fail "the embedder program does not build with \`pkg-config --cflags --libs xpile\`"
objdump -p "$tmp/embed" | grep -q 'NEEDED *libxpile\.so\.0$' ||
	fail "the program does not need libxpile.so.0 (linked statically?)"
out=$(LD_LIBRARY_PATH=$tmp$libdir "$tmp/embed" 2>&1) || fail "the embedder program failed: $out"
[ "$out" = "embedded ok" ] || fail "unexpected output: $out"
echo "C: $out ($(LD_LIBRARY_PATH=$tmp$libdir ldd "$tmp/embed" | awk '/libxpile/ { print $3 }'))"

if command -v g++ >/dev/null; then
	printf '%s\nint main() { return xp_pool_backend_name(XP_POOL_RING)[0] != %s; }\n' \
		"$includes" "'r'" >"$tmp/embed.cc"
	# shellcheck disable=SC2086
	g++ -Wall -Werror -o "$tmp/embedxx" "$tmp/embed.cc" $flags ||
		fail "the installed headers do not build as C++"
	LD_LIBRARY_PATH=$tmp$libdir "$tmp/embedxx" || fail "the C++ program failed"
	echo "C++: ok"
fi

# The boundary: an internal function (the ring backend's) is not there to link.
cat >"$tmp/internal.c" <<'EOF'
struct xp_mpmc;
int xp_mpmc_create(unsigned int cap, struct xp_mpmc **out);
int main(void)
{
	struct xp_mpmc *r;

	return xp_mpmc_create(8, &r);
}
EOF
# shellcheck disable=SC2086
if cc -o "$tmp/internal" "$tmp/internal.c" $flags 2>"$tmp/internal.log"; then
	fail "an internal function (xp_mpmc_create) links against libxpile.so"
fi
grep -q 'undefined reference to .xp_mpmc_create' "$tmp/internal.log" ||
	fail "linking an internal function failed for another reason: $(cat "$tmp/internal.log")"
echo "internal xp_mpmc_create: not exported"
