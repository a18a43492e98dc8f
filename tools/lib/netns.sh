# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Shared set-up for network suites and scripts: sourced by tests/net/test_*.sh (through
# tests/lib/netns.sh), tools/bench/*.sh and tools/setup/demo.sh.
#
# Every namespace and veth gets a name unique to this run (prefix xp<pid>), both veth
# ends always live in namespaces we created, addresses come from 198.18.0.0/15 only,
# and one EXIT trap removes everything (namespaces, processes, pins, run files) even on
# failure.
#
#   xt_require_root
#   xt_ns NAME            -> creates namespace, prints its real name (safe in $(...))
#   xt_ns_var VAR NAME    the same, its name in VAR
#   xt_veth NS_A IF_A NS_B IF_B   veth pair with ends renamed inside each namespace
#   xt_bg CMD...          start a background process that cleanup kills
#   xt_stop PID           stop a process started with `&` and reap it, bounded
#   xt_on_exit CMD...     run CMD at cleanup (before namespaces go)
#   xt_fail MSG / xt_skip MSG
#   xt_wait_for SECONDS CMD...   poll until CMD succeeds (bounded)

XT_ID=xp$$
XT_NS=()
XT_PIDS=()
XT_EXIT_CMDS=()
# shellcheck disable=SC2034 # for the suites that source this
XT_BUILD=${XPILE_BUILD:-build}

xt_cleanup() {
	local c p n ino
	for c in "${XT_EXIT_CMDS[@]}"; do eval "$c" >/dev/null 2>&1; done
	for p in "${XT_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.1
	for p in "${XT_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	# Namespaces made in a subshell ($(xt_ns x)) never reach XT_NS: find them by prefix.
	# A process killed with -9 leaves what xpile keys by the namespace's inode: pins in
	# bpffs, wiring plans and engine records under /run/xpile. They go with it.
	for n in "${XT_NS[@]}" $(ip netns list 2>/dev/null | awk -v p="${XT_ID}-" 'index($1, p) == 1 { print $1 }'); do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ino=$(stat -L -c %i "/run/netns/$n" 2>/dev/null) &&
			rm -rf "${XPILE_BPFFS:-/sys/fs/bpf}/xpile/ns$ino" "/run/xpile/ns$ino"
		rm -f /run/xpile/*@"$n".sock # an engine's control socket (user/ctl.h)
		ip netns del "$n" 2>/dev/null
	done
	rmdir "${XPILE_BPFFS:-/sys/fs/bpf}/xpile" /run/xpile 2>/dev/null
	return 0
}
trap xt_cleanup EXIT
trap 'exit 130' INT TERM

xt_fail() { echo "FAIL: $*" >&2; exit 1; }
xt_skip() { echo "SKIP: $*" >&2; exit 77; }

xt_require_root() {
	[ "$(id -u)" = 0 ] || xt_skip "needs root (CAP_NET_ADMIN, CAP_BPF): run as root"
	command -v ip >/dev/null || xt_skip "iproute2 missing: apt-get install iproute2"
}

xt_ns() {
	local n="${XT_ID}-$1"
	ip netns add "$n" || xt_fail "cannot create namespace $n"
	XT_NS+=("$n")
	ip -n "$n" link set lo up
	echo "$n"
}

# xt_ns into a variable of the caller's, without the subshell that $(...) would be.
xt_ns_var() { # VAR NAME
	xt_ns "$2" >/dev/null || xt_fail "cannot create namespace $2"
	printf -v "$1" '%s' "${XT_NS[-1]}"
}

# The pair is created with throwaway names in the root namespace and moved at once, so
# it never shows up under a name that could clash with the host's interfaces.
xt_veth() {
	local nsa=$1 ifa=$2 nsb=$3 ifb=$4 tmp="${XT_ID}v${RANDOM}"
	ip link add "${tmp}a" type veth peer name "${tmp}b" || xt_fail "veth create failed"
	ip link set "${tmp}a" netns "$nsa" || { ip link del "${tmp}a"; xt_fail "veth move failed"; }
	ip link set "${tmp}b" netns "$nsb" || xt_fail "veth move failed"
	ip -n "$nsa" link set "${tmp}a" name "$ifa"
	ip -n "$nsb" link set "${tmp}b" name "$ifb"
	ip -n "$nsa" link set "$ifa" up
	ip -n "$nsb" link set "$ifb" up
}

xt_bg() {
	"$@" &
	XT_PIDS+=($!)
}

# SIGTERM (async jobs of a script ignore SIGINT), up to 5 s, then SIGKILL. `ip netns
# exec` execs its command, so $! is it.
xt_stop() { # PID
	local pid=$1
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

xt_on_exit() { XT_EXIT_CMDS+=("$*"); }

xt_wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}
