#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine built with ASan+UBSan (make SAN=asan) on real traffic: forwarding with
# audits, both overloads, every error path, the faults a running engine watches for and
# the host TAP's io_uring paths (multishot inject, READ_FIXED, punts), the control socket and its clients (stats, ctl: bad lines, refused peers, a reader that never reads), a capture started, changed and stopped live, punt rules churned with their sets freed after a grace period. Any leak, overflow or
# undefined behaviour makes the engine exit non-zero, and the suite fails. Hot handovers
# too: every protocol step failed on either side, then a real one. The router mode too
# (test_router: its punts, the control thread, the FIB and the mirror).
set -u
cd "$(dirname "$0")/../.." || exit 1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
[ -x build/asan/xpile ] || { echo "SKIP: build/asan/xpile missing: make SAN=asan" >&2; exit 77; }
export XPILE=$PWD/build/asan/xpile
# The BPF object of the same build: its maps match that build's steer library.
export XPILE_BPF_DIR=${XPILE_BPF_DIR:-$PWD/build/asan/bpf}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
for t in fwd pressure badinput faults handover_faults host_tap ctl stats livecap grace; do
	echo "== asan: test_engine_$t"
	bash "tests/net/test_engine_$t.sh" || { echo "FAIL: test_engine_$t under ASan+UBSan" >&2; exit 1; }
done
echo "== asan: test_router"
bash tests/net/test_router.sh || { echo "FAIL: test_router under ASan+UBSan" >&2; exit 1; }
echo ok
