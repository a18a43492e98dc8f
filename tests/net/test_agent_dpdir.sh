#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The device-plugin sockets against careless or hostile neighbours (issue 21):
#  - a directory another user made (uid 65534, world-writable, under a sticky
#    world-writable parent as /tmp is), a root-owned one others may write, a symbolic
#    link in the path, a file where a directory belongs: the agent refuses each with
#    one line naming the path, why, and the fix, exit 1, before it attaches anything;
#  - the same on the default path shape, /tmp/afxdp_dp/NETDEV, in a /tmp of its own;
#  - mode 0660 with a group from the config: the socket has both from the start; a
#    user outside the group is refused (connect: EACCES), one inside gets the map;
#  - a socket swapped in behind the agent: status and /readyz say so, and at exit the
#    agent leaves it (it removes only the file it bound).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
command -v setpriv >/dev/null || xt_skip "setpriv missing: apt-get install util-linux"

eng_pair
ag_dir D
AGENT=$(realpath "$AGENT")
# Run as nobody: from a place nobody may read (a checkout under /root may not be).
cp "$DPCLIENT" "$D/dpclient" && chmod 755 "$D/dpclient" && DPCLIENT=$D/dpclient
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
cfg() { # FILE DP-DIR [DP-EXTRA]
	printf '%s\n' "{\"interfaces\": [{\"name\": \"b0\", \"default\": \"pass\"}]," \
		" \"control\": {\"path\": \"$D/ctl.sock\"}," \
		" \"device_plugin\": {\"dir\": \"$2\"${3:+, $3}}}" >"$1"
}
# refused DP-DIR LINE: the agent exits 1 with exactly LINE, nothing attached.
refused() {
	cfg "$D/c.json" "$1"
	ip netns exec "$B" timeout 10 "$AGENT" run --config "$D/c.json" >"$D/out" 2>"$D/err"
	rc=$?
	[ $rc = 1 ] && [ ! -s "$D/out" ] && [ "$(cat "$D/err")" = "$2" ] ||
		xt_fail "device_plugin.dir $1: exit $rc: got '$(cat "$D/out" "$D/err")', want '$2'"
	st_no_trace "$B" b0 || xt_fail "device_plugin.dir $1: the refused agent left something"
	echo "refused: $(cat "$D/err")"
}

# A /tmp of the test's own: sticky and world-writable. uid 65534 makes the agent's
# directory before it starts, world-writable, ready to swap its own socket in.
mkdir -m 1777 "$D/tmp"
nobody mkdir -m 0777 "$D/tmp/afxdp_dp" "$D/tmp/afxdp_dp/b0" || xt_fail "nobody cannot mkdir"
refused "$D/tmp/afxdp_dp" "xpile-agent: b0: device-plugin socket: $D/tmp/afxdp_dp is owned by uid 65534, not by the agent (uid 0) or root: remove it (or make it root's, mode 0755)"
[ -z "$(ls -A "$D/tmp/afxdp_dp/b0")" ] || xt_fail "the agent put something in nobody's directory"
# Root's, but others may write it (a careless chmod 777).
mkdir -p "$D/ww/b0" && chmod 0777 "$D/ww/b0"
refused "$D/ww" "xpile-agent: b0: device-plugin socket: $D/ww/b0 is writable by others (mode 0777): remove it (or make it root's, mode 0755)"
mkdir -p "$D/gw" && chmod 0775 "$D/gw"
refused "$D/gw" "xpile-agent: b0: device-plugin socket: $D/gw is writable by its group (mode 0775): remove it (or make it root's, mode 0755)"
# A symbolic link, at the netdev or above it; a file where a directory goes.
mkdir -p "$D/elsewhere" "$D/ln"
ln -s "$D/elsewhere" "$D/ln/b0"
refused "$D/ln" "xpile-agent: b0: device-plugin socket: $D/ln/b0 is a symbolic link: the agent follows none; remove it"
ln -s "$D/elsewhere" "$D/up"
refused "$D/up/dp" "xpile-agent: b0: device-plugin socket: $D/up is a symbolic link: the agent follows none; remove it"
[ -z "$(ls -A "$D/elsewhere")" ] || xt_fail "the agent followed a link: $(ls -A "$D/elsewhere")"
mkdir -p "$D/file" && : >"$D/file/b0"
refused "$D/file" "xpile-agent: b0: device-plugin socket: $D/file/b0 is not a directory: remove it"

