#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine where io_uring is refused (a seccomp filter failing io_uring_setup with
# ENOSYS, as containerd's and podman's default profiles do; tests/harness/seccomp_deny):
#  - it receives what is sent (rxdrop, K of K), its idle wait is poll() and it says so
#    with the reason; --capture writes with write() instead, says so, and tcpdump reads
#    the K frames back; the ledger is clean;
#  - --host-tap, whose punt and inject are io_uring operations, is refused in one line
#    naming io_uring and the fix, exit 1, no TAP and no program left behind;
#  - --idle-wait uring is refused in one line, exit non-zero.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/steer.sh
eng_require
DENY=$XT_BUILD/tests/harness/seccomp_deny
[ -x "$DENY" ] || xt_skip "seccomp_deny not built: run make (needs libseccomp-dev)"
command -v tcpdump >/dev/null || xt_skip "tcpdump missing: apt-get install tcpdump"

eng_pair 198.18.42
REAL=$XPILE
XPILE=$XT_TMP/xpile-nouring
printf '#!/bin/sh\nexec "%s" io_uring_setup "%s" "$@"\n' "$DENY" "$REAL" >"$XPILE"
chmod 755 "$XPILE"
WHY="io_uring_setup: Function not implemented; a seccomp profile without io_uring, as containerd's and podman's defaults, or a kernel without it"
K=200

# 1. Traffic, the idle wait, the capture.
eng_start ENG "$B" --iface b0 --mode rxdrop --cores 0 --ledger-debug --capture "$XT_TMP/c.pcapng" \
	--capture-dir rx
grep -qF "{\"type\":\"idle_wait\",\"core\":0,\"wait\":\"poll\",\"why\":\"io_uring refused: $WHY\"}" \
	"$XT_TMP/ENG.json" || xt_fail "idle wait line: $(grep idle_wait "$XT_TMP/ENG.json")"
grep -qxF "xpile: capture: io_uring refused ($WHY): writing with write()" "$XT_TMP/ENG.err" ||
	xt_fail "capture line: $(cat "$XT_TMP/ENG.err")"
st_udp "$A" 198.18.42.2 7000 $K || xt_fail "sending failed"
eng_wait_sum 5 "$XT_TMP/ENG.json" rx_packets interval $K || true
eng_stop "$ENG" || { rc=$?; cat "$XT_TMP/ENG.err"; xt_fail "engine exit $rc"; }
eng_ledger_ok "$XT_TMP/ENG.json" || xt_fail "ledger not clean"
got=$(eng_sum "$XT_TMP/ENG.json" rx_packets)
[ "$got" = $K ] || xt_fail "rxdrop with io_uring refused: $got of $K frames"
n=$(tcpdump -nn -r "$XT_TMP/c.pcapng" 2>&1 | tee "$XT_TMP/td" | grep -c "> 198.18.42.2.7000:")
[ "$n" = $K ] || xt_fail "capture written with write(): $n of $K frames read back: $(head -n 3 "$XT_TMP/td")"
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo "rxdrop: $got of $K frames, idle wait poll() (said why), capture with write(): $n frames read back"

# 2. --host-tap needs io_uring: one line, exit 1, nothing left.
out=$(ip netns exec "$B" "$XPILE" run --iface b0 --mode rxdrop --cores 0 --host-tap b0 \
	--duration 2 2>&1 >/dev/null)
rc=$?
want="xpile: --host-tap: the host TAP's punt and inject run on io_uring, which is refused here ($WHY): allow io_uring in the seccomp profile or run without --host-tap"
[ $rc = 1 ] && [ "$out" = "$want" ] || xt_fail "--host-tap with io_uring refused: exit $rc: $out"
ip -n "$B" link show xp-b0 >/dev/null 2>&1 && xt_fail "the TAP xp-b0 was left behind"
eng_no_xdp "$B" b0 || xt_fail "--host-tap refused: XDP program left attached"
echo "--host-tap: $out"

# 3. --idle-wait uring asks for what is refused.
out=$(ip netns exec "$B" "$XPILE" run --iface b0 --mode rxdrop --cores 0 --idle-wait uring \
	--duration 2 2>&1 >/dev/null)
rc=$?
[ $rc != 0 ] && grep -qxF "xpile: core 0: --idle-wait uring: io_uring refused: $WHY; use --idle-wait poll" <<<"$out" ||
	xt_fail "--idle-wait uring with io_uring refused: exit $rc: $out"
eng_no_xdp "$B" b0 || xt_fail "--idle-wait uring refused: XDP program left attached"
echo PASS
