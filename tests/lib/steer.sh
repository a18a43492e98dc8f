# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the steering and loader suites (tests/net/test_steer*.sh, test_loader*.sh,
# test_xdp_tools*.sh). Source after tests/lib/netns.sh.
#
#   st_require               skip unless root, xpile-loader and steer.o exist
#   st_ns VAR NAME           xt_ns in this shell; VAR gets the real name; pins and the
#                            wiring plan keyed by its inode are removed at exit
#   st_loader NS ARGS...     xpile-loader ARGS inside NS, each call its own `ip netns exec`
#   st_pin_dir NS IF         where the pins of IF in NS live
#   st_no_trace NS IF        nothing attached to IF, no pin dir, no wiring plan
#   st_udp NS DST PORT N     send N one-byte UDP datagrams (bash /dev/udp), bounded
#   st_fakenic NS ARGS...    xpile-loader ARGS inside NS with tests/lib/fakenic.h preloaded:
#                            lo answers SIOCETHTOOL as a NIC with RSS and ntuple tables
#   st_bpffs_bind VAR        the host's bpffs bound outside /sys (VAR gets the path), for
#                            --bpffs where a process cannot find it (no CAP_SYS_PTRACE
#                            inside ip netns exec); unmounted at exit

LOADER=${LOADER:-$XT_BUILD/xpile-loader}
if [ -z "${XT_TMP:-}" ]; then
	XT_TMP=$(mktemp -d /tmp/xpile-net.XXXXXX)
	xt_on_exit rm -rf "$XT_TMP"
fi
BPFFS=${XPILE_BPFFS:-/sys/fs/bpf}

st_require() {
	xt_require_root
	[ -x "$LOADER" ] || xt_skip "xpile-loader not built: run make"
	[ -f "$XT_BUILD/bpf/steer.o" ] || xt_skip "steer program not built: run make"
	# No bpffs yet is fine: `load` mounts one on the host's /sys/fs/bpf, as designed.
}

st_ns_ino() { stat -L -c %i "/run/netns/$1"; }

st_ns() { xt_ns_var "$@"; }

st_loader() {
	local ns=$1
	shift
	ip netns exec "$ns" "$LOADER" "$@"
}

st_fakenic() {
	local ns=$1
	shift
	if [ ! -f "$XT_TMP/fakenic.so" ]; then
		cc -shared -fPIC -O1 -Wall -Werror -Itests/lib -x c - -o "$XT_TMP/fakenic.so" \
			<<<'#include "fakenic.h"' || xt_fail "cannot build the fake NIC shim"
	fi
	ip netns exec "$ns" env LD_PRELOAD="$XT_TMP/fakenic.so" XPILE_FAKENIC_IF=lo \
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" "$LOADER" "$@"
}

st_pin_dir() { echo "$BPFFS/xpile/ns$(st_ns_ino "$1")/$2"; }

st_no_trace() {
	local ns=$1 ifn=$2 ino
	ino=$(st_ns_ino "$ns")
	if ip -n "$ns" link show "$ifn" | grep -q 'xdp'; then
		echo "XDP program still attached to $ifn" >&2
		return 1
	fi
	if [ -e "$BPFFS/xpile/ns$ino" ]; then
		echo "pins left: $(find "$BPFFS/xpile/ns$ino")" >&2
		return 1
	fi
	if [ -e "/run/xpile/ns$ino" ]; then
		echo "wiring plan left: $(find "/run/xpile/ns$ino")" >&2
		return 1
	fi
	return 0
}

st_bpffs_bind() {
	local d
	d=$(mktemp -d /tmp/xpile-bpffs.XXXXXX) || xt_fail "mktemp failed"
	mount --bind "$BPFFS" "$d" || { rmdir "$d"; xt_fail "cannot bind the host's bpffs $BPFFS"; }
	xt_on_exit "umount -l '$d'; rmdir '$d'"
	printf -v "$1" '%s' "$d"
}

st_udp() { # ns dst port n
	# shellcheck disable=SC2016 # expanded by the inner bash
	ip netns exec "$1" timeout 60 bash -c \
		'for ((i = 0; i < $3; i++)); do printf x >/dev/udp/$1/$2 || exit 1; done' \
		_ "$2" "$3" "$4"
}
