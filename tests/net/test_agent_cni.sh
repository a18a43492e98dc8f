#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-cni (CNI spec 1.0) through Debian's libcni as the runtime (tests/harness/
# cniruntime.go: IgnoreUnknown=1 and the K8S_* args, results cached for CHECK and DEL),
# beside Debian's containernetworking-plugins (the pod's primary network: ptp with
# host-local), the runtime and the agent in the node's namespace B:
#  - VERSION lists 0.3.0..1.0.0;
#  - netdev mode: ADD moves b0 into the pod's namespace under its own name (result:
#    b0, its MAC, the sandbox); the agent takes it as lent: no "interface gone",
#    /readyz 200, and a client in the pod gets the XSKMAP from the agent's socket by
#    the name it sees and receives K of K packets on b0:0; a reload while lent is
#    accepted; CHECK passes, and fails with the reason when b0 is down in the pod;
#    DEL brings b0 back with its program, the agent takes it back; a second DEL
#    succeeds, and so does one after the pod's namespace is gone;
#  - queue mode: ADD moves nothing, CHECK passes, DEL twice succeeds;
#  - bad input: a config without a netdev, with ipam, an unknown CNI_ARGS key without
#    IgnoreUnknown: the spec's error object with the code, exit 1.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
CNI=$XT_BUILD/xpile-cni
[ -x "$CNI" ] || xt_skip "xpile-cni not built: run make"
[ -x /usr/lib/cni/ptp ] || xt_skip "containernetworking-plugins missing: apt-get install containernetworking-plugins"
[ -d /usr/share/gocode/src/github.com/containernetworking/cni/libcni ] ||
	xt_skip "libcni missing: apt-get install golang-github-appc-cni-dev"
command -v go >/dev/null || xt_skip "go missing: apt-get install golang-go"
command -v curl >/dev/null || xt_skip "curl missing: apt-get install curl"

RT=$XT_BUILD/tests/cni/cniruntime
if [ ! "$RT" -nt tests/harness/cniruntime.go ]; then
	mkdir -p "$(dirname "$RT")"
	GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE=${GOCACHE:-$PWD/$XT_BUILD/tests/cni/cache} \
		go build -o "$RT" tests/harness/cniruntime.go || xt_fail "cannot build the libcni runtime"
fi

eng_ns A a
eng_ns B b
eng_ns P pod
xt_veth "$A" a0 "$B" b0
eng_host "$A" a0 198.18.24.1/24
mac=$(ip -n "$B" -o link show b0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$A" neigh add 198.18.24.2 lladdr "$mac" dev a0

ag_dir D
mkdir -p "$D/bin" "$D/cache" "$D/ipam"
cp "$CNI" "$D/bin/xpile-cni"
cat >"$D/agent.json" <<EOF
{
  "interfaces": [
    {"name": "b0", "queues": 1, "default": "pass", "rules": ["udp dport 7000 action xsk"]}
  ],
  "control": {"path": "$D/ctl.sock"},
  "metrics": {"address": "127.0.0.1:9479"},
  "device_plugin": {"dir": "$D/dp", "mode": "0666"}
}
EOF
cat >"$D/pod.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "pod", "plugins": [
  {"type": "ptp", "ipam": {"type": "host-local", "dataDir": "$D/ipam",
                           "ranges": [[{"subnet": "198.18.25.0/24"}]]}}]}
EOF
net() { # NAME MODE -> a conflist as Multus would delegate (deviceID from the plugin)
	cat >"$D/$1.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "$1", "plugins": [
  {"type": "xpile-cni", "mode": "$2", "agent": "$D/ctl.sock", "deviceID": "b0:0"}]}
EOF
}
net xsk netdev
net xskq queue
rt() { # CMD NETNS CONTAINER NETS...
	ip netns exec "$B" env CNI_PATH="$D/bin:/usr/lib/cni" CNI_CACHE="$D/cache" "$RT" "$@"
}
ready() { ip netns exec "$B" curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9479/readyz; }

ag_start AG "$B" "$D/agent.json" --detach-on-exit
PNS=/run/netns/$P
CTR=c0ffee$$

out=$(rt version "$PNS" "$CTR" "$D/xsk.conflist:net1") || xt_fail "VERSION: $out"
grep -qx 'xpile-cni 0.3.0,0.3.1,0.4.0,1.0.0' <<<"$out" || xt_fail "VERSION: $out"

# ADD: the pod's network, then the attachment.
out=$(rt add "$PNS" "$CTR" "$D/pod.conflist:eth0" "$D/xsk.conflist:net1") || xt_fail "ADD: $out"
res=$(sed -n 2p <<<"$out")
jq -e ".interfaces == [{\"name\":\"b0\",\"mac\":\"$mac\",\"sandbox\":\"$PNS\"}]" >/dev/null <<<"$res" ||
	xt_fail "ADD result: $res"
ip -n "$P" link show b0 | grep -q 'prog/xdp' || xt_fail "b0 in the pod without its program: $(ip -n "$P" link show b0)"
ip -n "$B" link show b0 >/dev/null 2>&1 && xt_fail "b0 still on the node"
ip -n "$P" link show eth0 >/dev/null || xt_fail "no eth0 from ptp"
ag_wait_log 5 "$XT_TMP/AG.log" "b0: lent to container" || xt_fail "not lent: $(cat "$XT_TMP/AG.log")"
sleep 1.2 # a tick: the watch has looked
grep -q "interface gone" "$XT_TMP/AG.log" && xt_fail "the agent took the lent netdev for gone"
[ "$(ready)" = 200 ] || xt_fail "/readyz $(ready) while b0 is lent"
echo "ADD: b0 in the pod with its program; the agent: lent, /readyz 200"

