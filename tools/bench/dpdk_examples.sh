#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Builds DPDK's own examples/l2fwd and examples/l3fwd (l3fwd with one line changed, below) from the sources
# Debian ships in dpdk-doc, against libdpdk-dev, into OUT (default build/dpdk-examples):
#   OUT/l2fwd  OUT/l3fwd
# The baseline of tools/bench/examples.sh. An optional dependency, never part of
# `make` or of CI's required path:
#   apt-get install dpdk-doc libdpdk-dev     (or XPILE_WITH_DPDK=1 tools/setup/install-deps.sh)
# Prints the two paths; exit 2 with one line naming what is missing otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${1:-${XPILE_BUILD:-build}/dpdk-examples}
src=${DPDK_EXAMPLES:-/usr/share/dpdk/examples}

die() { echo "dpdk_examples: $*" >&2; exit 2; }
for d in l2fwd l3fwd common; do
	[ -d "$src/$d" ] || die "$src/$d not found: apt-get install dpdk-doc (DPDK 22.11's example sources)"
done
pkg-config --exists libdpdk 2>/dev/null || die "pkg-config finds no libdpdk: apt-get install libdpdk-dev"
ver=$(pkg-config --modversion libdpdk)
case $ver in 22.11*) ;; *) echo "# dpdk_examples: libdpdk $ver, not 22.11: the figures compare another DPDK" >&2 ;; esac

# The examples' Makefiles build in place and include ../common: copy the three side by
# side, then build the shared variant (the PMDs, net_af_xdp among them, load as plugins).
mkdir -p "$out/src"
for d in l2fwd l3fwd common; do
	rm -rf "${out:?}/src/$d"
	cp -r "$src/$d" "$out/src/$d"
done
# The one change: l3fwd 22.11 asks every port for RX checksum offload at configure time
# and gives up where the port has none, as net_af_xdp does (capabilities 0x0). Its LPM
# path never reads the offload's flags (the RFC 1812 checks look at the header), so
# asking for nothing changes what it does only on such a port: it runs.
sed -i 's/\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,/.offloads = 0, \/* xpile bench: net_af_xdp has none *\//' \
	"$out/src/l3fwd/main.c"
grep -q 'xpile bench: net_af_xdp has none' "$out/src/l3fwd/main.c" ||
	die "examples/l3fwd/main.c no longer requests RX checksum offload as 22.11 does: check the patch"
for d in l2fwd l3fwd; do
	nice make -s -C "$out/src/$d" -j2 >"$out/src/$d.log" 2>&1 ||
		{ tail -5 "$out/src/$d.log" >&2; die "building DPDK's examples/$d failed (log: $out/src/$d.log)"; }
	ln -sf "src/$d/build/$d" "$out/$d"
	[ -x "$out/$d" ] || die "examples/$d built no $out/$d"
	echo "$out/$d"
done
