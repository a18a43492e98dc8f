#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-loader rule and wire, fed bad rule files and bad rule words: each ends with a
# non-zero exit status, exactly one line on stderr naming the cause, and the rule set in
# force unchanged (a drop rule stays; `rule list` is the same before and after).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/steer.sh
st_require

st_ns A bad
st_ns B peer
xt_veth "$A" b0 "$B" p0
L() { st_loader "$A" "$@"; }

L load b0 >/dev/null || xt_fail "load b0"
xt_on_exit "ip netns exec $A $LOADER unload b0"
L rule add b0 udp dport 9 action drop >/dev/null || xt_fail "rule add"
before=$(L rule list b0) || xt_fail "rule list"
echo "$before" | grep -q "udp dport 9 action drop" || xt_fail "drop rule not in force: $before"

# refused WANT_STATUS PATTERN ARGS...: xpile-loader ARGS exits WANT_STATUS (any non-zero
# for "!0") with one line on stderr matching PATTERN, and the rules in force stay as
# they were.
refused() {
	local want=$1 pat=$2 rc lines after
	shift 2
	L "$@" >"$XT_TMP/out" 2>"$XT_TMP/err"
	rc=$?
	lines=$(wc -l <"$XT_TMP/err")
	echo "$*: exit $rc: $(head -c 300 "$XT_TMP/err")"
	if [ "$want" = '!0' ]; then
		[ "$rc" -ne 0 ] || xt_fail "'$*' exit status 0"
	else
		[ "$rc" -eq "$want" ] || xt_fail "'$*' exit status $rc, want $want"
	fi
	[ "$lines" = 1 ] || { cat "$XT_TMP/err"; xt_fail "'$*': $lines lines on stderr, want 1"; }
	grep -Eq -e "$pat" "$XT_TMP/err" || xt_fail "'$*': message does not match /$pat/"
	after=$(L rule list b0)
	[ "$after" = "$before" ] || xt_fail "'$*' changed the rules: $after"
}

# Item 1: a file whose read fails is an error, not an empty set.
mkdir "$XT_TMP/dir"
refused 2 "cannot read $XT_TMP/dir: Is a directory" rule replace b0 "$XT_TMP/dir"
refused 2 "cannot read /proc/self/mem: " rule replace b0 /proc/self/mem
refused 2 "cannot open $XT_TMP/nosuch: No such file" rule replace b0 "$XT_TMP/nosuch"

# Item 2: a long line is refused naming its number, comments too; under the limit a
# comment is a comment, whatever its tail looks like.
{ echo "udp dport 9 action drop"; printf '# disabled:%5000s action drop\n' ''; } >"$XT_TMP/long"
refused 2 "$XT_TMP/long line 2: longer than 4096 bytes" rule replace b0 "$XT_TMP/long"

# Item 7: a NUL byte.
printf 'udp dport 9 action drop\naction drop\0 udp dport 9\n' >"$XT_TMP/nul"
refused 2 "$XT_TMP/nul line 2: holds a NUL byte" rule replace b0 "$XT_TMP/nul"
refused 2 "cannot|NUL" rule replace b0 - <"$XT_TMP/nul"

# Item 6: more words than a rule has.
{ printf 'action drop'; for ((i = 0; i < 62; i++)); do printf ' ip'; done; echo ' udp dport 22'; } >"$XT_TMP/words"
refused 2 "$XT_TMP/words line 1: more than 64 words" rule replace b0 "$XT_TMP/words"

# A bad rule on a later line: nothing of the file is taken.
printf 'action pass\nudp dport 0443 prio -1 action drop\n' >"$XT_TMP/badline"
refused 2 "line 2: prio: expected a number in 0\.\.4294967295, got '-1'" rule replace b0 "$XT_TMP/badline"