# The pod's client: the map by the name it sees, a socket on b0:0 in the pod.
K=20
ip netns exec "$P" "$DPCLIENT" -R b0:0 -k $K -t 10 "$D/dp/b0/afxdp.sock" >"$XT_TMP/rx.out" 2>&1 &
RX=$!
xt_wait_for 10 grep -q "in the map" "$XT_TMP/rx.out" || xt_fail "pod client: $(cat "$XT_TMP/rx.out")"
st_udp "$A" 198.18.24.2 7000 $K || xt_fail "sending failed"
wait "$RX" || xt_fail "pod client: $(cat "$XT_TMP/rx.out")"
echo "in the pod: $(tail -1 "$XT_TMP/rx.out") of $K through the agent's socket"

kill -HUP "$AG"
ag_wait_log 5 "$XT_TMP/AG.log" "reloaded" || xt_fail "reload while lent: $(tail -3 "$XT_TMP/AG.log")"

out=$(rt check "$PNS" "$CTR" "$D/pod.conflist:eth0" "$D/xsk.conflist:net1") || xt_fail "CHECK: $out"
ip -n "$P" link set b0 down
out=$(rt check "$PNS" "$CTR" "$D/pod.conflist:eth0" "$D/xsk.conflist:net1") && xt_fail "CHECK passed with b0 down"
grep -q 'CHECK b0: link down' <<<"$out" || xt_fail "CHECK with b0 down: $out"
ip -n "$P" link set b0 up
echo "CHECK: passes; with b0 down: ${out#error: }"

out=$(rt del "$PNS" "$CTR" "$D/pod.conflist:eth0" "$D/xsk.conflist:net1") || xt_fail "DEL: $out"
ip -n "$B" link show b0 | grep -q 'prog/xdp' || xt_fail "b0 back without its program"
ag_wait_log 5 "$XT_TMP/AG.log" "b0: back from container" || xt_fail "not reclaimed: $(tail -3 "$XT_TMP/AG.log")"
[ "$(ready)" = 200 ] || xt_fail "/readyz $(ready) after DEL"
out=$(rt del "$PNS" "$CTR" "$D/pod.conflist:eth0" "$D/xsk.conflist:net1") || xt_fail "second DEL: $out"
ip netns del "$P"
out=$(rt del "$PNS" "$CTR" "$D/pod.conflist:eth0" "$D/xsk.conflist:net1") || xt_fail "DEL without the namespace: $out"
echo "DEL: b0 back with its program, reclaimed; DEL again and without the namespace: ok"

# Queue mode: nothing moves.
eng_ns Q podq
QNS=/run/netns/$Q
out=$(rt add "$QNS" "q$CTR" "$D/xskq.conflist:net1") || xt_fail "queue ADD: $out"
jq -e '(.interfaces // []) == []' >/dev/null <<<"$(head -1 <<<"$out")" || xt_fail "queue ADD result: $out"
ip -n "$B" link show b0 >/dev/null || xt_fail "queue mode moved b0"
out=$(rt check "$QNS" "q$CTR" "$D/xskq.conflist:net1") || xt_fail "queue CHECK: $out"
for _ in 1 2; do
	out=$(rt del "$QNS" "q$CTR" "$D/xskq.conflist:net1") || xt_fail "queue DEL: $out"
done
echo "queue mode: ADD moves nothing, CHECK ok, DEL twice ok"

# Bad input: the spec's error object, exit 1.
bad() { # WANT-CODE WANT-TEXT CONFIG [ARGS]
	local got rc
	got=$(ip netns exec "$B" env CNI_COMMAND=ADD CNI_CONTAINERID=x CNI_NETNS="$QNS" CNI_IFNAME=net1 \
		CNI_PATH="$D/bin" CNI_ARGS="${4:-}" "$CNI" <<<"$3" 2>/dev/null)
	rc=$?
	[ $rc = 1 ] && jq -e ".code == $1 and (.msg | test(\"$2\"))" >/dev/null <<<"$got" ||
		xt_fail "bad input ($2): exit $rc, $got"
}
bad 7 'no netdev' '{"cniVersion":"1.0.0","name":"n","type":"xpile-cni"}'
bad 7 'ipam' '{"cniVersion":"1.0.0","name":"n","type":"xpile-cni","netdev":"b0","ipam":{}}'
bad 1 'cniVersion 9.9.9 not supported' '{"cniVersion":"9.9.9","name":"n","type":"xpile-cni","netdev":"b0"}'
bad 4 'unknown key FOO' '{"cniVersion":"1.0.0","name":"n","type":"xpile-cni","netdev":"b0"}' 'FOO=1'
bad 6 'not a JSON object' '{"cniVersion":'
bad 101 'does not serve b9' '{"cniVersion":"1.0.0","name":"n","type":"xpile-cni","netdev":"b9","agent":"'"$D"'/ctl.sock"}'
echo "bad input: one error object each, with the spec's codes"

ag_stop "$AG" || xt_fail "agent exit status $?: $(cat "$XT_TMP/AG.log")"
st_no_trace "$B" b0 || xt_fail "b0 not clean after --detach-on-exit"
echo "PASS"
