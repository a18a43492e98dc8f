#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine API's punt (xp_pkt_punt): a burst callback that hands every packet to the
# host through the port's TAP (.host_taps, xpile/engine.h), from a program built on the
# public headers and libxpile.so alone. A pings the address the TAP holds in B, through
# a MAC that is not the port's: the callback writes the port's in and punts, so the
# requests go up by the callback's punt, the replies come down by the TAP's inject;
# every ping answered, the callback punted packets, the exit audit passes, nothing is
# left attached and the TAP is gone.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
source tests/lib/engapi.sh
api_require
[ -c /dev/net/tun ] || xt_skip "/dev/net/tun missing: modprobe tun"

eng_pair
eng_host "$A" a0 198.18.2.1/24
# Not b0's MAC: what is addressed to the port the engine punts before any callback.
ip -n "$A" neigh add 198.18.2.3 lladdr 02:00:00:00:00:33 dev a0
api_start punt 5
tap=$(ip -n "$B" -o link show | grep -o 'xp-b0' | head -1)
[ -n "$tap" ] || { cat "$XT_TMP/api.err"; xt_fail "no TAP xp-b0 in B"; }
eng_quiet "$B" xp-b0
ip -n "$B" addr add 198.18.2.3/24 dev xp-b0
ip -n "$B" link set xp-b0 up
got=$(eng_pings 10 198.18.2.3)
api_wait || { rc=$?; cat "$XT_TMP/api.err"; xt_fail "engapi exited $rc"; }
cat "$XT_TMP/api.out"
[ "$got" = 10 ] || { cat "$XT_TMP/api.err"; xt_fail "$got of 10 pings answered through the punt"; }
[ "$(api_field rx)" -ge 10 ] || xt_fail "the callback punted $(api_field rx) packets"
[ "$(api_field run)" = 0 ] || { cat "$XT_TMP/api.err"; xt_fail "xp_engine_run returned $(api_field run)"; }
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
eng_tap_gone "$B" xp-b0 || xt_fail "the TAP xp-b0 stayed 5 s after the exit"
echo ok
