#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the xpile container image offline, from scratch: the binaries of a `make`
# build (xpile-agent, xpile, xpile-loader, xpile-cni), the BPF objects, and exactly the shared
# libraries they load (from ldd), nothing else: no shell, no package manager.
#
#   tools/deploy/image.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, build/image)
#
# Writes OUT_DIR/rootfs/ (the image's file system, runnable with chroot) and
# OUT_DIR/xpile-agent-image.tar, a `docker save` archive that `docker load` and
# `podman load` take as xpile/agent:VERSION, with no registry and no network.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-$build/image}
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
bins=(xpile-agent xpile xpile-loader xpile-cni)

for b in "${bins[@]}"; do
	[ -x "$build/$b" ] || { echo "image.sh: $build/$b missing: run make" >&2; exit 1; }
done
rm -rf --one-file-system "$out"
root=$out/rootfs
mkdir -p "$root/usr/bin" "$root/usr/lib/xpile/bpf" "$root/etc/xpile" "$root/tmp" "$root/run" \
	"$root/sys/fs/bpf" "$root/proc" "$root/dev"
chmod 1777 "$root/tmp"
for b in "${bins[@]}"; do
	install -m 755 "$build/$b" "$root/usr/bin/"
done
install -m 644 "$build"/bpf/*.o "$root/usr/lib/xpile/bpf/"
# The libraries the binaries load, at the paths the dynamic linker looks them up.
for b in "${bins[@]}"; do
	ldd "$build/$b" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'
done | sort -u | while read -r lib; do
	# The file under its own name and the soname a link to it, as on the host: the
	# programs' --version reads the library's version from the name the link resolves to.
	real=$(readlink -f "$lib")
	mkdir -p "$root$(dirname "$lib")"
	if [ "$(basename "$real")" != "$(basename "$lib")" ]; then
		cp "$real" "$root$(dirname "$lib")/$(basename "$real")"
		ln -sf "$(basename "$real")" "$root$lib"
	else
		cp -L "$lib" "$root$lib"
	fi
done
# An example config (the DaemonSet mounts the ConfigMap's over it).
sed -n '/agent.json: |/,/^---/p' tools/deploy/daemonset.yaml | sed '1d;$d' | sed 's/^    //' \
	>"$root/etc/xpile/agent.json"
printf 'root:x:0:0::/:/usr/bin/xpile-agent\nnobody:x:65534:65534::/:/usr/bin/xpile\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

# The docker-save archive: one layer, its config, the manifest.
work=$out/archive
mkdir -p "$work"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$root" -cf "$work/layer.tar" .
layer=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
mkdir -p "$work/$layer"
mv "$work/layer.tar" "$work/$layer/layer.tar"
cat >"$work/config.json" <<EOF
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",
 "config":{"Entrypoint":["/usr/bin/xpile-agent"],"Cmd":["run","--config","/etc/xpile/agent.json"],
  "Env":["XPILE_BPF_DIR=/usr/lib/xpile/bpf"],"ExposedPorts":{"9469/tcp":{}},
  "Labels":{"org.opencontainers.image.title":"xpile-agent","org.opencontainers.image.version":"$version"}},
 "rootfs":{"type":"layers","diff_ids":["sha256:$layer"]},"history":[{"created_by":"tools/deploy/image.sh"}]}
EOF
cfg=$(sha256sum "$work/config.json" | cut -d' ' -f1)
mv "$work/config.json" "$work/$cfg.json"
printf '[{"Config":"%s.json","RepoTags":["xpile/agent:%s"],"Layers":["%s/layer.tar"]}]\n' \
	"$cfg" "$version" "$layer" >"$work/manifest.json"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work" \
	-cf "$out/xpile-agent-image.tar" manifest.json "$cfg.json" "$layer"
rm -rf "$work"
echo "image.sh: $out/xpile-agent-image.tar (xpile/agent:$version, $(du -sh "$root" | cut -f1) rootfs)"
