#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-loader wire in the NIC, on a veth (which has neither an RSS indirection table nor
# ntuple filters): --flow, --flow-del and --flow-list say so in one line naming the
# driver and the ioctl, exit 1 and change nothing (no plan is written, also when asked
# to wire queues in the same run); bad flow text exits 2; wire says it skipped RSS;
# features reports both; --json on wire, unload, features and rule replace is one valid
# object. On a fake NIC that has both tables (preloaded
# ioctl): RSS spread, flows added and listed, a queue it lacks, ntuple switched off.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq (tools/setup/install-deps.sh)"

st_ns A wa
st_ns B wb
xt_veth "$A" f0 "$B" f1
plan="/run/xpile/ns$(st_ns_ino "$A")/f0/wire.plan"
L() { st_loader "$A" "$@"; }

# One line on stderr holding $2, nothing on stdout (with --json: the error object),
# exit status $1, no plan written.
refused() { # status pattern args...
	local want=$1 pat=$2 rc
	shift 2
	L "$@" >"$XT_TMP/out" 2>"$XT_TMP/err"
	rc=$?
	[ "$rc" = "$want" ] || xt_fail "'$*' exited $rc, expected $want: $(cat "$XT_TMP/err")"
	[ "$(wc -l <"$XT_TMP/err")" = 1 ] || xt_fail "'$*' said more than one line: $(cat "$XT_TMP/err")"
	grep -q -- "$pat" "$XT_TMP/err" || xt_fail "'$*' said '$(cat "$XT_TMP/err")', expected '$pat'"
	# With --json, the error again as the one object on stdout; else stdout stays empty.
	if printf '%s\n' "$@" | grep -qx -- --json; then
		jq -e --arg s "$want" '.status == ($s | tonumber) and (.error | type) == "string"' \
			"$XT_TMP/out" >/dev/null || xt_fail "'$*' printed on stdout: $(cat "$XT_TMP/out")"
	else
		[ ! -s "$XT_TMP/out" ] || xt_fail "'$*' printed on stdout: $(cat "$XT_TMP/out")"
	fi
	[ ! -e "$plan" ] || xt_fail "'$*' wrote a plan"
}

lacks="wire: f0 (veth) has no ntuple filters (ETHTOOL_GRXCLSRLCNT: Operation not supported), so it cannot steer a flow to a queue; steer in XDP instead"
refused 1 "$lacks" wire f0 --flow 'udp dport 4789 queue 0'
refused 1 "$lacks" wire f0 --flow 'udp dport 4789 queue 0' --json
refused 1 "$lacks" wire f0 --flow-list
refused 1 "$lacks" wire f0 --flow-del 3 --json
# asked to wire too: the NIC is asked first, nothing is wired
refused 1 "$lacks" wire f0 --queues 0 --cores 0 --flow 'tcp dport 80 queue 0'
# bad flow text, bad ids: usage errors, before the NIC is asked
refused 2 "wire: --flow: missing 'queue N' or 'drop'" wire f0 --flow 'udp dport 4789'
refused 2 "unknown flow word 'vlan'" wire f0 --flow 'udp vlan 3 queue 0'
refused 2 "aligned block" wire f0 --flow 'udp dport 1000-2000 queue 0'
refused 2 "sport and dport need tcp or udp" wire f0 --flow 'dport 53 queue 0'
refused 2 "queue: expected a number, got '-1'" wire f0 --flow 'udp dport 53 queue -1'
refused 2 "expected a flow id.*got 'x1'" wire f0 --flow-del x1
refused 2 "go together" wire f0 --queues 0
refused 2 "go together" wire f0

# Wiring says in one line that the table is not there, and still writes the plan.
out=$(L wire f0 --queues 0 --cores 0) || xt_fail "wire failed: $out"
echo "$out" | grep -q "rss: skipped, f0 (veth) has no RSS indirection table (ETHTOOL_GRXFHINDIR: Operation not supported)" ||
	xt_fail "wire did not say RSS is missing: $out"
[ -e "$plan" ] || xt_fail "wire wrote no plan"
out=$(L wire f0 --queues 0 --cores 0 --no-rss) || xt_fail "wire --no-rss failed"
echo "$out" | grep -q "rss: left as it is (--no-rss)" || xt_fail "--no-rss: $out"

