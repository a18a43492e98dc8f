#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages xpile needs to build, test and run its demo, if missing.
# Runs `apt-get update` once, only when something has to be installed.
set -euo pipefail

pkgs=(build-essential pkg-config clang llvm libbpf-dev libxdp-dev xdp-tools bpftool
      libelf-dev zlib1g-dev liburing-dev libmnl-dev iproute2 ethtool iputils-ping iperf3 procps bird2 traceroute
      libclang-rt-14-dev kmod jq clang-format clang-tidy shellcheck
      tshark tcpdump wireshark-common
      libjansson-dev libsystemd-dev libmicrohttpd-dev util-linux curl prometheus tmux
      libseccomp-dev podman runc man-db groff-base bsdextrautils python3
      libprotobuf-c-dev protobuf-c-compiler libnghttp2-dev libmnl-dev
      python3-grpcio python3-protobuf protobuf-compiler python3-seccomp
      golang-go golang-google-grpc-dev golang-google-protobuf-dev
      golang-github-appc-cni-dev containernetworking-plugins)
# The agent's kubelet side: protobuf-c and libnghttp2 (the device plugin's gRPC);
# its tests play the kubelet with python3-grpcio and Go's grpc, the container runtime
# with libcni (built offline from /usr/share/gocode) beside containernetworking-plugins.
# The agent's deployment test validates manifests with node and npm; a node installed
# outside Debian's packages will do.
command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
# man-db and groff render the generated man pages, bsdextrautils has col and column;
# libseccomp-dev builds the launcher that applies the agent unit's system-call filter
# (tests/harness/unitrun.c); python3 probes that sandbox.
# systemd-analyze verifies the agent's unit and scores its sandbox.
command -v systemd-analyze >/dev/null || pkgs+=(systemd)
# DPDK (optional, benches only): testpmd, the library and the examples' sources
# (tools/bench/dpdk_examples.sh builds examples/l2fwd and l3fwd from dpdk-doc).
[ "${XPILE_WITH_DPDK:-0}" = 1 ] && pkgs+=(dpdk dpdk-dev libdpdk-dev dpdk-doc)
[ "${XPILE_WITH_PLOT:-0}" = 1 ] && pkgs+=(gnuplot-nox)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "xpile: missing packages: ${missing[*]}; run as root or: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "xpile: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# wireshark-common (capinfos, tshark: the capture tests' readers) asks whether
# non-root users may capture; answer it here so the install never prompts.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
