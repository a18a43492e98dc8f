#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where the pins land must not depend on how a process was started (issue 21.1). Six
# ways into the engine's namespace E: a shell that stays, `$(... &)` whose launcher is
# gone, setsid -f, nsenter --net (the host's /sys), ip netns exec (a fresh /sys), and
# unshare --pid --fork --mount-proc (PID 1 is the process itself). Through all of them:
#  - xpile-loader: what `load` pinned from one, `status` from every other one finds;
#  - the engine: a chain of take-overs, each successor started another way, keeps the
#    program id (the reproduction: a detached predecessor used to pin into a private
#    bpffs, and its successor refused the program as "not ours");
#  - the agent: each restart, started another way, adopts the same program;
#  - where PID 1's /sys/fs/bpf is not a bpffs (unshare inside ip netns exec) the refusal
#    is one line naming --bpffs, and --bpffs pointing at the host's bpffs finds the same
#    pins;
#  - the sweep: directories of namespaces that no longer exist go (pins and /run/xpile),
#    those of live namespaces stay, also one held only by an open fd and one held only by
#    a bind mount in another mount namespace.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
for t in setsid nsenter unshare pgrep; do
	command -v $t >/dev/null || xt_skip "$t missing (tools/setup/install-deps.sh installs it)"
done
ag_dir T

eng_ns E eng
eng_ns P peer
xt_veth "$E" ea "$P" pa
eng_quiet "$E" ea
eng_quiet "$P" pa
PIN=$(st_pin_dir "$E" ea)
STYLES=(shell detached setsid nsenter netns unshare)

# Starts CMD... in E the STYLE way, output to LOG; LPID gets CMD's own pid (on the host).
launch() { # style log cmd...
	local style=$1 log=$2 u
	shift 2
	rm -f "$T/pid"
	case $style in
	shell) # a shell in E that stays, the parent of CMD
		# shellcheck disable=SC2016 # expanded by the inner shell
		ip netns exec "$E" bash -c '"$@" & echo $! >"$0"; wait' "$T/pid" "$@" >"$log" 2>&1 &
		XT_PIDS+=($!) ;;
	detached) # the reproduction of the issue: the launching subshell is gone at once
		echo "$(ip netns exec "$E" "$@" >"$log" 2>&1 & echo $!)" >"$T/pid" ;;
	setsid)
		# shellcheck disable=SC2016
		ip netns exec "$E" setsid -f bash -c 'echo $$ >"$0"; exec "$@"' "$T/pid" "$@" >"$log" 2>&1 ;;
	nsenter)
		nsenter --net="/run/netns/$E" "$@" >"$log" 2>&1 &
		echo $! >"$T/pid" ;;
	netns)
		ip netns exec "$E" "$@" >"$log" 2>&1 &
		echo $! >"$T/pid" ;;
	unshare) # CMD is PID 1 of a new PID namespace, with its own /proc
		nsenter --net="/run/netns/$E" unshare --pid --fork --mount-proc --kill-child "$@" >"$log" 2>&1 &
		u=$!
		XT_PIDS+=("$u")
		# shellcheck disable=SC2016
		xt_wait_for 5 bash -c 'pgrep -P "$1" >"$2" || ! kill -0 "$1"' _ "$u" "$T/pid"
		[ -s "$T/pid" ] || echo "$u" >"$T/pid" ;; # done already
	esac
	xt_wait_for 5 test -s "$T/pid" || xt_fail "$style: no pid"
	LPID=$(cat "$T/pid")
	XT_PIDS+=("$LPID")
}
gone() { xt_wait_for "$1" bash -c "! kill -0 $2 2>/dev/null"; }
# CMD... run to its end the STYLE way; its output on stdout.
run_as() { # style cmd...
	local style=$1
	shift
	launch "$style" "$T/run.log" "$@"
	gone 20 "$LPID" || xt_fail "$style: $* did not finish"
	cat "$T/run.log"
}
status_id() { # style -> the program id `xpile-loader status` reports as xpile's
	run_as "$1" "$LOADER" status ea --json | grep '"xpile":true' | grep -o '"prog_id":[0-9]*' | cut -d: -f2
}

# 1. The loader: load one way (detached), status from every way, unload another way.
out=$(run_as detached "$LOADER" load --mode skb ea --json)
ID=$(grep -o '"prog_id":[0-9]*' <<<"$out" | cut -d: -f2)
[ -n "$ID" ] || xt_fail "load (detached) failed: $out"
[ -e "$PIN/xp_steer" ] || xt_fail "load (detached) did not pin in the host's $PIN: $out"
for s in "${STYLES[@]}"; do
	got=$(status_id "$s")
	[ "$got" = "$ID" ] || xt_fail "status ($s) sees program '${got}', not xpile's $ID: $(cat "$T/run.log")"
