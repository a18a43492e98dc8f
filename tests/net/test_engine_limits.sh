#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Limits and refusals (issue 15 items 5, 13, 16, 17, 18, 19, 24, 25): a small pool in
# fwd serves both directions (or is refused with the minimum), a tagged full-size frame
# crosses fwd, and every bad setting gets one line naming the cause and the fix with
# the right exit status: 2 for options that cannot work, 1 for the environment.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
LOADER=$XT_BUILD/xpile-loader
[ -x "$LOADER" ] || xt_skip "xpile-loader not built: run make"
command -v iperf3 >/dev/null || xt_skip "iperf3 missing: apt-get install iperf3"

# want STATUS PATTERN CMD...: exit STATUS and exactly one line on stderr matching PATTERN
want() {
	local st=$1 pat=$2 rc
	shift 2
	"$@" >/dev/null 2>"$XT_TMP/want.err"
	rc=$?
	[ "$rc" = "$st" ] || { cat "$XT_TMP/want.err"; xt_fail "$* exited $rc, want $st"; }
	[ "$(wc -l <"$XT_TMP/want.err")" = 1 ] || { cat "$XT_TMP/want.err"; xt_fail "$*: want one line"; }
	grep -q -- "$pat" "$XT_TMP/want.err" || { cat "$XT_TMP/want.err"; xt_fail "$*: no '$pat'"; }
}

eng_wire_hosts 198.18.8 1500
H2_ADDR=198.18.8.2
in_e() { ip netns exec "$E" "$@"; }
fwd() { in_e "$XPILE" run --iface e1 --iface e2 --cores 0 --mode fwd "$@"; }

# Item 5: a pool too small for a batch per socket is refused with the minimum; the
# minimum passes every ping; a pool no bigger than one fill ring carries TCP both ways
# in every second (it gave 54, 0, 0 Mbit/s).
want 2 "at least 256" fwd --frames 255 --duration 1
eng_start FW "$E" --iface e1 --iface e2 --cores 0 --mode fwd --frames 256
got=$(ip netns exec "$H1" ping -c 20 -i 0.02 -W 1 198.18.8.2 | grep -o '[0-9]* received' | cut -d' ' -f1)
[ "${got:-0}" = 20 ] || xt_fail "--frames 256: $got of 20 pings answered"
eng_stop "$FW" || xt_fail "--frames 256: exit status $?"
eng_ledger_ok "$XT_TMP/FW.json" || xt_fail "--frames 256: ledger not clean"

eng_start FW "$E" --iface e1 --iface e2 --cores 0 --mode fwd --frames 4096
ip netns exec "$H2" iperf3 -s -1 -p 5202 >/dev/null 2>&1 &
XT_PIDS+=($!)
xt_wait_for 5 ip netns exec "$H2" bash -c "ss -ltn | grep -q :5202" || xt_fail "iperf3 server did not start"
ip netns exec "$H1" timeout 15 iperf3 -c "$H2_ADDR" -p 5202 -t 3 -i 1 -f m >"$XT_TMP/iperf" 2>&1 ||
	{ cat "$XT_TMP/iperf"; xt_fail "iperf3 through fwd --frames 4096 failed"; }
