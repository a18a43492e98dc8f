#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent in a real container, as the DaemonSet runs it: podman with runc, the
# image tools/deploy/image.sh builds (loaded offline into a store of this test's own),
# the DaemonSet's capabilities (read from daemonset.yaml) with ALL else dropped, a
# read-only root, no-new-privileges, the host's bpffs and the device-plugin and
# control directories bind-mounted, the node's network namespace (here a test one):
#  - podman's default seccomp profile refuses io_uring (ENOSYS) and bpf() without
#    CAP_SYS_ADMIN: the agent says both, one line each, and exits 1, touching nothing;
#  - with the DaemonSet's Localhost profile (tools/deploy/seccomp/) it runs on io_uring
#    (and runc starts it under that profile without no-new-privileges as well);
#    with the default profile plus bpf alone it runs on epoll and says why;
#  - an upgrade bare agent -> container (Localhost profile) -> container (default + bpf,
#    epoll) under a 100/s ping: every agent adopts the same program id, the rule
#    counters go on, no echo is lost; each container serves the device-plugin socket,
#    the control socket and /metrics; its process has exactly the DaemonSet's four capabilities,
#    NoNewPrivs and a seccomp filter.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
for t in podman runc jq curl; do
	command -v $t >/dev/null || xt_skip "$t missing (tools/setup/install-deps.sh installs it)"
done
DS=tools/deploy/daemonset.yaml
CAPS=$(sed -n '/add:/{s/.*add: \[\(.*\)\]/\1/;s/[" ]//g;p;q}' "$DS") # the DaemonSet's, first
PROFILE=tools/deploy/seccomp/$(sed -n 's/.*localhostProfile: *//p' "$DS")
[ "$CAPS" = BPF,PERFMON,NET_ADMIN,NET_RAW ] && [ -f "$PROFILE" ] || xt_fail "daemonset.yaml: caps '$CAPS', profile $PROFILE"

ag_dir T
mkdir -p "$T/etc" "$T/dp" "$T/run"
tools/deploy/image.sh "$XT_BUILD" "$T/image" >/dev/null || xt_fail "image.sh failed"
# A store of this test's own: nothing shared with other podman users or runs.
S=$(mktemp -d /tmp/xpile-podman.XXXXXX)
PM=(podman --root "$S/root" --runroot "$S/run" --tmpdir "$S/tmp" --storage-driver vfs
	--events-backend file --runtime runc)
xt_on_exit "${PM[*]} rm -a -f -t 0"
xt_on_exit rm -rf --one-file-system "$S"
out=$("${PM[@]}" load -q -i "$T/image/xpile-agent-image.tar" 2>&1) || xt_fail "podman load: $out"
IMG=localhost/xpile/agent:0.1.0
# podman's default profile with bpf allowed: what it refuses besides stays (io_uring).
jq '.syscalls |= map(if (.names | index("bpf")) and .action == "SCMP_ACT_ERRNO" then .action = "SCMP_ACT_ALLOW" else . end)' \
	/usr/share/containers/seccomp.json >"$T/default+bpf.json" || xt_fail "no podman default profile"

eng_ns N node
eng_ns P peer
eng_veth "$N" eth1 "$P" p1 2 # the ConfigMap asks for 2 queues
eng_host "$N" eth1 198.18.43.1/24
eng_host "$P" p1 198.18.43.2/24
# The ConfigMap's config as the containers read it; the bare agent's, with the host paths.
sed -n '/agent.json: |/,/^---/p' "$DS" | sed '1d;$d' >"$T/etc/agent.json"
sed "s|/tmp/afxdp_dp|$T/dp|; s|/run/xpile/agent.sock|$T/run/agent.sock|" "$T/etc/agent.json" >"$T/bare.json"
CTL=$T/run/agent.sock
SOCK=$T/dp/eth1/afxdp.sock
ctl() { "$AGENT" ctl --socket "$CTL" "$@"; }
# The icmp rule's packets and the pass verdicts' (both from the pinned per-CPU maps).
icmp_packets() {
	local r v
	r=$(ctl rules eth1 | jq -r '.rules[] | select(.rule | endswith("icmp action pass")) | .packets')
	v=$(ctl stats eth1 | jq -r '.verdicts.pass.packets')
	echo "$r $v"
}