done
out=$(run_as unshare "$LOADER" unload ea)
st_no_trace "$E" ea || xt_fail "unload (unshare): $out"
echo "loader: loaded detached, status found program $ID from ${STYLES[*]}, unloaded from unshare"

# 2. PID 1's /sys/fs/bpf no bpffs: one line naming --bpffs; --bpffs DIR reaches the host's.
# shellcheck disable=SC2016
out=$(ip netns exec "$E" unshare --pid --fork --mount-proc "$LOADER" load --mode skb ea 2>&1) &&
	xt_fail "load where PID 1 sees no bpffs succeeded: $out"
[ "$(wc -l <<<"$out")" = 1 ] && grep -q -- '--bpffs DIR' <<<"$out" && grep -q 'mount -t bpf' <<<"$out" ||
	xt_fail "no bpffs as PID 1 sees it: not one line naming both fixes: $out"
st_bpffs_bind HOSTFS
out=$(ip netns exec "$E" unshare --pid --fork --mount-proc "$LOADER" load --bpffs "$HOSTFS" --mode skb ea 2>&1) ||
	xt_fail "load with --bpffs: $out"
[ -e "$PIN/xp_steer" ] || xt_fail "--bpffs $HOSTFS did not pin where the host's bpffs has $PIN"
[ -n "$(status_id netns)" ] || xt_fail "status does not find what --bpffs pinned"
run_as netns "$LOADER" unload ea >/dev/null
st_no_trace "$E" ea || xt_fail "unload after --bpffs"
echo "PID 1 without a bpffs: refused in one line naming --bpffs; --bpffs DIR found the same pins"

# 3. The engine: a chain of take-overs, each successor started another way.
SOCK=$T/ho.sock
ENG=(--iface ea --mode rxdrop --cores 0 --xdp-mode skb --interval 0.5 --handover "$SOCK")
launch "${STYLES[0]}" "$T/eng0.log" "$XPILE" run "${ENG[@]}"
xt_wait_for 10 grep -q 'ready:' "$T/eng0.log" || xt_fail "engine (${STYLES[0]}): $(cat "$T/eng0.log")"
ID=$(status_id netns)
[ -n "$ID" ] || xt_fail "the engine's program is not found by status"
prev=$LPID
for k in 1 2 3 4 5 0; do
	s=${STYLES[$k]}
	launch "$s" "$T/eng$k.log" "$XPILE" run "${ENG[@]}" --take-over "$SOCK"
	xt_wait_for 15 grep -q 'ready:' "$T/eng$k.log" ||
		xt_fail "take-over ($s) from pid $prev failed: $(grep -v '^ ' "$T/eng$k.log" | tail -3)"
	gone 10 "$prev" || xt_fail "the engine before the $s one did not leave"
	got=$(status_id netns)
	[ "$got" = "$ID" ] || xt_fail "after the take-over ($s) status sees program '$got', not $ID"
	prev=$LPID
done
kill -INT "$prev"
gone 10 "$prev" || xt_fail "the last engine did not stop"
st_no_trace "$E" ea || xt_fail "the last engine left something"
echo "engine: program $ID taken over ${STYLES[*]:1} ${STYLES[0]}, status found it each time"

# 4. The agent: each restart another way adopts the same program.
cat >"$T/agent.json" <<EOF
{
  "interfaces": [{"name": "ea", "mode": "skb", "default": "pass"}],
  "control": {"path": "$T/ctl.sock"},
  "device_plugin": {"dir": "$T/dp"}
}
EOF
ID=
for k in 0 1 2 3 4 5; do
	s=${STYLES[$k]}
	extra=()
	[ $k = 5 ] && extra=(--detach-on-exit)
	launch "$s" "$T/ag$k.log" "$AGENT" run --config "$T/agent.json" "${extra[@]}"
	xt_wait_for 10 grep -q 'xpile-agent: ready:' "$T/ag$k.log" || xt_fail "agent ($s): $(cat "$T/ag$k.log")"
	got=$(grep -o '(id [0-9]*)' "$T/ag$k.log" | head -1 | tr -dc 0-9)
	if [ -z "$ID" ]; then
		ID=$got
	else
		grep -q "adopted the steer program (id $ID)" "$T/ag$k.log" ||
			xt_fail "agent ($s) did not adopt program $ID: $(cat "$T/ag$k.log")"
	fi
	[ "$(status_id netns)" = "$ID" ] || xt_fail "agent ($s): status does not see program $ID"
	kill -TERM "$LPID"
	gone 10 "$LPID" || xt_fail "agent ($s) did not stop"
