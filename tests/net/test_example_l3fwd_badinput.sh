#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# l3fwd's route file, wrong in each way it can be: every error is one line on stderr
# naming FILE:LINE, what is wrong and the fix, exit status 2, and nothing attached to
# the ports (the table is read before the engine exists). A good file in DPDK's own
# format (its lpm_default_v4.cfg shape) and in xpile's is taken.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/examples.sh
ex_require l3fwd

eng_ns E eng
eng_ns P peer
xt_veth "$E" e1 "$P" p1
xt_veth "$E" e2 "$P" p2
eng_quiet "$E" e1
eng_quiet "$E" e2
f=$XT_TMP/routes.cfg

case_bad() { # what line-pattern file-content...
	local what=$1 want=$2 rc n
	shift 2
	printf '%s\n' "$@" >"$f"
	ip netns exec "$E" "$EXAMPLES/l3fwd" --iface e1 --iface e2 --routes "$f" --duration 1 \
		>"$XT_TMP/out" 2>"$XT_TMP/err"
	rc=$?
	n=$(wc -l <"$XT_TMP/err")
	echo "$what: exit $rc: $(cat "$XT_TMP/err")"
	[ "$rc" = 2 ] || xt_fail "$what: exit status $rc, not 2"
	[ "$n" = 1 ] || { cat "$XT_TMP/err"; xt_fail "$what: $n lines on stderr, not one"; }
	grep -q "^l3fwd: $f$want" "$XT_TMP/err" || xt_fail "$what: the line does not name $f$want"
	grep -q '; ' "$XT_TMP/err" || xt_fail "$what: no fix in the line"
	eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "$what: XDP attached"
	[ -z "$(ip netns exec "$E" ss --xdp -a -H)" ] || xt_fail "$what: an AF_XDP socket stayed"
}

case_bad "bad address" ":2: '198.18.300.0' is not an IPv4 address" '# ok so far' 'route 198.18.300.0/24 1'
case_bad "bad length" ":3: prefix length '33' out of range" '' 'R198.18.1.0/24 1' 'route 198.18.2.0/33 1'
case_bad "bad IPv6" ":1: '2001:2::zz' is not an IPv6 address" 'route 2001:2::zz/64 0'
case_bad "no such port" ":1: port '7' is not one of the 2 --iface" 'route 198.18.1.0/24 7'
case_bad "duplicate" ":2: 198.18.1.0/24 already routed to port 0" 'route 198.18.1.0/24 0' 'route 198.18.1.0/24 1'
case_bad "not a route" ":1: not a route; write 'route PREFIX/LEN PORT'" 'via 198.18.1.1'
case_bad "extra word" ":1: not a route; write 'route PREFIX/LEN PORT'" 'route 198.18.1.0/24 1 metric'
case_bad "no prefix length" ":1: '198.18.1.0' is not a prefix" 'route 198.18.1.0 1'
case_bad "no routes" ": no routes" '# nothing here' ''
rm -f "$f"
ip netns exec "$E" "$EXAMPLES/l3fwd" --iface e1 --routes "$f" 2>"$XT_TMP/err"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$XT_TMP/err")" = 1 ] && grep -q "^l3fwd: $f: No such file" "$XT_TMP/err" ||
	xt_fail "missing route file: exit $rc: $(cat "$XT_TMP/err")"

# Good files: DPDK's format and xpile's, both families, a comment and blank lines.
printf '%s\n' '# DPDK lpm_default_v4.cfg style' 'R198.18.0.0/24 0' 'R198.18.1.0/24 1' '' \
	'R2001:0002:0000:0001:0000:0000:0000:0000/64 1' 'route 198.18.64.0/18 1 # a comment' \
	'route ::/0 0' >"$f"
ip netns exec "$E" "$EXAMPLES/l3fwd" --iface e1 --iface e2 --routes "$f" --duration 1 \
	>"$XT_TMP/out" 2>"$XT_TMP/err" || xt_fail "a good route file refused: $(cat "$XT_TMP/err")"
grep -q '^l3fwd forwarded=' "$XT_TMP/out" || xt_fail "no closing line: $(cat "$XT_TMP/out" "$XT_TMP/err")"
eng_no_xdp "$E" e1 && eng_no_xdp "$E" e2 || xt_fail "XDP left attached after a clean run"
echo ok
