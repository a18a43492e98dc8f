#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/deploy/, checked by machines, not by eye:
#  - daemonset.yaml (ConfigMap, DaemonSet), xsk-pod.yaml (the engine Pod) and
#    network-attachment.yaml validate against Kubernetes' OpenAPI schema (npm
#    kubernetes-models, as tools/deploy/package.json and its lockfile declare, `npm
#    ci` into a temporary directory); the DaemonSet keeps its least-privilege promises
#    (caps exactly BPF, PERFMON, NET_ADMIN, NET_RAW, nothing privileged, a Localhost
#    seccomp profile that tools/deploy/seccomp/ ships, the probes, the scrape
#    annotation, its hostPath mounts); the Pod passes PodSecurity
#    "restricted" (no capabilities, non-root, no hostNetwork, no hostPath, seccomp
#    RuntimeDefault) and asks for an xpile.io resource; the attachment's CNI config is
#    xpile-cni's; broken copies of each are refused with the rule they break;
#  - the ConfigMap's agent.json passes `xpile-agent run --check` where eth1 exists;
#  - xpile-agent.service.in has the DaemonSet's capabilities;
#  - image.sh builds the image offline; the docker-save archive's digests match its
#    manifest; the agent runs from the image's root file system alone (chroot, with
#    bpffs and /proc mounted as the DaemonSet does): it attaches and serves /readyz;
#    with the DaemonSet's three capabilities alone it runs, without any one it does not.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
for t in node npm chroot curl setpriv nsenter unshare; do
	command -v $t >/dev/null || xt_skip "$t missing (tools/setup/install-deps.sh installs it)"
done
ag_dir T

# 1. The manifests against the OpenAPI schema.
mkdir -p "$T/npm"
cp tools/deploy/package.json tools/deploy/package-lock.json "$T/npm/"
if ! timeout 90 npm ci --prefix "$T/npm" --cache "$T/npm-cache" --no-audit --no-fund \
	--loglevel=error >"$T/npm.log" 2>&1; then
	xt_fail "npm ci (tools/deploy/package-lock.json) failed (the npm registry unreachable?): $(tail -3 "$T/npm.log")"
fi
val() { NODE_PATH="$T/npm/node_modules" node tools/deploy/validate.js "$@"; }
for f in daemonset:2 xsk-pod:1 network-attachment:1; do
	out=$(val "tools/deploy/${f%:*}.yaml") || xt_fail "${f%:*}.yaml does not validate: $out"
	[ "$(grep -c '^ok ' <<<"$out")" = "${f#*:}" ] || xt_fail "${f%:*}.yaml: expected ${f#*:} valid documents: $out"
done
# refused FILE SED WANT: a copy of FILE changed by SED is invalid, for the reason WANT.
refused() {
	sed "$2" "tools/deploy/$1" >"$T/bad.yaml"
	cmp -s "$T/bad.yaml" "tools/deploy/$1" && xt_fail "refused: '$2' changed nothing in $1"
	out=$(val "$T/bad.yaml" --expect-invalid) || xt_fail "$1 with '$2' passed: $out"
	grep -q -- "$3" <<<"$out" || xt_fail "$1 with '$2': $out (wanted $3)"
}
refused daemonset.yaml 's/containerPort: 9469/containerPort: "metrics"/' 'containerPort must be integer'
refused daemonset.yaml 's/add: \["BPF", "PERFMON", "NET_ADMIN", "NET_RAW"\]/add: ["SYS_ADMIN"]/' \
	'want BPF, NET_ADMIN, NET_RAW, PERFMON'
refused daemonset.yaml 's/type: Localhost/type: RuntimeDefault/' 'want Localhost'
refused daemonset.yaml 's/"mode": "0660", "group": 9469,/"mode": "0666",/' \
	'device_plugin.mode 0666 lets any local user connect'
refused xsk-pod.yaml 's/^spec:/spec:\n  hostNetwork: true/' 'restricted: host namespaces'
refused xsk-pod.yaml 's/drop: \["ALL"\]/drop: ["ALL"]\n          add: ["NET_RAW"]/' 'restricted: engine: capability NET_RAW added (baseline)'
refused xsk-pod.yaml '/seccompProfile:/,/type: RuntimeDefault/d' 'seccompProfile not RuntimeDefault or Localhost'
refused xsk-pod.yaml 's/runAsNonRoot: true/runAsNonRoot: false/' 'runAsNonRoot != true'
refused xsk-pod.yaml 's/^  containers:/  volumes:\n    - name: dp\n      hostPath:\n        path: \/tmp\/afxdp_dp\n  containers:/' \
	'restricted: hostPath volume dp'
refused xsk-pod.yaml '/xpile.io\/xsk: 1/d' 'requests no xpile.io resource'
refused network-attachment.yaml 's/"type": "xpile-cni"/"type": "xpile-cni", "ipam": {}/' 'ipam'
echo "manifests: valid against the OpenAPI schema; the Pod passes PodSecurity restricted; 11 broken copies refused, each for its rule"

# 2. The ConfigMap's config, where its interface exists.
eng_ns N node
eng_ns P peer
eng_veth "$N" eth1 "$P" p1 2 # the ConfigMap asks for 2 queues
sed -n '/agent.json: |/,/^---/p' tools/deploy/daemonset.yaml | sed '1d;$d' >"$T/agent.json"
ip netns exec "$N" "$AGENT" run --check --config "$T/agent.json" ||
	xt_fail "the ConfigMap's agent.json does not pass --check"