rates=$(grep -E '^\[ *[0-9]+\] +[0-9.]+-[0-9.]+ +sec' "$XT_TMP/iperf" | grep -v -E 'sender|receiver' |
	awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") print int($i)}')
# shellcheck disable=SC2086 # the rates on one line
echo "iperf3 through fwd --frames 4096, Mbit/s per second:" $rates
[ "$(echo "$rates" | wc -w)" -ge 3 ] || { cat "$XT_TMP/iperf"; xt_fail "iperf3 printed no intervals"; }
for r in $rates; do
	[ "$r" -ge 10 ] || xt_fail "fwd --frames 4096 starved: $rates Mbit/s"
done
eng_stop "$FW" || xt_fail "--frames 4096: exit status $?"
eng_ledger_ok "$XT_TMP/FW.json" || xt_fail "--frames 4096: ledger not clean"

# Item 24: an MTU whose full-size frame fits a frame only without a VLAN tag (2048-byte
# frames hold 1792 bytes: MTU 1778) turns multi-buffer on, and tagged full-size frames
# (1796 bytes, sent raw from h1: no 8021q module needed) cross fwd.
for p in "$H1 h1" "$E e1" "$E e2" "$H2 h2"; do
	# shellcheck disable=SC2086
	ip -n ${p% *} link set ${p#* } mtu 1778
done
H2MAC=$(ip -n "$H2" -o link show h2 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
eng_start VL "$E" --iface e1 --iface e2 --cores 0 --mode fwd
grep -q '"multi_buffer":true' "$XT_TMP/VL.json" || xt_fail "MTU 1778 + VLAN tag: multi-buffer not turned on"
# dst, src, 802.1Q tag (VLAN 5), IPv4: 14 + 4 + 1778 bytes
# shellcheck disable=SC2016 # a perl program, not shell
ip netns exec "$H1" perl -e '
	use Socket;
	my ($dst, $n) = @ARGV;
	open(my $f, "<", "/sys/class/net/h1/ifindex") or die; my $idx = <$f>; chomp $idx;
	socket(my $s, 17, 3, 0) or die "AF_PACKET: $!";
	my $mac = pack("H12", $dst =~ s/://gr);
	my $ip = pack("CCnnnCCnNN", 0x45, 0, 1778, 1, 0, 64, 17, 0, 0xc6120801, 0xc6120802);
	my $frame = $mac . pack("H12", "020000000001") . pack("nnn", 0x8100, 5, 0x0800) . $ip .
		("x" x (1778 - 20));
	my $sll = pack("S n i S C C a8", 17, 0x0003, $idx, 0, 0, 6, $mac);
	for (1 .. $n) { send($s, $frame, 0, $sll) or die "send: $!"; select(undef, undef, undef, 0.02); }
' "$H2MAC" 5 || xt_fail "cannot send raw tagged frames"
sleep 0.3
eng_stop "$VL" || xt_fail "VLAN: exit status $?"
rx=$(eng_last "$XT_TMP/VL.json" e1 0 rx_packets)
tx=$(eng_last "$XT_TMP/VL.json" e2 0 tx_packets)
echo "tagged 1796-byte frames at MTU 1778: e1 received ${rx:-0}, e2 sent ${tx:-0} of 5"
[ "${rx:-0}" -ge 5 ] && [ "${tx:-0}" -ge 5 ] || xt_fail "tagged full-size frames did not cross fwd"
want 2 "VLAN tag" fwd --no-multi-buffer --duration 1
for p in "$H1 h1" "$E e1" "$E e2" "$H2 h2"; do
	# shellcheck disable=SC2086
	ip -n ${p% *} link set ${p#* } mtu 1500
done

# Item 25: txonly --pkt-size beyond the MTU is refused at start; every bad size exits 2.
tx() { in_e "$XPILE" run --iface e1 --mode txonly --count 10 "$@"; }
want 2 "MTU 1500" tx --pkt-size 1600
want 2 "pkt-size" tx --pkt-size 63
want 2 "pkt-size" tx --pkt-size 4096

# Item 13: a pin path off bpffs creates nothing and says why.
NOPE=/tmp/xpile-nope-$$
want 1 "not on a bpffs" in_e "$XPILE" run --iface e1 --mode rxdrop --pin-path "$NOPE/deep/x" --duration 1
[ ! -e "$NOPE" ] || { rm -rf "$NOPE"; xt_fail "--pin-path created $NOPE"; }
want 1 "not on a bpffs" in_e "$LOADER" load --pin-path "$NOPE/deep/x" e1
[ ! -e "$NOPE" ] || { rm -rf "$NOPE"; xt_fail "loader --pin-path created $NOPE"; }

# Item 16: a malformed wiring plan stops the engine with the error.
ino=$(stat -L -c %i "/run/netns/$E")
mkdir -p "/run/xpile/ns$ino/e1"
printf 'zero one\n' >"/run/xpile/ns$ino/e1/wire.plan"
want 1 "wire" in_e "$XPILE" run --iface e1 --mode rxdrop --duration 1
rm -rf "/run/xpile/ns$ino"

# Item 18: a pool larger than the machine is refused before it is allocated.
want 2 "GiB of UMEM" in_e "$XPILE" run --iface e1 --mode rxdrop --frames 16777216 --hugepages never --duration 1

# Item 19: not a BPF object, or not ours.
want 1 "not a BPF ELF object" in_e "$LOADER" load --obj /etc/passwd e1
want 1 "not xpile's steer program" in_e "$LOADER" load --obj "$XT_BUILD/bpf/gen_tx.o" e1
eng_no_xdp "$E" e1 || xt_fail "a refused object left a program attached"

# Item 17: the memlock limit without CAP_IPC_LOCK, and a loader without privileges.
want 1 "RLIMIT_MEMLOCK is 65536 bytes" in_e setpriv --bounding-set -ipc_lock \
	bash -c "ulimit -l 64; exec $XPILE run --iface e1 --mode rxdrop --duration 1"
in_e "$LOADER" load e1 >/dev/null 2>&1 || xt_fail "loader load failed"
xt_on_exit "ip netns exec $E $LOADER unload --force e1"
nobody() { in_e setpriv --reuid nobody --regid nogroup --clear-groups --inh-caps=-all "$@"; }
want 1 "needs root" nobody "$LOADER" unload e1
nobody "$LOADER" status e1 >"$XT_TMP/st.out" 2>"$XT_TMP/st.err" && xt_fail "non-root status exited 0"
grep -q "cannot tell" "$XT_TMP/st.out" || { cat "$XT_TMP/st.out"; xt_fail "non-root status claims to know"; }
! grep -q "not xpile's" "$XT_TMP/st.out" || xt_fail "non-root status calls xpile's program not xpile's"
grep -q "needs root" "$XT_TMP/st.err" || xt_fail "non-root status does not say it needs root"
in_e "$LOADER" unload e1 >/dev/null 2>&1 || xt_fail "unload failed"
eng_no_xdp "$E" e1 || xt_fail "program left attached"
echo ok