# container NAME SECCOMP-PROFILE [ARGS]: runs the image as the DaemonSet does; NAME (and
# LAST) get the pid of its `podman run`.
container() {
	local name=$1 sc=$2
	shift 2
	: >"$T/$name.log"
	timeout 120 "${PM[@]}" run --rm --name "xt-$XT_ID-$name" --network "ns:/run/netns/$N" \
		--cap-drop all --cap-add "$CAPS" --user 0 --group-add 9469 --read-only --read-only-tmpfs=false \
		--security-opt no-new-privileges ${sc:+--security-opt "seccomp=$sc"} \
		--ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
		-v /sys/fs/bpf:/sys/fs/bpf:rslave -v "$T/dp:/tmp/afxdp_dp" -v "$T/run:/run/xpile" \
		-v "$T/etc:/etc/xpile:ro" "$IMG" "$@" >"$T/$name.log" 2>&1 &
	LAST=$!
	XT_PIDS+=("$LAST")
	printf -v "$name" '%s' "$LAST"
}
stop_container() { # name
	"${PM[@]}" stop -t 10 "xt-$XT_ID-$1" >/dev/null 2>&1
	wait "${!1}"
}
# serving NAME LOOP ID: the container's agent is up on LOOP, adopted ID, and serves.
serving() {
	local name=$1 loop=$2 id=$3 pid st
	ag_wait_log 20 "$T/$name.log" "xpile-agent: ready:" || xt_fail "$name not ready: $(cat "$T/$name.log")"
	grep -q "xpile-agent: event loop: $loop" "$T/$name.log" || xt_fail "$name: $(cat "$T/$name.log")"
	grep -q "eth1: adopted the steer program (id $id)" "$T/$name.log" ||
		xt_fail "$name did not adopt program $id: $(cat "$T/$name.log")"
	[ "$(ctl status | jq -r .event_loop)" = "${loop%% *}" ] || xt_fail "$name: status $(ctl status)"
	[ "$(timeout 20 "$DPCLIENT" "$SOCK" /connect,n /version /xsk_map_fd,eth1 /fin)" = \
		$'/host_ok\n0.1\n/fd_ack +fd=xskmap\n/fin_ack' ] || xt_fail "$name: device-plugin handshake"
	ip netns exec "$N" curl -s -m 2 http://127.0.0.1:9469/metrics | grep -q '^xpile_interface_ready{interface="eth1"} 1$' ||
		xt_fail "$name: /metrics"
	pid=$("${PM[@]}" inspect --format '{{.State.Pid}}' "xt-$XT_ID-$name")
	st=$(cat "/proc/$pid/status")
	# BPF 39, PERFMON 38, NET_ADMIN 12, NET_RAW 13 (/xsk_socket); no-new-privileges; a seccomp filter.
	grep -q $'^CapEff:\t000000c000003000' <<<"$st" && grep -q $'^CapBnd:\t000000c000003000' <<<"$st" &&
		grep -q $'^NoNewPrivs:\t1' <<<"$st" && grep -q $'^Seccomp:\t2' <<<"$st" ||
		xt_fail "$name: $(grep -E '^(Cap|NoNew|Seccomp)' <<<"$st" | tr '\n' ' ')"
	awk '$5 == "/" && $6 !~ /^ro/ { bad = 1 } END { exit bad }' "/proc/$pid/mountinfo" ||
		xt_fail "$name: root not read-only"
}

