#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What README.md's "UMEM layout and memory" says the engine does with its memory:
#  1. the UMEM is a carve of a memfd-backed arena: the engine maps more address space
#     than the UMEM, pages back the UMEM only, and the memfd is an open fd;
#  2. --hugepages auto without enough hugepages says so once, with the exact
#     `echo N > /proc/sys/vm/nr_hugepages`, and the ready line names the page size;
#     after that very command the same run gets 2 MiB pages;
#  3. no mlock (VmLck 0): XDP_UMEM_REG pins the UMEM and charges RLIMIT_MEMLOCK itself,
#     so without CAP_IPC_LOCK a limit below the UMEM stops the engine with the fix, and
#     the limit that message names is enough;
#  4. each worker starts with its M3 slice: its first frames all lie in its slice of the
#     fill order and cover the channels (within 1) and the L1 sets (within 1 of even).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require

eng_ns A mema
eng_ns B memb
eng_veth "$A" a0 "$B" b0 4
eng_quiet "$A" a0
eng_quiet "$B" b0

json_num() { # file type field: the first TYPE line's FIELD
	grep -m1 "\"type\":\"$2\"" "$1" | grep -o "\"$3\":-\?[0-9]*" | cut -d: -f2
}

# ---- 1: the arena ----
eng_start E "$B" --iface b0:0,1,2,3 --cores 0,1 --mode rxdrop --hugepages never
umem=$(json_num "$XT_TMP/E.json" ready umem_bytes)
[ -n "$umem" ] && [ "$umem" -gt 0 ] || xt_fail "no umem_bytes in the ready line"
line=$(grep 'memfd:xpile-umem' "/proc/$E/maps" | head -1)
[ -n "$line" ] || { cat "/proc/$E/maps"; xt_fail "the UMEM is not a memfd mapping"; }
range=${line%% *}
mapped=$((0x${range#*-} - 0x${range%-*}))
fd=$(find "/proc/$E/fd" -lname '/memfd:xpile-umem*' | head -1)
[ -n "$fd" ] || xt_fail "the engine holds no memfd of its UMEM"
backed=$(($(stat -L -c %b "$fd") * 512))
echo "arena: mapped $mapped bytes, backed $backed, UMEM $umem"
[ "$mapped" -ge $((2 * umem)) ] || xt_fail "the arena maps $mapped bytes: no room beside the UMEM ($umem)"
[ "$backed" = "$umem" ] || xt_fail "the memfd holds $backed bytes of pages, the UMEM is $umem"
# ---- 3: no mlock ----
lck=$(awk '/^VmLck:/ {print $2}' "/proc/$E/status")
[ "$lck" = 0 ] || xt_fail "the engine mlocked $lck kB: XDP_UMEM_REG pins the UMEM already"
# ---- 4: M3 slices ----
python3 - "$XT_TMP/E.json" <<'EOF' || xt_fail "the workers did not start with even M3 slices"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
ready = next(l for l in lines if l['type'] == 'ready')
sl = sorted((l for l in lines if l['type'] == 'slice'), key=lambda l: l['first'])
ok = len(sl) == ready['workers'] == 2
pos = 0
for s in sl:
    ch = s['channels']
    print(f"worker {s['worker']}: slice [{s['first']}, {s['first'] + s['count']}), first "
          f"{s['frames']} frames: {s['in_slice']} in it, channels {ch}, L1 "
          f"{s['l1_min']}..{s['l1_max']} over {s['l1_sets']} sets")
    ok &= s['first'] == pos and s['count'] > 0
    pos += s['count']
    ok &= s['frames'] >= 64 and s['in_slice'] == s['frames']
    ok &= len(ch) >= 2 and max(ch) - min(ch) <= 1 and sum(ch) == s['frames']
    ok &= s['l1_sets'] > 0 and s['l1_max'] - s['l1_min'] <= 2
ok &= pos == ready['frames']
sys.exit(0 if ok else 1)
EOF
eng_stop "$E" || xt_fail "engine exited $? after the arena checks"

# ---- 2: hugepages ----
nr0=$(cat /proc/sys/vm/nr_hugepages)
xt_on_exit "echo $nr0 > /proc/sys/vm/nr_hugepages"
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
if [ "$free" -ge 64 ]; then
	# Pages left reserved (by the machine or an earlier job): give the free ones back so
	# the shortage is real; the exit trap puts the pool back.
	echo 0 >/proc/sys/vm/nr_hugepages
	free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
fi
if [ "$free" -lt 64 ]; then
	eng_start H "$B" --iface b0:0,1,2,3 --cores 0,1 --mode rxdrop --hugepages auto
	eng_stop "$H" || xt_fail "engine exited $? with --hugepages auto on 4 KiB pages"
	n=$(grep -c 'hugepages' "$XT_TMP/H.err")
	cmd=$(grep -o 'echo [0-9]* > /proc/sys/vm/nr_hugepages' "$XT_TMP/H.err")
	echo "auto without hugepages: $(grep hugepages "$XT_TMP/H.err")"
	[ "$n" = 1 ] && [ -n "$cmd" ] || { cat "$XT_TMP/H.err"; xt_fail "the 4 KiB fallback was not said once with the sysctl"; }
	[ "$(json_num "$XT_TMP/H.json" ready page_size)" = 4096 ] || xt_fail "ready line: page size not 4096"
	# The command it gave, run as given, is enough.
	sh -c "$cmd"
	if [ "$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)" -ge "${cmd//[^0-9]/}" ] 2>/dev/null ||
		[ "$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)" -gt "$free" ]; then
		eng_start G "$B" --iface b0:0,1,2,3 --cores 0,1 --mode rxdrop --hugepages auto
		eng_stop "$G" || xt_fail "engine exited $? on hugepages"
		[ "$(json_num "$XT_TMP/G.json" ready page_size)" = 2097152 ] ||
			{ cat "$XT_TMP/G.err"; xt_fail "after '$cmd' the UMEM is not on 2 MiB pages"; }
		! grep -q 'using 4 KiB pages' "$XT_TMP/G.err" || xt_fail "fallback said with hugepages there"
		echo "after '$cmd': 2 MiB pages"
	else
		echo "the kernel did not reserve the hugepages (fragmented): 2 MiB run not checked"
	fi
	echo "$nr0" >/proc/sys/vm/nr_hugepages
else
	echo "$free hugepages free: the fallback cannot be reached here"
fi

# ---- 3: RLIMIT_MEMLOCK charges the UMEM once ----
if command -v prlimit >/dev/null && setpriv --help 2>&1 | grep -q -- --bounding-set; then
	lim() { # KiB -> exit status; stderr in $XT_TMP/lim.err
		ip netns exec "$B" prlimit --memlock=$(($1 * 1024)) setpriv --inh-caps=-ipc_lock \
			--bounding-set=-ipc_lock timeout 20 "$XPILE" run --iface b0:0 --cores 0 \
			--mode rxdrop --duration 0.2 --hugepages never --frames 1024 --json \
			>"$XT_TMP/lim.out" 2>"$XT_TMP/lim.err"
	}
	lim 1024
	rc=$?
	echo "ulimit -l 1024 without CAP_IPC_LOCK: exit $rc: $(head -1 "$XT_TMP/lim.err")"
	[ $rc != 0 ] || xt_fail "a 1 MiB memlock limit did not stop a 4 MiB UMEM"
	grep -q 'RLIMIT_MEMLOCK.*ulimit -l.*LimitMEMLOCK.*CAP_IPC_LOCK' "$XT_TMP/lim.err" ||
		xt_fail "the memlock refusal does not name the fix"
	need=$(grep -o 'ulimit -l [0-9]*' "$XT_TMP/lim.err" | head -1 | grep -o '[0-9]*$')
	hard=$(ulimit -Hl)
	if [ "$hard" = unlimited ] || [ "$hard" -ge "$need" ]; then
		lim "$need"
		rc=$?
		[ $rc = 0 ] || { cat "$XT_TMP/lim.err"; xt_fail "the limit the message named (ulimit -l $need) was not enough"; }
		echo "ulimit -l $need, as the message said: runs"
	else
		echo "hard memlock limit $hard KiB < $need: the named limit not tried"
	fi
else
	echo "no prlimit/setpriv to drop CAP_IPC_LOCK: the memlock charge not checked"
fi
eng_no_xdp "$B" b0 || xt_fail "XDP program left attached"
echo ok
