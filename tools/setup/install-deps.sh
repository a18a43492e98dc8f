#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages xpile needs to build, test and run its demo, if missing.
# Runs `apt-get update` once, only when something has to be installed.
set -euo pipefail

pkgs=(build-essential pkg-config clang llvm libbpf-dev libxdp-dev xdp-tools bpftool
      libelf-dev zlib1g-dev liburing-dev iproute2 ethtool iputils-ping iperf3 procps
      libclang-rt-14-dev kmod jq clang-format clang-tidy shellcheck
      tshark tcpdump wireshark-common
      libjansson-dev libsystemd-dev libmicrohttpd-dev util-linux curl prometheus)
# The agent's deployment test validates manifests with node and npm; a node installed
# outside Debian's packages will do.
command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
# systemd-analyze verifies the agent's unit.
command -v systemd-analyze >/dev/null || pkgs+=(systemd)
[ "${XPILE_WITH_DPDK:-0}" = 1 ] && pkgs+=(dpdk dpdk-dev)
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