# --json: one object, the same steps, the plan
L wire f0 --queues 0 --cores 0 --json >"$XT_TMP/w.json" || xt_fail "wire --json failed"
[ "$(wc -l <"$XT_TMP/w.json")" = 1 ] || xt_fail "wire --json printed more than one line"
jq -e '.ifname == "f0" and .plan == [{"queue":0,"core":0}] and (.plan_path | endswith("/f0/wire.plan"))
	and ([.steps[].step] | index("rss") != null) and (.rss == null)
	and ([.steps[] | select(.step == "rss") | .says][0] | test("no RSS indirection table"))' \
	"$XT_TMP/w.json" >/dev/null || xt_fail "wire --json: $(cat "$XT_TMP/w.json")"

# features: both missing, in words and in JSON
out=$(L features f0) || xt_fail "features failed"
echo "$out" | grep -q "RSS indirection     no (ETHTOOL_GRXFHINDIR: Operation not supported)" ||
	xt_fail "features RSS: $out"
echo "$out" | grep -q "ntuple filters      no (ETHTOOL_GRXCLSRLCNT: Operation not supported)" ||
	xt_fail "features ntuple: $out"
L features f0 --json | jq -e '.rss == false and .ntuple == false and .rss_table_size == 0 and
	.ntuple_feature == "off-fixed" and .native_xdp != null' >/dev/null || xt_fail "features --json"

# unload --json, loaded and not; rule replace --json says what is in force
L load --mode skb f0 >/dev/null || xt_fail "load"
printf 'udp dport 4789 action drop\ntcp action pass\n' >"$XT_TMP/rules"
L rule replace f0 "$XT_TMP/rules" --json | jq -e '. == {"ifname":"f0","rules":2}' >/dev/null ||
	xt_fail "rule replace --json"
L unload f0 --json | jq -e '. == {"ifname":"f0","unloaded":true}' >/dev/null || xt_fail "unload --json"
[ ! -e "$plan" ] || xt_fail "unload left the plan"
L unload f0 --json | jq -e '.unloaded == false' >/dev/null || xt_fail "unload --json, not loaded"
st_no_trace "$A" f0 || xt_fail "something left on f0"

# A NIC that has both tables (tests/lib/fakenic.h answering SIOCETHTOOL for lo, preloaded
# into the loader): what wire prints when the driver takes what it is given.
F() { st_fakenic "$A" "$@"; }
out=$(F wire lo --queues 0 --cores 0) || xt_fail "wire on the fake NIC: $out"
echo "$out" | grep -q "rss: 128-entry indirection table spread over queues 0 (128 entries each)" ||
	xt_fail "wire did not spread RSS: $out"
out=$(F wire lo --flow 'udp dport 4789 queue 2') || xt_fail "--flow on the fake NIC: $out"
[ "$out" = "lo: flow id 15 added: ip udp dport 4789 queue 2" ] || xt_fail "--flow said '$out'"
F wire lo --flow 'ipv6 tcp dst 2001:db8::/64 dport 443 queue 3 id 2' --flow-list --json |
	jq -e '.flow_added == {"id":2,"flow":"ipv6 tcp dst 2001:db8::/64 dport 443 queue 3"} and
		.flow_table_size == 16 and .flows == [.flow_added]' >/dev/null || xt_fail "--flow --flow-list --json"
F wire lo --flow-list | grep -q "^lo: 0 flows (table of 16)" || xt_fail "--flow-list on an empty table"
out=$(F features lo) || xt_fail "features on the fake NIC"
echo "$out" | grep -q "RSS indirection     yes, 128 entries" || xt_fail "features RSS: $out"
echo "$out" | grep -q "ntuple filters      yes, 0 of 16 in use" || xt_fail "features ntuple: $out"
F wire lo --flow 'udp dport 53 queue 4' 2>"$XT_TMP/err" >/dev/null
[ $? = 2 ] && grep -q "queue 4 does not exist: lo has 4 RX queues; pick a queue below 4" "$XT_TMP/err" ||
	xt_fail "a queue the NIC lacks: $(cat "$XT_TMP/err")"
XPILE_FAKENIC_NTUPLE=off F wire lo --flow 'udp dport 53 queue 1' 2>"$XT_TMP/err" >/dev/null
[ $? = 1 ] && grep -q "lo (fakenic) has ntuple filters switched off; turn them on with 'ethtool -K lo ntuple on'" \
	"$XT_TMP/err" || xt_fail "ntuple off: $(cat "$XT_TMP/err")"
F wire lo --flow-del 3 2>"$XT_TMP/err" >/dev/null
[ $? = 1 ] && grep -q "lo has no flow with id 3" "$XT_TMP/err" || xt_fail "--flow-del of nothing: $(cat "$XT_TMP/err")"

echo ok
