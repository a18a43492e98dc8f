# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the benches that run a DPDK contender beside xpile (examples.sh, router.sh):
# DPDK's own examples built from dpdk-doc (dpdk_examples.sh) and 2 MiB hugepages for
# their EAL. DPDK is optional: dpdk_env_init says whether it is there.
#
# dpdk_env_init DIR  -> sets dpdk_dir (DIR, where l2fwd and l3fwd are) and have_dpdk (0|1);
#                       with DPDK, mounts a private hugetlbfs (hp_dir) for the run and
#                       gives back at exit the pages hp_ensure added.
# hp_ensure PAGES    -> tops the free 2 MiB pages up to PAGES (other users of the
#                       machine take pages meanwhile: call it before each DPDK start).
# dpdk_eal MB CORE PREFIX -> EAL arguments for a vdev-only process on CORE.
# Needs tools/lib/netns.sh (xt_on_exit) sourced first.

hp_sys=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

hp_free() { awk '/HugePages_Free/ {print $2}' /proc/meminfo; }

hp_ensure() { # pages
	local free
	free=$(hp_free)
	[ "$free" -ge "$1" ] && return 0
	echo $(($(cat $hp_sys) + $1 - free)) >$hp_sys
	# A subshell's additions count too: the tally lives in a file.
	echo $(($(cat "$hp_count") + $1 - free)) >"$hp_count"
	[ "$(hp_free)" -ge "$1" ] || echo "# only $(hp_free) free 2 MiB hugepages, DPDK needs $1" >&2
}

hp_give_back() {
	local cur added
	cur=$(cat $hp_sys) added=$(cat "$hp_count")
	echo $((cur > added ? cur - added : 0)) >$hp_sys
	rm -f "$hp_count"
}

dpdk_env_init() { # dir
	dpdk_dir=$1 have_dpdk=0
	if [ -x "$dpdk_dir/l2fwd" ] && [ -x "$dpdk_dir/l3fwd" ]; then
		have_dpdk=1
	elif [ -d /usr/share/dpdk/examples/l3fwd ] && pkg-config --exists libdpdk 2>/dev/null; then
		tools/bench/dpdk_examples.sh "$dpdk_dir" >/dev/null && have_dpdk=1
	fi
	if [ "$have_dpdk" = 0 ]; then
		echo "# DPDK skipped: its examples are not built and cannot be (apt-get install dpdk-doc libdpdk-dev)"
		return 0
	fi
	hp_count=$(mktemp /tmp/xpile-bench-hp.XXXXXX)
	echo 0 >"$hp_count"
	hp_dir=$(mktemp -d /tmp/xpile-bench-huge.XXXXXX)
	mount -t hugetlbfs -o pagesize=2M none "$hp_dir" || {
		rmdir "$hp_dir"
		echo "# DPDK skipped: cannot mount hugetlbfs on $hp_dir" >&2
		have_dpdk=0
		return 0
	}
	xt_on_exit "umount '$hp_dir'; rmdir '$hp_dir'"
	xt_on_exit hp_give_back
}

dpdk_eal() { # megabytes core file_prefix
	echo "--no-pci --huge-dir ${hp_dir:-} -m $1 --in-memory --no-telemetry --file-prefix $3 -l $2"
}
