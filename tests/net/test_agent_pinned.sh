#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The pinned-map mode (interfaces[].pinned_map), DPDK's use_pinned_map=1:
#  - the agent gives b0 a bpffs of its own at DIR/b0/bpf holding only xsks_map, the
#    interface's XSKMAP (mode device_plugin.mode), beside DIR/b0/afxdp.sock;
#  - Allocate (python3-grpcio as the kubelet) mounts that file at
#    /tmp/afxdp_dp/b0/xsks_map, DPDK's default path (not the bpffs: the iterators
#    bpf_preload pins in every bpffs would show the pod the host's maps); b1 (no
#    pinned_map) gets its socket directory;
#  - a client in a mount namespace of its own, with the mount as the kubelet makes it,
#    opens /tmp/afxdp_dp/b0/xsks_map, binds an AF_XDP socket to b0:0, puts it in the
#    map and receives K of K packets (tests/harness/dpclient -R);
#  - the agent restarting keeps the pin (the map is adopted with the program); at exit
#    with --detach-on-exit the pin and the bpffs go.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
source tests/lib/kubelet.sh
ag_require
command -v jq >/dev/null || xt_skip "jq missing: apt-get install jq"
command -v nsenter >/dev/null && command -v unshare >/dev/null ||
	xt_skip "nsenter/unshare missing: apt-get install util-linux"
kl_require python

eng_ns A a
eng_ns B b
xt_veth "$A" a0 "$B" b0
xt_veth "$A" a1 "$B" b1
eng_host "$A" a0 198.18.23.1/24
eng_host "$B" b0 198.18.23.2/24
mac=$(ip -n "$B" -o link show b0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$A" neigh add 198.18.23.2 lladdr "$mac" dev a0

ag_dir D
mkdir -p "$D/kl"
cat >"$D/agent.json" <<EOF
{
  "interfaces": [
    {"name": "b0", "queues": 1, "default": "pass", "rules": ["udp dport 7000 action xsk"],
     "pinned_map": true},
    {"name": "b1", "queues": 1}
  ],
  "control": {"path": "$D/ctl.sock"},
  "device_plugin": {"dir": "$D/dp", "mode": "0600"},
  "kubelet": {"dir": "$D/kl"}
}
EOF
kl_start KL python "$D/kl"
ag_start AG "$B" "$D/agent.json" --detach-on-exit
grep -q "b0: pinned map: $D/dp/b0/bpf/xsks_map" "$XT_TMP/AG.log" || xt_fail "no pin: $(cat "$XT_TMP/AG.log")"
# What the agent sees (its mount namespace: `ip netns exec` gives it one of its own).
in_agent() { nsenter -t "$AG" -m -n "$@"; }
in_agent stat -f -c %T "$D/dp/b0/bpf" | grep -q bpf_fs || xt_fail "DIR/b0/bpf is not a bpffs"
in_agent ls "$D/dp/b0/bpf" | grep -qx xsks_map || xt_fail "no xsks_map in the bpffs"
[ "$(in_agent stat -c %a "$D/dp/b0/bpf/xsks_map")" = 600 ] || xt_fail "pin mode not device_plugin.mode"
in_agent bpftool map show pinned "$D/dp/b0/bpf/xsks_map" | grep -q xskmap || xt_fail "the pin is not an XSKMAP"

kl_wait KL 10 0 'select(.ev == "register")' >/dev/null || xt_fail "no registration"
got=$(kl_ask KL allocate "allocate xpile.io/xsk b0:0,b1:0")
jq -e ".mounts == [{\"container_path\":\"/tmp/afxdp_dp/b0/xsks_map\",\"host_path\":\"$D/dp/b0/bpf/xsks_map\",\"read_only\":true},
                   {\"container_path\":\"/tmp/afxdp_dp/b1\",\"host_path\":\"$D/dp/b1\",\"read_only\":true}]" \
	>/dev/null <<<"$got" || xt_fail "Allocate mounts: $got"
echo "Allocate: b0 (pinned map) mounts $D/dp/b0/bpf/xsks_map at /tmp/afxdp_dp/b0/xsks_map; b1 its socket directory"

# The pod: the agent's mounts (where the kubelet would take the host path from), a
# mount namespace of its own with /tmp private, the host path bound read-only at
# /tmp/afxdp_dp/b0 as the kubelet binds it; DPDK's default path from there.
K=20
pod() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_agent unshare -m --propagation private sh -c '
		mount -t tmpfs none /mnt && touch /mnt/m && mount --bind -o ro "$1" /mnt/m &&
		mount -t tmpfs none /tmp && mkdir -p /tmp/afxdp_dp/b0 && touch /tmp/afxdp_dp/b0/xsks_map &&
		mount --move /mnt/m /tmp/afxdp_dp/b0/xsks_map &&
		exec "$2" -R b0:0 -k "$3" -t 10 pin:/tmp/afxdp_dp/b0/xsks_map' sh "$D/dp/b0/bpf/xsks_map" \
		"$PWD/$DPCLIENT" "$K"
}
pod >"$XT_TMP/rx.out" 2>&1 &
RX=$!
xt_wait_for 10 grep -q "in the map" "$XT_TMP/rx.out" || xt_fail "client: $(cat "$XT_TMP/rx.out")"
st_udp "$A" 198.18.23.2 7000 $K || xt_fail "sending failed"
wait "$RX" || xt_fail "pinned-map client: $(cat "$XT_TMP/rx.out")"
grep -qx "received $K" "$XT_TMP/rx.out" || xt_fail "pinned-map client: $(cat "$XT_TMP/rx.out")"
echo "pinned-map client at DPDK's default path: received $K of $K"

# Restart: the pin stays, then the new agent pins its (adopted) map again.
kill -9 "$AG"
wait "$AG" 2>/dev/null
ag_start AG "$B" "$D/agent.json" --detach-on-exit
in_agent bpftool map show pinned "$D/dp/b0/bpf/xsks_map" | grep -q xskmap ||
	xt_fail "no pin after the restart"
pod >"$XT_TMP/rx2.out" 2>&1 &
RX=$!
xt_wait_for 10 grep -q "in the map" "$XT_TMP/rx2.out" || xt_fail "client: $(cat "$XT_TMP/rx2.out")"
st_udp "$A" 198.18.23.2 7000 $K || xt_fail "sending failed"
wait "$RX" || xt_fail "after the restart: $(cat "$XT_TMP/rx2.out")"
echo "after kill -9 and a restart: received $(grep -o '[0-9]*$' "$XT_TMP/rx2.out" | tail -1) of $K"

ag_stop "$AG" || xt_fail "agent exit status $?: $(cat "$XT_TMP/AG.log")"
kl_stop KL
st_no_trace "$B" b0 || xt_fail "b0 not clean after --detach-on-exit"
[ ! -e "$D/dp/b0" ] || xt_fail "left in DIR: $(find "$D/dp")"
echo "PASS"
