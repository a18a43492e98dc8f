#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/nic.md's steps on a veth pair (and, for what only a NIC has, the fake NIC of
# tests/lib/fakenic.h preloaded into the loader), checking that each line the guide
# tells a person to look for is what the commands print: the features lines, wire's
# steps (channels, IRQs skipped on veth, RSS spread on the fake NIC, the plan), a flow
# given as words, the engine's refusal of --zero-copy on a driver without it, the
# per-socket mode lines in text and JSON, the hugepages line and the locked-memory
# refusal as an unprivileged user.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require
XPILE=$XT_BUILD/xpile
[ -x "$XPILE" ] || xt_skip "xpile not built: run make"
G=docs/nic.md
st_ns A nic
st_ns B peer
xt_veth "$A" eth1 "$B" p1
L() { st_loader "$A" "$@"; }
# in_guide TEXT: the guide quotes it (so a change of wording fails here first)
in_guide() { grep -qF -- "$1" "$G" || xt_fail "docs/nic.md no longer says '$1'"; }

# 1. features
out=$(L features eth1) || xt_fail "features: $out"
for l in "eth1 (XDP features reported by the kernel)" "  native XDP          yes" \
	"  AF_XDP zero-copy    no (copy mode)" "  multi-buffer        " "  channels            rx " \
	"  RSS indirection     " "  ntuple filters      "; do
	grep -qF -- "$l" <<<"$out" || xt_fail "features does not print '$l': $out"
done
for l in "eth1 (XDP features reported by the kernel)" "native XDP          yes" \
	"AF_XDP zero-copy    yes" "AF_XDP zero-copy  no (copy mode)" "native XDP  no (use --mode skb)" \
	"(XDP features probed by attaching)"; do
	in_guide "$l"
done
L features --json eth1 | jq -e 'has("xsk_zerocopy") and .features_from_netlink == true and
	has("combined")' >/dev/null || xt_fail "features --json"

# 3. wire: on veth, then RSS and a flow on the fake NIC
out=$(L wire eth1 --queues 0 --cores 1) || xt_fail "wire: $out"
for l in "eth1: wiring 1 queue to 1 core" "  channels: " "  irq: skipped, eth1 has no device IRQs" \
	"  plan: written to /run/xpile/"; do
	grep -qF -- "$l" <<<"$out" || xt_fail "wire does not print '$l': $out"
done
in_guide "eth1: wiring 4 queues to 4 cores"
in_guide "irq: skipped, eth1 has no device IRQs"
F() { st_fakenic "$A" "$@"; }
out=$(F wire lo --queues 0 --cores 0) || xt_fail "wire on the fake NIC: $out"
grep -qE "^  rss: [0-9]+-entry indirection table spread over queues 0 \([0-9]+ entries each\)$" <<<"$out" ||
	xt_fail "wire's RSS line: $out"
in_guide "rss: N-entry indirection table spread over queues 0,1,2,3 (N/4 entries each)"
out=$(F wire lo --flow udp dport 4789 queue 2) || xt_fail "--flow as words: $out"
grep -qE "^lo: flow id [0-9]+ added: ip udp dport 4789 queue 2$" <<<"$out" || xt_fail "--flow said '$out'"
in_guide "flow id N added: ip udp dport 4789 queue 2"
in_guide "xpile-loader wire eth1 --flow udp dport 4789 queue 2"

# 4, 6 (refused). --zero-copy where the driver has none: one line, exit 1.
ip netns exec "$A" "$XPILE" run --iface eth1 --cores 1 --mode rxdrop --zero-copy --duration 1 \
	>"$XT_TMP/zc.out" 2>"$XT_TMP/zc.err"
rc=$?
[ $rc = 1 ] && grep -qx "xpile: xsk: eth1 does not support zero-copy; use --copy (or auto)" "$XT_TMP/zc.err" ||
	xt_fail "--zero-copy on veth: exit $rc, $(cat "$XT_TMP/zc.err")"
