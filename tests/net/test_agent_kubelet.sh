#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The agent as a kubelet device plugin (Device Plugin API v1beta1), with a real gRPC
# stack as the kubelet: Debian's python3-grpcio, then Go's grpc (tests/harness/kubelet.*).
# For each:
#  - the agent registers one resource per pool (xpile.io/xsk, xpile.io/one), version
#    v1beta1, GetPreferredAllocation offered; ListAndWatch lists one device per RX queue
#    (b1:0 b1:1 b2:0 b2:1; b0:0), Healthy, with the configured NUMA nodes;
#  - GetPreferredAllocation keeps a pod's queues on one NIC (with room for all of them,
#    around what must be included), else on the NIC's NUMA node;
#  - Allocate gives the socket directory read-only at /tmp/afxdp_dp/NETDEV and
#    AFXDP_DEVICES, AFXDP_DEVICES_<POOL>, XPILE_QUEUES; an unknown device is
#    INVALID_ARGUMENT, an unknown method UNIMPLEMENTED;
#  - a veth peer going down turns that NIC's devices Unhealthy (the others stay
#    Healthy) and back up Healthy, each an update on the open ListAndWatch stream;
#  - the kubelet restarting (its directory emptied, kubelet.sock created anew): every
#    pool is served and registered again; the agent restarting registers again;
#  - figures: registration (Register round trip, the agent's log), re-registration
#    (kubelet.sock created -> Register received, the kubelet's clock), Allocate round
#    trips (200, median/p90/max) for each stack.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
source tests/lib/kubelet.sh
ag_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"
kl_require python
kl_require go

eng_ns A a
eng_ns B b
xt_veth "$A" a0 "$B" b0
eng_veth "$A" a1 "$B" b1 2
eng_veth "$A" a2 "$B" b2 2

ag_dir D
mkdir -p "$D/kl"
cat >"$D/agent.json" <<EOF
{
  "interfaces": [
    {"name": "b0", "queues": 1, "pool": "one"},
    {"name": "b1", "pool": "xsk", "numa_node": 0},
    {"name": "b2", "pool": "xsk", "numa_node": 1}
  ],
  "control": {"path": "$D/ctl.sock"},
  "device_plugin": {"dir": "$D/dp"},
  "kubelet": {"dir": "$D/kl"}
}
EOF

# expect_json WHAT GOT JQ: JQ (a boolean filter) holds for GOT.
expect_json() {
	jq -e "$3" >/dev/null <<<"$2" || xt_fail "$1: $2 (wanted $3)"
}

