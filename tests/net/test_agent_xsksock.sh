#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Queues for pods that hold no capabilities (/xsk_socket), with the kubelet's
# PodResources deciding who may (python3-grpcio as the kubelet, tests/harness/kubelet.py):
#  - `xpile run --uds` as uid 65534 with an empty capability set (effective, permitted,
#    bounding, ambient), in a network namespace of its own where b0 does not exist, its
#    hostname the pod's name, io_uring refused by a seccomp filter as RuntimeDefault
#    refuses it: gets its sockets from the agent, binds them to the node's b0, has the
#    agent put them in the XSKMAP, counts K of K packets, waits with poll() and says so;
#  - refusals: a pod PodResources does not list (/host_nak), a queue not allocated to
#    the pod, a socket bound to another queue than the one it asks a slot for; the
#    engine fails in one line;
#  - /metrics: xpile_queue_allocated{interface,queue,namespace,pod} for the allocation;
#  - figures: the handshake of /xsk_socket against DPDK's /xsk_map_fd, 1,000 each, three
#    rounds interleaved.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
source tests/lib/kubelet.sh
ag_require
for t in setpriv prlimit unshare jq curl; do
	command -v $t >/dev/null || xt_skip "$t missing (tools/setup/install-deps.sh installs it)"
done
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || xt_skip "python3-seccomp missing: apt-get install python3-seccomp"
kl_require python

eng_ns A a
eng_ns B b
eng_ns E pod
# b0 has 2 queues; a0 sends on one TX queue, which veth delivers to b0's queue 0.
tmp="${XT_ID}s${RANDOM}"
ip link add "${tmp}a" numtxqueues 1 numrxqueues 1 type veth peer name "${tmp}b" \
	numtxqueues 2 numrxqueues 2 || xt_fail "veth create failed"