# 1. podman's default profile: bpf refused (io_uring too, which epoll would survive):
# its line after the socket's, nothing done. The loop is named only once the agent is ready.
container def ""
wait "$LAST"
rc=$?
grep -qx 'xpile-agent: eth1: bpf() is refused (Operation not permitted) by a seccomp profile although the capabilities are there: run with a profile that allows bpf (the agent.s: tools/deploy/seccomp/xpile-agent.json)' "$T/def.log" &&
	[ $rc = 1 ] && [ "$(wc -l <"$T/def.log")" = 2 ] || xt_fail "default profile: exit $rc: $(cat "$T/def.log")"
st_no_trace "$N" eth1 || xt_fail "a refused start left something"
echo "podman's default profile: $(tail -n 1 "$T/def.log")"
# Without no-new-privileges runc loads the profile before it sets user and capabilities:
# the profile lets it through that way too.
out=$(timeout 60 "${PM[@]}" run --rm --cap-drop all --cap-add "$CAPS" --security-opt "seccomp=$PROFILE" \
	--ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$IMG" --version 2>&1)
grep -Eqx 'xpile-agent 0\.1\.0 \(libbpf [0-9]+\.[0-9.]+, libxdp [0-9]+\.[0-9.]+, liburing [0-9]+\.[0-9.]+\)' <<<"$out" ||
	xt_fail "the profile without no-new-privileges: $out"

# 2. The upgrade under a 100/s ping.
ag_start AG "$N" "$T/bare.json"
ID=$(ctl status | jq -r '.interfaces[0].prog_id')
ip netns exec "$P" ping -c 5 -i 0.05 -W 1 198.18.43.1 >/dev/null || xt_fail "no ping through eth1"
C0=$(icmp_packets)
ip netns exec "$P" ping -i 0.01 -w 60 -W 1 198.18.43.1 >"$T/ping" 2>&1 &
PING=$!
XT_PIDS+=("$PING")
sleep 1
ag_stop "$AG" || xt_fail "bare agent exit $?"
container c1 "$PROFILE"
serving c1 "io_uring" "$ID"
C1=$(icmp_packets)
sleep 1
stop_container c1 || xt_fail "container c1 exit $?: $(cat "$T/c1.log")"
container c2 "$T/default+bpf.json"
serving c2 "epoll (io_uring refused: io_uring_setup: Function not implemented" "$ID"
sleep 1
C2=$(icmp_packets)
kill -INT "$PING"
wait "$PING"
sent=$(grep -o '[0-9]* packets transmitted' "$T/ping" | cut -d' ' -f1)
got=$(grep -o '[0-9]* received' "$T/ping" | cut -d' ' -f1)
[ -n "$sent" ] && [ "$sent" -gt 100 ] && [ "$got" = "$sent" ] || xt_fail "ping: $(tail -n 2 "$T/ping")"
read -r r0 v0 <<<"$C0"
read -r r1 v1 <<<"$C1"
read -r r2 v2 <<<"$C2"
read -r r3 _ <<<"$(icmp_packets)"
[ "$r0" -lt "$r1" ] && [ "$r1" -lt "$r2" ] && [ "$v0" -lt "$v1" ] && [ "$v1" -lt "$v2" ] &&
	[ "$((r3 - r0))" -ge "$got" ] ||
	xt_fail "counters did not go on (rule, pass): $C0 -> $C1 -> $C2 -> $r3, $got echoes"
[ "$(ctl status | jq -r '.interfaces[0].prog_id')" = "$ID" ] || xt_fail "program id changed"
stop_container c2 || xt_fail "container c2 exit $?: $(cat "$T/c2.log")"
echo "upgrade bare -> container (Localhost profile, io_uring) -> container (default + bpf, epoll):"
echo "  program $ID kept, icmp rule / pass verdict packets $r0/$v0 -> $r1/$v1 -> $r2/$v2, $got of $sent echoes at 100/s all counted ($((r3 - r0)))"

# 3. Nothing left: a last bare agent detaches.
ag_start AG "$N" "$T/bare.json" --detach-on-exit
ag_stop "$AG" || xt_fail "last agent exit $?"
st_no_trace "$N" eth1 || xt_fail "eth1 not clean"
echo PASS
