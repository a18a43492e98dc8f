#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make install PREFIX=/opt/xpile DESTDIR=T` puts everything in place under T: the four
# binaries, the library (static, shared with its soname links), the headers, the
# pkg-config file, the BPF objects, a man page per program and command, the bash
# completion, the agent's systemd unit with PREFIX's paths filled in, and the docs; and
# rebuilds nothing for another PREFIX. Then, with T's /opt bound on /opt in a mount
# namespace of its own (where the unit says the binary is): `systemd-analyze verify`
# finds the unit clean, `man` finds the installed pages through the usual search, and
# the installed loader loads its installed steer.o (no XPILE_BPF_DIR, no build tree
# near it) on a veth of a namespace made here, and unloads it.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
xt_require_root
for t in systemd-analyze man unshare; do
	command -v $t >/dev/null || xt_skip "$t missing (tools/setup/install-deps.sh installs it)"
done
[ -d /opt ] || xt_skip "no /opt to bind the install on"
[ -x "$XT_BUILD/xpile-agent" ] || xt_skip "not built: run make"
T=$(mktemp -d /tmp/xpile-install.XXXXXX)
xt_on_exit rm -rf "$T"
P=/opt/xpile

before=$(stat -c %Y "$XT_BUILD/xpile" "$XT_BUILD/libxpile.a")
make -s BUILD="$XT_BUILD" install PREFIX=$P DESTDIR="$T/root" >"$T/make.log" 2>&1 ||
	xt_fail "make install: $(tail -5 "$T/make.log")"
[ "$(stat -c %Y "$XT_BUILD/xpile" "$XT_BUILD/libxpile.a")" = "$before" ] ||
	xt_fail "make install PREFIX=$P rebuilt the binaries"
R=$T/root$P
echo "installed tree (PREFIX=$P, DESTDIR=T):"
(cd "$T/root" && find . \( -type f -o -type l \) | sort | sed 's|^\./||' |
	sed -E 's|/[^/]+$|/|' | uniq -c | sed 's/^/  /')

for f in bin/xpile bin/xpile-loader bin/xpile-agent bin/xpile-bench bin/xpile-cni; do
	[ -x "$R/$f" ] || xt_fail "$f not installed"
done
for f in lib/libxpile.a lib/libxpile.so.0.1.0 include/xpile/pool.h include/xpile/steer_abi.h \
	lib/pkgconfig/xpile.pc lib/xpile/bpf/steer.o lib/systemd/system/xpile-agent.service \
	share/doc/xpile/README.md share/doc/xpile/nic.md share/doc/xpile/agent.md; do
	[ -s "$R/$f" ] || xt_fail "$f not installed"
done
[ "$(readlink "$R/lib/libxpile.so.0")" = libxpile.so.0.1.0 ] &&
	[ "$(readlink "$R/lib/libxpile.so")" = libxpile.so.0 ] || xt_fail "soname links"
grep -qx "prefix=$P" "$R/lib/pkgconfig/xpile.pc" || xt_fail "xpile.pc: $(head -1 "$R/lib/pkgconfig/xpile.pc")"
for b in xpile xpile-loader xpile-agent xpile-bench; do
	while read -r page; do
		[ -s "$R/share/man/man8/$page" ] || xt_fail "man page $page not installed"
	done <"$XT_BUILD/man/$b.pages"
	cmp -s "$R/share/bash-completion/completions/$b" "$XT_BUILD/completion/$b" ||
		xt_fail "completion for $b not installed"
done
U=$R/lib/systemd/system/xpile-agent.service
grep -qE "@[A-Z]+@" "$U" && xt_fail "the unit has a placeholder left: $(grep -E "@[A-Z]+@" "$U")"
grep -qx "ExecStart=$P/bin/xpile-agent run --config /etc/xpile/agent.json" "$U" ||
	xt_fail "the unit's ExecStart: $(grep ExecStart= "$U")"
grep -q "file://$P/share/doc/xpile/agent.md" "$U" || xt_fail "the unit's Documentation="

# Where the unit says: T's /opt on /opt, in this mount namespace only.
xt_ns_var N inst
xt_veth "$N" i0 "$N" i1
# shellcheck disable=SC2016 # expanded by the inner shell
out=$(ip netns exec "$N" unshare -m --propagation private env -u XPILE_BPF_DIR bash -c '
	set -e
	mount --bind "$1/root/opt" /opt
	# Documentation=man:xpile-agent(8): verify runs man, which finds the installed page.
	MANPATH=/opt/xpile/share/man systemd-analyze verify /opt/xpile/lib/systemd/system/xpile-agent.service 2>&1
	echo "verify: $?"
	MANPATH=/opt/xpile/share/man man -w xpile-loader-wire
	MANPATH=/opt/xpile/share/man MANWIDTH=80 man -P cat xpile 2>/dev/null | col -b | head -n 12
	/opt/xpile/bin/xpile --version
	/opt/xpile/bin/xpile-loader load --mode skb i0
	/opt/xpile/bin/xpile-loader unload i0' _ "$T" 2>&1) || xt_fail "under /opt: $out"
printf '  %s\n' "${out//$'\n'/$'\n'  }"
grep -qx "verify: 0" <<<"$out" || xt_fail "systemd-analyze verify"
[ "$(grep -c 'xpile-agent.service' <<<"$out")" = 0 ] || xt_fail "systemd-analyze verify: $out"
grep -qx "/opt/xpile/share/man/man8/xpile-loader-wire.8" <<<"$out" || xt_fail "man -w: $out"
grep -qE "^ *xpile - move packets" <<<"$out" || xt_fail "man xpile: $out"
grep -q "xp_steer loaded" <<<"$out" || xt_fail "the installed loader did not load: $out"
st_pins=$(find /sys/fs/bpf/xpile -path "*ns$(stat -L -c %i "/run/netns/$N")*" 2>/dev/null | head -1)
[ -z "$st_pins" ] || xt_fail "pins left: $st_pins"
echo PASS