done
st_no_trace "$E" ea || xt_fail "the last agent (--detach-on-exit) left something"
echo "agent: program $ID adopted by agents started ${STYLES[*]:1}"

# 5. The sweep. Dead: a namespace's pins left where no namespace has that inode (nsfs
# inodes start at 0xEFFFFFF8: this one can never be one), and its /run/xpile directory.
DEAD=ns$((1000000000 + $$))
xt_on_exit rm -rf "$BPFFS/xpile/$DEAD" "/run/xpile/$DEAD" # only when the sweep failed
eng_ns D dead
ip -n "$D" link add d0 type veth peer name d1
# (libxdp's lock directory where it always is, not beside a --pin-path nobody unloads)
LIBXDP_BPFFS=$BPFFS nsenter --net="/run/netns/$D" "$LOADER" load --mode skb \
	--pin-path "$BPFFS/xpile/$DEAD/d0" d0 >/dev/null ||
	xt_fail "load in $D failed"
mkdir -p "/run/xpile/$DEAD/d0"
echo "0 0" >"/run/xpile/$DEAD/d0/wire.plan"
ip netns del "$D" # the veth goes, the program with it; the pins stay
# The sweep leaves what changed in the last 10 s (a namespace born with a reused inode
# may be pinning there): these are made old.
touch -d '-1 min' "$BPFFS/xpile/$DEAD" "$BPFFS/xpile/$DEAD/d0" "/run/xpile/$DEAD" "/run/xpile/$DEAD/d0"
# Live: L1 only through /run/netns; L2 only through an open fd; L3 only through a bind
# mount in a private mount namespace.
live_load() { # ns
	ip -n "$1" link add l0 type veth peer name l1 &&
		ip netns exec "$1" "$LOADER" load --mode skb l0 >/dev/null || xt_fail "load in $1 failed"
}
eng_ns L1 live1
eng_ns L2 live2
eng_ns L3 live3
for n in "$L1" "$L2" "$L3"; do live_load "$n"; done
P1=$(st_pin_dir "$L1" l0) P2=$(st_pin_dir "$L2" l0) P3=$(st_pin_dir "$L3" l0)
sleep 120 9<"/run/netns/$L2" &
HOLD2=$!
XT_PIDS+=("$HOLD2")
: >"$T/l3"
# shellcheck disable=SC2016
unshare -m --propagation private bash -c 'mount --bind "$1" "$2" && echo up && exec sleep 120' \
	_ "/run/netns/$L3" "$T/l3" >"$T/hold3" 2>&1 &
HOLD3=$!
XT_PIDS+=("$HOLD3")
xt_wait_for 5 grep -q up "$T/hold3" || xt_fail "cannot hold $L3 by a private bind mount: $(cat "$T/hold3")"
LOADER_ABS=$(realpath "$LOADER") # nsenter -m starts at the mount namespace's root
xt_on_exit nsenter --net="/proc/$HOLD2/fd/9" "$LOADER_ABS" unload l0
xt_on_exit nsenter -t "$HOLD3" -m nsenter --net="$T/l3" "$LOADER_ABS" unload l0
ip netns del "$L2"
ip netns del "$L3"
# Anything that loads sweeps: here a load in E.
# (Another suite's load may sweep first: then only the outcome can be checked.)
out=$(ip netns exec "$E" "$LOADER" load -v --mode skb ea 2>&1) || xt_fail "load in E: $out"
[ ! -e "$BPFFS/xpile/$DEAD" ] || xt_fail "pins of a namespace that is gone stay: $(find "$BPFFS/xpile/$DEAD")"
[ ! -e "/run/xpile/$DEAD" ] || xt_fail "run files of a namespace that is gone stay"
for p in "$P1" "$P2" "$P3"; do
	[ -e "$p/xp_steer" ] || xt_fail "the sweep removed the pins of a live namespace: $p"
done
nsenter --net="/proc/$HOLD2/fd/9" "$LOADER" status l0 | grep -q ' xpile: ' ||
	xt_fail "the fd-held namespace's program is no longer found"
nsenter -t "$HOLD3" -m nsenter --net="$T/l3" "$LOADER_ABS" unload l0 >/dev/null ||
	xt_fail "the mount-held namespace's program is no longer found"
nsenter --net="/proc/$HOLD2/fd/9" "$LOADER" unload l0 >/dev/null
ip netns exec "$L1" "$LOADER" unload l0 >/dev/null
ip netns exec "$E" "$LOADER" unload ea >/dev/null
for p in "$P2" "$P3"; do [ ! -e "$p" ] || xt_fail "pins left at $p"; done
echo "sweep: a gone namespace's pins and run files removed; live ones kept (by /run/netns, an fd, a private mount)"
echo PASS