# The default path shape, /tmp/afxdp_dp/b0, in a /tmp of its own (ip netns exec runs in
# a mount namespace of its own: the tmpfs goes with it).
# shellcheck disable=SC2016 # expanded by the inner shell
out=$(ip netns exec "$B" bash -c '
	mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 9
	setpriv --reuid=65534 --regid=65534 --clear-groups -- mkdir -m 0777 -p /tmp/afxdp_dp/b0
	printf "{\"interfaces\": [{\"name\": \"b0\"}], \"control\": {\"path\": \"/tmp/ctl.sock\"}}" >/tmp/c.json
	timeout 10 "$1" run --config /tmp/c.json 2>&1
	echo "exit $?"
	rm -r /tmp/afxdp_dp
	timeout 10 "$1" run --config /tmp/c.json --detach-on-exit 2>/tmp/log &
	for _ in $(seq 50); do grep -q ready: /tmp/log && break; sleep 0.1; done
	stat -c "%U %a" /tmp/afxdp_dp /tmp/afxdp_dp/b0 /tmp/afxdp_dp/b0/afxdp.sock
	kill -TERM $!
	wait $!
	echo "exit $?"' _ "$AGENT")
want="xpile-agent: b0: device-plugin socket: /tmp/afxdp_dp is owned by uid 65534, not by the agent (uid 0) or root: remove it (or make it root's, mode 0755)
exit 1
root 755
root 755
root 660
exit 0"
[ "$out" = "$want" ] || xt_fail "the default path: got
$out
want
$want"
st_no_trace "$B" b0 || xt_fail "the default path: left something"
echo "default path /tmp/afxdp_dp/b0 made by uid 65534: refused; made by the agent: root 755, socket 660"

# Mode 0660 and a group: outside it, connect is refused (EACCES); inside, the map.
cfg "$D/agent.json" "$D/dp" '"mode": "0660", "group": 4242'
ag_start AG "$B" "$D/agent.json" --detach-on-exit
S=$D/dp/b0/afxdp.sock
[ "$(stat -c '%a %g' "$S")" = "660 4242" ] || xt_fail "socket mode and group $(stat -c '%a %g' "$S"), want 660 4242"
out=$(nobody "$DPCLIENT" "$S" /connect,n 2>&1)
[ $? = 1 ] && [ "$out" = "dpclient: connect $S: Permission denied" ] || xt_fail "a user outside the group: $out"
out=$(setpriv --reuid=65534 --regid=65534 --groups=4242 -- "$DPCLIENT" "$S" /connect,n /xsk_map_fd,b0 /fin 2>&1)
[ "$out" = $'/host_ok\n/fd_ack +fd=xskmap\n/fin_ack' ] || xt_fail "a user in the group: $out"
echo "mode 0660 group 4242: uid 65534 refused (Permission denied), with group 4242 served"

# Someone swaps in a socket of their own: status and /readyz say so; the agent's exit
# leaves it.
ctl() { timeout 10 "$AGENT" ctl --socket "$D/ctl.sock" "$@"; }
[ "$(ctl status | jq '.interfaces[0].dp_socket')" = true ] || xt_fail "dp_socket not true at start"
rm "$S"
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1]); s.listen(1); time.sleep(30)' "$S" &
IMP=$!
XT_PIDS+=("$IMP")
xt_wait_for 3 test -S "$S" || xt_fail "no impostor socket"
ino=$(stat -c %i "$S")
[ "$(ctl status | jq '.interfaces[0].dp_socket')" = false ] || xt_fail "status does not see the swapped socket: $(ctl status)"
why=$(ip netns exec "$B" curl -s -m 2 http://127.0.0.1:9469/readyz)
[ "$why" = "b0: device-plugin socket $S removed or replaced" ] || xt_fail "/readyz: $why"
ag_stop "$AG" || xt_fail "agent exit status $?"
[ -S "$S" ] && [ "$(stat -c %i "$S")" = "$ino" ] || xt_fail "the agent removed the socket it did not bind"
grep -qxF "xpile-agent: b0: device-plugin: $S is not the socket this agent bound (removed or replaced): left as it is" "$XT_TMP/AG.log" ||
	xt_fail "the exit does not say it left the socket: $(tail -3 "$XT_TMP/AG.log")"
kill "$IMP"
st_no_trace "$B" b0 || xt_fail "left behind"
echo "a swapped socket: status dp_socket false, /readyz 503 ($why), left in place at exit"
echo PASS