ip link set "${tmp}a" netns "$A" && ip link set "${tmp}b" netns "$B" || xt_fail "veth move failed"
ip -n "$A" link set "${tmp}a" name a0 up
ip -n "$B" link set "${tmp}b" name b0 up
eng_host "$A" a0 198.18.26.1/24
eng_host "$B" b0 198.18.26.2/24
mac=$(ip -n "$B" -o link show b0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$A" neigh add 198.18.26.2 lladdr "$mac" dev a0

ag_dir D
mkdir -p "$D/kl"
cp "$XPILE" "$D/xpile" && chmod 755 "$D/xpile"
cat >"$D/agent.json" <<EOF
{
  "interfaces": [
    {"name": "b0", "queues": 2, "default": "pass", "rules": ["udp dport 7000 action xsk"]}
  ],
  "control": {"path": "$D/ctl.sock"},
  "metrics": {"address": "127.0.0.1:9489"},
  "device_plugin": {"dir": "$D/dp", "mode": "0666"},
  "kubelet": {"dir": "$D/kl", "pod_resources": "$D/podres.sock"}
}
EOF
kl_start KL python "$D/kl" "$D/podres.sock"
kl_ask KL pod "pod xsk-pod default xpile.io/xsk b0:0" >/dev/null
ag_start AG "$B" "$D/agent.json" --detach-on-exit
S=$D/dp/b0/afxdp.sock
# listed POD: the agent's PodResources view (refreshed at the tick) has POD.
listed() { xt_wait_for 5 sh -c "ip netns exec $B curl -s http://127.0.0.1:9489/metrics | grep -q 'pod=\"$1\"'"; }
listed xsk-pod ||
	xt_fail "no allocation in /metrics: $(ip netns exec "$B" curl -s http://127.0.0.1:9489/metrics | grep queue_alloc)"
ip netns exec "$B" curl -s http://127.0.0.1:9489/metrics |
	grep -qx 'xpile_queue_allocated{interface="b0",queue="0",namespace="default",pod="xsk-pod"} 1' ||
	xt_fail "/metrics: $(ip netns exec "$B" curl -s http://127.0.0.1:9489/metrics | grep queue_alloc)"

# seccomp: io_uring_setup refused with ENOSYS, as containerd 2.x's RuntimeDefault does.
NOURING=(/usr/bin/python3 -c 'import os, sys, seccomp
f = seccomp.SyscallFilter(seccomp.ALLOW)
for s in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
    f.add_rule(seccomp.ERRNO(38), s)
f.load()
os.execv(sys.argv[1], sys.argv[1:])')
# pod HOST ENGINE-ARGS...: the engine as a restricted pod runs it. RLIMIT_MEMLOCK is
# charged per user: other suites' engines of uid 65534 on this machine count too.
pod() {
	local host=$1
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$E" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" \
		prlimit --memlock=8388608 setpriv --reuid 65534 --regid 65534 --clear-groups \
		--inh-caps=-all --ambient-caps=-all --bounding-set=-all --no-new-privs -- \
		"${NOURING[@]}" "$D/xpile" run "$@"
}
ip -n "$E" link show b0 >/dev/null 2>&1 && xt_fail "b0 visible in the pod's namespace"

K=40
# A 1 MiB UMEM (512 aligned 2 KiB frames): RLIMIT_MEMLOCK cannot go above 8 MiB here,
# and it is shared by every uid-65534 process of the machine.
SMALL=(--frames 512 --layout aligned --rx-ring 128 --tx-ring 128 --fill-ring 256 --comp-ring 128)
pod xsk-pod --iface b0:0 --mode rxdrop --uds "$S" "${SMALL[@]}" --json --duration 8 \
	>"$XT_TMP/E.json" 2>"$XT_TMP/E.err" &
EP=$!
xt_wait_for 10 grep -q '"type":"idle_wait"' "$XT_TMP/E.json" || xt_fail "engine: $(cat "$XT_TMP/E.err")"
grep -q '"wait":"poll"' "$XT_TMP/E.json" || xt_fail "engine did not fall back to poll(): $(grep idle_wait "$XT_TMP/E.json")"
epid=$(pgrep -f "^$D/xpile run" | head -1)
st=$(cat "/proc/$epid/status")
for f in CapEff CapPrm CapBnd CapAmb; do
	grep -q "^$f:[[:space:]]*0000000000000000$" <<<"$st" || xt_fail "engine $f: $(grep "^$f" <<<"$st")"
done
grep -q '^Uid:[[:space:]]*65534' <<<"$st" || xt_fail "engine uid: $(grep ^Uid <<<"$st")"
sleep 0.5 # the socket goes in once its fill ring holds frames
st_udp "$A" 198.18.26.2 7000 $K || xt_fail "sending failed"
wait "$EP"
rc=$?
[ $rc = 0 ] || xt_fail "engine exit $rc: $(cat "$XT_TMP/E.err")"
got=$(eng_sum "$XT_TMP/E.json" rx_packets)
[ "$got" = $K ] || xt_fail "no capabilities: $got of $K packets counted: $(cat "$XT_TMP/E.err")"
echo "no capabilities, uid 65534, own netns (no b0), io_uring refused: $got of $K packets; $(grep -o '"why":"[^"]*"' "$XT_TMP/E.json" | head -1)"

# Refusals, each one line from the engine.
pod stranger --iface b0:0 --mode rxdrop --uds "$S" "${SMALL[@]}" --duration 1 >/dev/null 2>"$XT_TMP/E2.err" &&
	xt_fail "a pod PodResources does not list ran"
[ "$(wc -l <"$XT_TMP/E2.err")" = 1 ] && grep -q 'refused this host' "$XT_TMP/E2.err" ||
	xt_fail "stranger: $(cat "$XT_TMP/E2.err")"
pod xsk-pod --iface b0:1 --mode rxdrop --uds "$S" "${SMALL[@]}" --duration 1 >/dev/null 2>"$XT_TMP/E3.err" &&
	xt_fail "an engine ran on a queue not allocated to it"
[ "$(wc -l <"$XT_TMP/E3.err")" = 1 ] && grep -q 'the agent refused an AF_XDP socket' "$XT_TMP/E3.err" ||
	xt_fail "queue 1: $(cat "$XT_TMP/E3.err")"
grep -q 'b0: /xsk_socket refused: queue 1 is not allocated to xsk-pod' "$XT_TMP/AG.log" ||
	xt_fail "the agent's reason: $(tail -3 "$XT_TMP/AG.log")"
echo "refused: $(cat "$XT_TMP/E2.err")"
echo "         $(cat "$XT_TMP/E3.err")"
# A socket bound to one queue, offered for another's slot (dpclient -R binds b0:0 in the
# node's namespace and asks the agent to put it in at 1): refused by the kernel's word.
kl_ask KL pod "pod dpclient default xpile.io/xsk b0:1" >/dev/null
listed dpclient || xt_fail "dpclient not listed"
out=$(timeout 20 "$DPCLIENT" "$S" /connect,dpclient "+xsk:/xsk_insert,1" 2>&1)
[ "$out" = $'/host_ok\n/xsk_insert_nak' ] || xt_fail "an unbound socket: $out"
grep -q 'b0: /xsk_insert refused: the socket is not bound' "$XT_TMP/AG.log" ||
	xt_fail "no reason logged: $(tail -3 "$XT_TMP/AG.log")"

# The handshake's cost: /xsk_socket (one socket, as a client per queue would) against
# /xsk_map_fd, 1,000 each, interleaved.
kl_ask KL pod "pod bench default xpile.io/xsk b0:0" >/dev/null
listed bench || xt_fail "bench not listed"
for r in 1 2 3; do
	a=$(timeout 60 "$DPCLIENT" -n 1000 "$S" /connect,bench /version /xsk_map_fd,b0 /fin | tail -1) ||
		xt_fail "1000 /xsk_map_fd handshakes: $a"
	b=$(timeout 60 "$DPCLIENT" -n 1000 "$S" /connect,bench /xsk_socket,b0 /fin | tail -1) ||
		xt_fail "1000 /xsk_socket handshakes: $b"
	echo "figure: round $r: /xsk_map_fd ${a#1000 runs in } vs /xsk_socket ${b#1000 runs in } (1,000 handshakes each)"
done

ag_stop "$AG" || xt_fail "agent exit status $?: $(cat "$XT_TMP/AG.log")"
kl_stop KL
st_no_trace "$B" b0 || xt_fail "b0 not clean after --detach-on-exit"
echo "PASS"