# Item 8: signs in rule words ('--' ends the options, so getopt leaves them alone).
refused 2 "prio: expected a number in 0\.\.4294967295, got '-1'" rule add b0 -- prio -1 action drop
refused 2 "dport: expected PORT or LO-HI .*got '-80'" rule add b0 -- udp dport -80 action drop
refused 2 "xsk slot: expected a number in 0\.\.63, got '-1'" rule add b0 -- action xsk slot -1
refused 2 "rule del: expected a rule id \(a number in 1\.\.4294967295\), got '-1'" rule del b0 -- -1
refused 2 "rule del: expected a rule id .*got 'x'" rule del b0 x

# Item 20: a field given twice.
refused 2 "'action' given twice" rule add b0 action drop action pass
refused 2 "'udp' after 'tcp'" rule add b0 tcp udp action drop

# Item 21: a redirect to an interface that does not exist.
refused 2 "no interface with index 99999" rule add b0 action redirect 99999
refused 2 "no interface 'nosuch0'" rule add b0 action redirect nosuch0

# Item 19: the unknown subcommand and the missing default action are named.
refused 2 "unknown subcommand 'frob': add, del, list, replace or default" rule frob b0
refused 2 "unknown subcommand 'frob': add, del, list, replace or default" rule b0 frob
refused 2 "rule default parse-error: missing action: expected pass, drop, tx, redirect IFNAME, xsk" \
	rule default b0 parse-error
refused 2 "unknown action 'bogus': expected pass, drop" rule default b0 bogus
refused 2 "rule default: unexpected 'extra' after the action" rule default b0 drop extra
refused 2 "--default 'drop extra': 'extra' follows the action" load --default "drop extra" b0
refused 2 "--default 'redirect 99999': redirect: no interface with index 99999" load --default "redirect 99999" b0

# Item 18: more prefixes than the trie holds (1,024 IPv6 /128): one line, no change.
for ((i = 0; i < 1024; i++)); do printf 'dst 2001:db8:%x::%x/128 action drop\n' "$i" "$i"; done >"$XT_TMP/v6"
refused 2 "needs more than 2048 trie blocks for prefixes longer than /16" rule replace b0 "$XT_TMP/v6"

# Item 8: leading zeros are decimal.
L rule add b0 prio 010 udp dport 0443 action pass >/dev/null || xt_fail "rule add 0443"
L rule list b0 | grep -q "prio 10 udp dport 443 action pass" ||
	xt_fail "0443 is not 443: $(L rule list b0)"

# Item 2, the reproducer: the tail of a 1,100-byte comment is not a rule.
{ echo "udp dport 9 action drop"; printf '# disabled:%1100s action drop\n' ''; } >"$XT_TMP/comment"
L rule replace b0 "$XT_TMP/comment" | grep -q "1 rules in force" || xt_fail "comment file"
[ "$(L rule list b0 | grep -c '^id')" = 1 ] || xt_fail "a comment became a rule: $(L rule list b0)"
L rule list b0 | grep -q "udp dport 9 action drop" || xt_fail "the drop rule is gone"
before=$(L rule list b0)

# Item 16: no plan for a queue the interface lacks (veth: one queue).
refused 2 "queue 5.*b0 has 1 RX queue" wire b0 --queues 5 --cores 0
[ ! -e "/run/xpile/ns$(st_ns_ino "$A")/b0/wire.plan" ] || xt_fail "wire wrote a plan for queue 5"
L wire b0 --queues 0 --cores 0 >/dev/null || xt_fail "wire queue 0"
[ -e "/run/xpile/ns$(st_ns_ino "$A")/b0/wire.plan" ] || xt_fail "wire queue 0 wrote no plan"

L unload b0 >/dev/null || xt_fail "unload"
# Only b0's traces: another suite's pins may sit under a reused namespace inode.
ip -n "$A" link show b0 | grep -q xdp && xt_fail "XDP program left on b0"
[ ! -e "$(st_pin_dir "$A" b0)" ] || xt_fail "pins left: $(st_pin_dir "$A" b0)"
[ ! -e "/run/xpile/ns$(st_ns_ino "$A")/b0" ] || xt_fail "wiring plan left"
echo ok