in_guide "xsk: eth1 does not support zero-copy; use --copy (or auto)"

# 5. The mode per socket, in text and in JSON; the ready line; the hugepages line.
ip netns exec "$A" "$XPILE" run --iface eth1 --cores 1 --mode rxdrop --duration 0.5 \
	>"$XT_TMP/run.out" 2>"$XT_TMP/run.err" || xt_fail "xpile run: $(cat "$XT_TMP/run.err")"
grep -qx "xpile: eth1:0 on core 1: copy mode, need_wakeup" "$XT_TMP/run.err" ||
	xt_fail "no socket line: $(cat "$XT_TMP/run.err")"
in_guide "xpile: eth1:0 on core 2: zero-copy mode, need_wakeup"
grep -qE "^xpile: ready: 1 socket\(s\), 1 worker\(s\), [0-9]+ frames, interleaved layout \(stride 2112, .*(2 MiB|4 KiB) pages$" \
	"$XT_TMP/run.err" || xt_fail "no ready line: $(cat "$XT_TMP/run.err")"
if grep -q "hugepages" "$XT_TMP/run.err"; then
	grep -qE "^xpile: [0-9]+ free 2 MiB hugepages, [0-9]+ needed for the UMEM; using 4 KiB pages \(for hugepages: echo [0-9]+ > /proc/sys/vm/nr_hugepages\)$" \
		"$XT_TMP/run.err" || xt_fail "the hugepages line: $(grep hugepages "$XT_TMP/run.err")"
fi
in_guide "xpile: 0 free 2 MiB hugepages, 7 needed for the UMEM; using 4 KiB pages (for hugepages: echo 7 > /proc/sys/vm/nr_hugepages)"
ip netns exec "$A" "$XPILE" run --iface eth1 --cores 1 --mode rxdrop --duration 0.5 --json \
	>"$XT_TMP/run.json" 2>/dev/null || xt_fail "xpile run --json"
jq -s -e 'map(select(.type == "socket"))[0] | .port == "eth1" and .queue == 0 and .zerocopy == false and
	.need_wakeup == true and has("multi_buffer")' "$XT_TMP/run.json" >/dev/null ||
	xt_fail "the socket object: $(grep socket "$XT_TMP/run.json")"
in_guide '{"type":"socket","port":"eth1","queue":0,"core":2,"zerocopy":true,"need_wakeup":true,"multi_buffer":false}'

# 6. Locked memory: an unprivileged engine under a 1 MiB limit, on the loader's program.
L load --mode skb eth1 >/dev/null || xt_fail "load"
ip netns exec "$A" prlimit --memlock=1048576:1048576 setpriv --reuid 65534 --regid 65534 \
	--clear-groups --inh-caps=+net_raw --ambient-caps=+net_raw \
	"$XPILE" run --iface eth1 --mode rxdrop --attach-existing --duration 1 >/dev/null 2>"$XT_TMP/ml.err"
rc=$?
[ $rc = 1 ] && grep -qE "^xpile: umem: RLIMIT_MEMLOCK is 1048576 bytes but the UMEM needs [0-9]+ \(the kernel pins it\); raise it \(ulimit -l [0-9]+, or LimitMEMLOCK=infinity in a systemd unit\) or grant CAP_IPC_LOCK \(run as root\)$" \
	"$XT_TMP/ml.err" || xt_fail "memlock: exit $rc, $(cat "$XT_TMP/ml.err")"
in_guide "xpile: umem: RLIMIT_MEMLOCK is 1048576 bytes but the UMEM needs"
L unload eth1 >/dev/null || xt_fail "unload"
L unload lo >/dev/null || xt_fail "unload lo (the fake NIC's plan)"
st_no_trace "$A" eth1 || xt_fail "something left on eth1"
echo "docs/nic.md: every checked line is what the commands print"
echo PASS
