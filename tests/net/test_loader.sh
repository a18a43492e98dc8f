#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-loader end to end, every command in its own `ip netns exec`: help pages, errors
# that name cause and fix, ownership (--force), modes, two namespaces with the same
# interface name, rules from files, stats, wire and its plan, features, and cleanup.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require

st_ns A one
st_ns B two
xt_veth "$A" x0 "$B" x0 # the same name on both sides
L() { st_loader "$@"; }
expect_fail() { # ns pattern args...
	local ns=$1 pat=$2 out
	shift 2
	if out=$(L "$ns" "$@" 2>&1); then xt_fail "'$*' succeeded, expected failure"; fi
	echo "$out" | grep -qi -- "$pat" || xt_fail "'$*' said '$out', expected '$pat'"
}

# Help pages and usage errors.
for c in load unload status stats rule wire features; do
	"$LOADER" "$c" --help | grep -q "^    xpile-loader $c " || xt_fail "$c --help"
done
"$LOADER" --help | grep -q "^COMMANDS" || xt_fail "--help"
"$LOADER" frobnicate 2>&1 | grep -q "unknown command" || xt_fail "unknown command"
"$LOADER" load --bogus x0 2>/dev/null && xt_fail "unknown option accepted"

# Errors name the cause and the fix.
expect_fail "$A" "not found" load nosuch0
expect_fail "$A" "expected native, skb or auto" load --mode bogus x0
expect_fail "$A" "not loaded" rule list x0
expect_fail "$A" "not loaded" stats x0
XPILE_BPFFS=/tmp expect_fail "$A" "XPILE_BPFFS=/tmp is not a bpffs" load x0
if command -v setpriv >/dev/null; then
	out=$(ip netns exec "$A" setpriv --inh-caps=-all --bounding-set=-all "$LOADER" load x0 2>&1) &&
		xt_fail "load without capabilities succeeded"
	echo "$out" | grep -q "CAP_NET_ADMIN.*run as root" || xt_fail "missing capability not named: $out"
fi

# A program we do not own is kept unless --force.
ip -n "$A" link set dev x0 xdpgeneric obj "$XT_BUILD/bpf/redirect_min.o" sec xdp ||
	xt_fail "cannot attach a foreign program with ip"
expect_fail "$A" "--force" load x0
L "$A" load --force x0 >/dev/null || xt_fail "load --force failed"
L "$A" status x0 | grep -q "xpile: 0 rules" || xt_fail "status after --force"
expect_fail "$A" "already loaded" load x0

# Same interface name in another namespace: its own program, pins and rules.
L "$B" load --mode skb x0 >/dev/null || xt_fail "load in the second namespace"
L "$B" status --json x0 | grep -q '"mode":"skb"' || xt_fail "skb mode not shown"
L "$A" rule add x0 udp dport 53 action drop >/dev/null || xt_fail "rule add A"
L "$B" rule add x0 tcp sport 1-1023 action pass >/dev/null || xt_fail "rule add B"
L "$A" rule list x0 | grep -q "udp dport 53 action drop" || xt_fail "A lost its rule"
L "$B" rule list x0 | grep -q "udp dport 53" && xt_fail "B sees A's rule"
[ "$(st_pin_dir "$A" x0)" != "$(st_pin_dir "$B" x0)" ] || xt_fail "pin dirs collide"
for ns in "$A" "$B"; do
	[ -e "$(st_pin_dir "$ns" x0)/xp_xsks" ] || xt_fail "pins missing in $ns"
done

# No native XDP (dummy): the error suggests skb, and auto falls back to it.
if ip -n "$A" link add xd0 type dummy 2>/dev/null; then
	ip -n "$A" link set xd0 up
	expect_fail "$A" "use --mode skb" load --mode native xd0
	L "$A" load xd0 | grep -q "skb mode" || xt_fail "auto did not fall back to skb"
	L "$A" unload xd0 >/dev/null || xt_fail "unload xd0"
	st_no_trace "$A" xd0 || xt_fail "xd0 traces"
fi

# Rules: file replace (atomic, whole set), errors by line, delete by id, defaults.
printf '# comment\nprio 5 src 198.18.0.0/15 action drop\n\nqueue 0 vlan 7 ipv6 dst 2001:db8::/32 action xsk slot 3\nsport 1000-2000 action tx\n' \
	>"$XT_TMP/ok.rules"
L "$A" rule replace x0 "$XT_TMP/ok.rules" | grep -q "3 rules in force" || xt_fail "replace"
L "$A" rule list x0 | grep -q "udp dport 53" && xt_fail "replace kept an old rule"
printf 'udp dport 1 action drop\nudp dport 99999 action drop\n' >"$XT_TMP/bad.rules"
expect_fail "$A" "line 2" rule replace x0 "$XT_TMP/bad.rules"
[ "$(L "$A" rule list x0 | grep -c '^id')" = 3 ] || xt_fail "a failed replace changed the rules"
id=$(L "$A" rule list --json x0 | grep -o '"id":[0-9]*,"rule":"prio [0-9]* sport 1000-2000' | grep -o '[0-9]*' | head -1)
L "$A" rule del x0 "$id" || xt_fail "rule del $id"
expect_fail "$A" "no rule with id" rule del x0 "$id"
L "$A" rule default x0 drop || xt_fail "rule default"
L "$A" rule list x0 | grep -q "default action drop" || xt_fail "default not shown"
expect_fail "$A" "unknown action" rule add x0 udp action fly

# Stats: counters and --watch bounded by --count.
L "$A" stats --json x0 | grep -q '"xsk_nosock_packets":' || xt_fail "stats --json"
[ "$(L "$A" stats --watch --interval 1 --count 2 --json x0 | wc -l)" = 2 ] || xt_fail "stats --watch"

# Features: probed, with the dispatcher verdict and its reason.
f=$(L "$A" features --json x0) || xt_fail "features"
echo "$f" | grep -q '"native_xdp":true' || xt_fail "veth native XDP not detected: $f"
echo "$f" | grep -q '"dispatcher":' || xt_fail "no dispatcher verdict: $f"
L "$A" features x0 | grep -q "libxdp dispatcher" || xt_fail "features text"

# Wire: veth has no IRQs and may refuse channels; the plan is written regardless, next
# to nothing in /sys, so another `ip netns exec` (the engine) finds it.
w=$(L "$A" wire --queues 0 --cores 1 x0) || xt_fail "wire"
echo "$w" | grep -q "irq: skipped" || xt_fail "wire did not say what it skipped: $w"
plan="/run/xpile/ns$(st_ns_ino "$A")/x0/wire.plan"
grep -q "^0 1$" "$plan" || xt_fail "plan $plan: $(cat "$plan" 2>&1)"
expect_fail "$A" "--cores 4096: .*this machine has" wire --queues 0 --cores 4096 x0

# Unload: nothing attached, pinned or planned; B untouched until its own unload.
L "$A" unload x0 >/dev/null || xt_fail "unload A"
st_no_trace "$A" x0 || xt_fail "unload A left traces"
L "$B" rule list x0 | grep -q "tcp sport 1-1023" || xt_fail "unloading A hurt B"
L "$B" unload x0 >/dev/null || xt_fail "unload B"
st_no_trace "$B" x0 || xt_fail "unload B left traces"
L "$B" unload x0 | grep -q "not loaded" || xt_fail "second unload"
echo ok
