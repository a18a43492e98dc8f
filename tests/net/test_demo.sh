#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The README's main command, reduced: tools/setup/demo.sh with DEMO_QUICK=1 runs to the
# end (every ping answered, the iperf3 TCP stream completes through xpile fwd, the engine
# exits cleanly after its ledger audit) and leaves nothing behind: no namespace, no
# process, no temporary file of its own.
set -u
cd "$(dirname "$0")/../.." || exit 1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, XDP, AF_XDP): run as root"; exit 77; }
build=${XPILE_BUILD:-build}
for t in iperf3 ping ethtool; do
	command -v $t >/dev/null || { echo "SKIP: $t missing: tools/setup/install-deps.sh"; exit 77; }
done
[ -x "$build/xpile" ] || { echo "SKIP: $build/xpile not built yet: make"; exit 77; }

fail() { echo "FAIL: $*"; exit 1; }
# shellcheck disable=SC2012 # our own names; ls -d prints nothing when none match
before_tmp=$(ls -d /tmp/xpile-demo-* 2>/dev/null | sort)
# shellcheck disable=SC2012 # our own names; ls -d prints nothing when none match
pins() { ls -d /sys/fs/bpf/xpile/*/xa /sys/fs/bpf/xpile/*/xb 2>/dev/null | sort; }
before_pins=$(pins)

out=$(DEMO_QUICK=1 timeout --kill-after=5 50 tools/setup/demo.sh 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "demo exited with status $rc"
grep -q 'demo OK: 3/3 pings answered, iperf3 TCP [0-9.]* [MG]bits/sec through xpile (ledger clean)' <<<"$out" ||
	fail "no 'demo OK' verdict"
grep -q '\[xpile\] .*xa:0 rx' <<<"$out" || fail "no live engine line in the output"
grep -q '\[xpile\] .*ledger: ok' <<<"$out" || fail "no clean ledger audit from the engine"
grep -q 'receiver' <<<"$out" || fail "iperf3 printed no receiver summary"

# Nothing left behind: its namespaces xp<pid>-{h1,xp,h2}, processes, temporary files,
# bpffs pins (the engine pins under /sys/fs/bpf/xpile/ns<netns inode>/<ifname>).
sleep 0.5
# shellcheck disable=SC2012 # our own names; ls -d prints nothing when none match
[ "$(ls -d /tmp/xpile-demo-* 2>/dev/null | sort)" = "$before_tmp" ] || fail "temporary files left"
id=$(sed -n 's/.*h1 (\(xp[0-9]*\)-h1).*/\1/p' <<<"$out" | head -1)
[ -n "$id" ] || fail "the demo did not name its namespaces"
ip netns list | grep -q "^$id-" && fail "namespaces $id-* left behind"
pgrep -f "xpile run --iface xa --iface xb" >/dev/null && fail "engine left running"
[ "$(pins)" = "$before_pins" ] || fail "bpffs pins left: $(comm -13 <(echo "$before_pins") <(pins))"
echo "ok: demo ran to completion and cleaned up"