XSK='{"b1:0":"Healthy","b1:1":"Healthy","b2:0":"Healthy","b2:1":"Healthy"}'
run_stack() { # IMPL
	local impl=$1 m got
	kl_start KL "$impl" "$D/kl"
	m=$(kl_mark KL)
	ag_start AG "$B" "$D/agent.json" --detach-on-exit
	for r in xsk one; do
		got=$(kl_wait KL 10 "$m" "select(.ev == \"register\" and .resource == \"xpile.io/$r\")") ||
			xt_fail "$impl: xpile.io/$r never registered: $(cat "$XT_TMP/AG.log")"
		expect_json "$impl: register" "$got" ".version == \"v1beta1\" and .preferred and .endpoint == \"xpile-$r.sock\""
	done
	got=$(kl_wait KL 10 "$m" 'select(.ev == "devices" and .resource == "xpile.io/xsk")') ||
		xt_fail "$impl: no ListAndWatch list"
	expect_json "$impl: devices" "$got" ".devices == $XSK and .numa == {\"b1:0\":0,\"b1:1\":0,\"b2:0\":1,\"b2:1\":1}"
	got=$(kl_wait KL 10 "$m" 'select(.ev == "devices" and .resource == "xpile.io/one")')
	expect_json "$impl: devices" "$got" '.devices == {"b0:0":"Healthy"} and .numa == {}'

	# One NIC for a pod's queues: the must-have's, the one with room, then its node.
	all=b1:0,b1:1,b2:0,b2:1
	got=$(kl_ask KL preferred "preferred xpile.io/xsk $all b2:0 2")
	expect_json "$impl: preferred around b2:0" "$got" '.ids == ["b2:0","b2:1"]'
	got=$(kl_ask KL preferred "preferred xpile.io/xsk b1:0,b2:0,b2:1 - 2")
	expect_json "$impl: preferred with room" "$got" '.ids == ["b2:0","b2:1"]'
	got=$(kl_ask KL preferred "preferred xpile.io/xsk $all b1:1 3")
	expect_json "$impl: preferred past one NIC" "$got" '(.ids | length) == 3 and .ids[0] == "b1:1" and (.ids | index("b1:0")) != null'

	got=$(kl_ask KL allocate "allocate xpile.io/xsk b1:0,b1:1")
	expect_json "$impl: allocate" "$got" ".envs == {\"AFXDP_DEVICES\":\"b1\",\"AFXDP_DEVICES_XSK\":\"b1\",\"XPILE_QUEUES\":\"b1:0,1\",\"XPILE_UDS\":\"/tmp/afxdp_dp/b1/afxdp.sock\"} and .mounts == [{\"container_path\":\"/tmp/afxdp_dp/b1\",\"host_path\":\"$D/dp/b1\",\"read_only\":true}]"
	got=$(kl_ask KL allocate "allocate xpile.io/xsk b2:1,b1:0,b2:0")
	expect_json "$impl: allocate on two NICs" "$got" '.envs.AFXDP_DEVICES == "b2 b1" and .envs.XPILE_QUEUES == "b2:1,0 b1:0" and (.mounts | length) == 2'
	got=$(kl_ask KL allocate "allocate xpile.io/xsk b9:0")
	expect_json "$impl: allocate unknown" "$got" '.code == "INVALID_ARGUMENT" and (.details | test("no device b9:0"))'
	got=$(kl_ask KL call "call xpile.io/xsk Explode")
	expect_json "$impl: unknown method" "$got" '.code == "UNIMPLEMENTED"'

	# Health: b1's peer down -> b1's queues Unhealthy, b2's stay; up -> Healthy.
	m=$(kl_mark KL)
	ip -n "$A" link set a1 down
	got=$(kl_wait KL 10 "$m" 'select(.ev == "devices" and .resource == "xpile.io/xsk" and .devices["b1:0"] == "Unhealthy")') ||
		xt_fail "$impl: b1 down, no Unhealthy: $(tail -2 "$XT_TMP/KL.ev")"
	expect_json "$impl: b1 down" "$got" '.devices == {"b1:0":"Unhealthy","b1:1":"Unhealthy","b2:0":"Healthy","b2:1":"Healthy"}'
	m=$(kl_mark KL)
	ip -n "$A" link set a1 up
	kl_wait KL 10 "$m" "select(.ev == \"devices\" and .devices == $XSK)" >/dev/null ||
		xt_fail "$impl: b1 up, not Healthy again: $(tail -2 "$XT_TMP/KL.ev")"

	# The kubelet restarts: its directory emptied, kubelet.sock anew -> both again.
	m=$(kl_mark KL)
	kl_cmd KL restart
	for r in xsk one; do
		got=$(kl_wait KL 10 "$m" "select(.ev == \"register\" and .resource == \"xpile.io/$r\")") ||
			xt_fail "$impl: no re-registration of xpile.io/$r after the kubelet restarted: $(tail -5 "$XT_TMP/AG.log")"
		echo "$impl: re-registration of xpile.io/$r $(jq .ms <<<"$got") ms after kubelet.sock was created"
	done
	[ -S "$D/kl/xpile-xsk.sock" ] || xt_fail "$impl: the plugin socket was not served again"
	kl_wait KL 10 "$m" 'select(.ev == "devices" and .resource == "xpile.io/xsk")' >/dev/null ||
		xt_fail "$impl: no ListAndWatch after re-registration"
	got=$(kl_ask KL bench "bench xpile.io/xsk b1:0,b1:1 200")
	echo "$impl: Allocate round trip over 200 calls: median $(jq .median_ms <<<"$got") ms, p90 $(jq .p90_ms <<<"$got") ms, max $(jq .max_ms <<<"$got") ms"

	# The agent restarts: registered again at start.
	ag_stop "$AG" || xt_fail "$impl: agent exit status $?"
	m=$(kl_mark KL)
	kl_wait KL 5 "$((m - 10))" 'select(.ev == "watch_end")' >/dev/null ||
		xt_fail "$impl: ListAndWatch not ended when the agent stopped"
	ag_start AG "$B" "$D/agent.json" --detach-on-exit
	kl_wait KL 10 "$m" 'select(.ev == "register" and .resource == "xpile.io/xsk")' >/dev/null ||
		xt_fail "$impl: the restarted agent did not register"
	grep -o 'xpile.io/xsk: registered with the kubelet .* in [0-9.]* ms' "$XT_TMP/AG.log" |
		sed "s/^/$impl: agent start: /"
	ag_stop "$AG" || xt_fail "$impl: agent exit status $?"
	kl_stop KL
	[ ! -e "$D/kl/xpile-xsk.sock" ] || xt_fail "$impl: the agent left its plugin socket behind"
}

run_stack python
run_stack go
ip -n "$B" link show | grep -q "prog/xdp" && xt_fail "a program left attached: $(ip -n "$B" link show)"
echo "PASS: the kubelet device plugin with python3-grpcio and Go grpc"
