#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent built with ASan+UBSan (make SAN=asan) through the device-plugin suite
# (every protocol edge case, 1,000 handshakes, the unprivileged engines), the
# bad-input suite (every broken config and control request), the socket-counter
# suite (pidfd duplicates, the probe), the re-attach suite (link notifications), the
# life cycle (SIGHUP and control-socket rule swaps, SIGTERM and kill -9 adopted), the
# HTTP server against Prometheus, its limits and slow clients, the socket directory
# checks, the epoll loop (io_uring refused: every operation, cancel and timer), and
# the kubelet side (gRPC with two stacks, the pinned map, xpile-cni's lending,
# /xsk_socket). Any leak, overflow or
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
# nouring: the epoll loop's every operation; its rerun of dp and restart is left out.
export XT_AGENT_NOURING_SUITES=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in dp badinput dpdir http xsk reattach restart prometheus nouring kubelet pinned cni xsksock; do
	echo "== asan: test_agent_$t"
	if ! bash "tests/net/test_agent_$t.sh" >"$log" 2>&1; then
		tail -n 25 "$log"
		# The suite's reason on the verdict's own line: summaries show the last lines.
		echo "FAIL: test_agent_$t under ASan+UBSan: $(grep -E 'FAIL|ERROR|Sanitizer' "$log" | tail -n 1)" >&2
		exit 1
	fi
	cat "$log"
done
echo ok
