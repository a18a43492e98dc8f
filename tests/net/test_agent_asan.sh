#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent built with ASan+UBSan (make SAN=asan) through the device-plugin suite
# (every protocol edge case, 1,000 handshakes, the unprivileged engines), the
# bad-input suite (every broken config and control request), the socket-counter
# suite (pidfd duplicates, the probe) and the re-attach suite (link notifications). Any leak, overflow or
# undefined behaviour makes the agent exit non-zero, and the suite fails. (It found
# a one-byte overflow on a 65-byte device-plugin request.)
set -u
cd "$(dirname "$0")/../.." || exit 1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
# XPILE_ASAN_BUILD: where `make SAN=asan BUILD=...` put it (default build/asan).
asan=${XPILE_ASAN_BUILD:-$PWD/build/asan}
[ -x "$asan/xpile-agent" ] || { echo "SKIP: $asan/xpile-agent missing: make SAN=asan" >&2; exit 77; }
export AGENT=$asan/xpile-agent
export XPILE_BPF_DIR=${XPILE_BPF_DIR:-$asan/bpf}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
for t in dp badinput xsk reattach; do
	echo "== asan: test_agent_$t"
	bash "tests/net/test_agent_$t.sh" || { echo "FAIL: test_agent_$t under ASan+UBSan" >&2; exit 1; }
done
echo ok