# 3. The systemd unit keeps the DaemonSet's capabilities (tests/net/test_install.sh
# verifies the installed unit, test_agent_unit.sh scores its sandbox).
grep -qx 'CapabilityBoundingSet=CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_NET_RAW' tools/deploy/xpile-agent.service.in ||
	xt_fail "the unit's bounding set is not the DaemonSet's"

# 4. The image, built offline, and the agent run from it alone.
tools/deploy/image.sh "$XT_BUILD" "$T/image" >/dev/null || xt_fail "image.sh failed"
mkdir -p "$T/x" && tar -C "$T/x" -xf "$T/image/xpile-agent-image.tar" || xt_fail "archive unreadable"
cfg=$(jq -r '.[0].Config' "$T/x/manifest.json")
layer=$(jq -r '.[0].Layers[0]' "$T/x/manifest.json")
[ "$(sha256sum "$T/x/$cfg" | cut -d' ' -f1).json" = "$cfg" ] || xt_fail "config digest mismatch"
[ "sha256:$(sha256sum "$T/x/$layer" | cut -d' ' -f1)" = "$(jq -r '.rootfs.diff_ids[0]' "$T/x/$cfg")" ] ||
	xt_fail "layer digest mismatch"
[ "$(jq -r '.[0].RepoTags[0]' "$T/x/manifest.json")" = "xpile/agent:0.1.0" ] || xt_fail "tag"
R=$T/image/rootfs
sed 's/"mode": "native"/"mode": "skb"/' "$T/agent.json" >"$R/etc/xpile/agent.json"
# What a pod gets: sysfs (its network namespace's), the host's bpffs through the
# DaemonSet's hostPath (the pins outlive the pod), /proc. All in a private mount
# namespace that goes with the process.
# shellcheck disable=SC2016 # expanded by the inner shell
nsenter --net="/run/netns/$N" unshare -m --propagation private sh -c '
	mount -t sysfs sysfs "$1/sys" && mount --bind /sys/fs/bpf "$1/sys/fs/bpf" &&
	mount -t proc proc "$1/proc" &&
	exec chroot "$1" /usr/bin/xpile-agent run --config /etc/xpile/agent.json --detach-on-exit' \
	_ "$R" >"$T/img.log" 2>&1 &
IMG=$!
XT_PIDS+=("$IMG")
ag_wait_log 10 "$T/img.log" "xpile-agent: ready:" || xt_fail "agent from the image: $(cat "$T/img.log")"
[ "$(ip netns exec "$N" curl -s -m 2 http://127.0.0.1:9469/readyz)" = ready ] ||
	xt_fail "agent from the image not ready: $(cat "$T/img.log")"
[ -S "$R/tmp/afxdp_dp/eth1/afxdp.sock" ] || xt_fail "no device-plugin socket in the image's /tmp/afxdp_dp"
[ "$(stat -c '%a %g' "$R/tmp/afxdp_dp/eth1/afxdp.sock")" = "660 9469" ] ||
	xt_fail "the ConfigMap's socket is $(stat -c '%a %g' "$R/tmp/afxdp_dp/eth1/afxdp.sock"), want mode 660 group 9469"
kill -TERM "$IMG"
wait "$IMG"
rc=$?
[ $rc = 0 ] || xt_fail "agent from the image: exit $rc: $(cat "$T/img.log")"
st_no_trace "$N" eth1 || xt_fail "the image's agent left something"
# The DaemonSet's capabilities are enough, and each one is needed. nsenter keeps the
# host's /sys (bpffs), as a pod's hostPath mount does; the pins stay in this namespace's dir.
caprun() { # caps -> the agent's log
	# The pod's supplementalGroups: the sockets' group, which the agent gives them.
	timeout 10 nsenter --net="/run/netns/$N" setpriv --groups=9469 --inh-caps=-all --bounding-set="-all,$1" -- \
		"$AGENT" run --config "$R/etc/xpile/agent.json" --detach-on-exit >"$T/cap.log" 2>&1 &
	local p=$!
	ag_wait_log 5 "$T/cap.log" "xpile-agent: ready:" && kill -TERM $p
	wait $p
}
sed -i "s|/tmp/afxdp_dp|$T/dp|; s|/run/xpile/agent.sock|$T/ctl.sock|; s|/var/lib/kubelet|$T/kubelet|" "$R/etc/xpile/agent.json"
caprun +bpf,+perfmon,+net_admin || xt_fail "BPF+PERFMON+NET_ADMIN are not enough: $(cat "$T/cap.log")"
st_no_trace "$N" eth1 || xt_fail "left something with the DaemonSet's caps"
for c in +perfmon,+net_admin +bpf,+net_admin +bpf,+perfmon; do
	caprun $c && xt_fail "the agent ran without one of BPF, PERFMON, NET_ADMIN ($c): $(cat "$T/cap.log")"
	grep -q "ready:" "$T/cap.log" && xt_fail "ready with $c"
done
st_no_trace "$N" eth1 || xt_fail "a refused start left something"
echo "image: digests match, the agent ran from its root file system alone; BPF+PERFMON+NET_ADMIN enough, each needed"
echo PASS
