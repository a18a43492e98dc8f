#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The agent's systemd unit (tools/deploy/xpile-agent.service.in, as the build writes
# it): `systemd-analyze security` scores its sandbox 2.5 or less, and the agent passes
# its suites under the unit's settings.
#
# systemd is not PID 1 on the test machines, so `systemd-run` cannot start a transient
# unit with the unit's properties. Instead each agent the suites start goes through a
# launcher that applies what the unit sets:
#  - SystemCallFilter= (every line, the groups expanded by `systemd-analyze
#    syscall-filter`), SystemCallErrorNumber=, SystemCallArchitectures=native,
#    RestrictAddressFamilies= and NoNewPrivileges=, with libseccomp as systemd does it
#    (tests/harness/unitrun);
#  - PrivateMounts= (a mount namespace of its own), ProtectKernelTunables= (/proc/sys
#    and /sys read-only; the bpffs, a mount of its own, stays writable as the unit's
#    ReadWritePaths= has it) and ProtectProc=invisible (a /proc with hidepid=invisible).
# Not applied here: the capability sets. With the unit's three capabilities the agent
# cannot read PID 1's namespace links, so inside a test's network namespace it would
# key its pins as the host's; the unit runs it in the host's namespaces, where that
# is right, and tests/net/test_agent_deploy.sh proves the three are enough and needed.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh
ag_require
command -v systemd-analyze >/dev/null || xt_skip "systemd-analyze missing (install-deps.sh installs systemd)"
U=$XT_BUILD/xpile-agent.service
UNITRUN=$XT_BUILD/tests/harness/unitrun
[ -s "$U" ] && [ -x "$UNITRUN" ] || xt_skip "$U or $UNITRUN not built: run make"
ag_dir T

# 1. The score.
systemd-analyze security --offline=true "$U" >"$T/security" 2>&1
score=$(sed -n 's/.*Overall exposure level for xpile-agent.service: \([0-9.]*\).*/\1/p' "$T/security")
[ -n "$score" ] || xt_fail "systemd-analyze security: $(tail -3 "$T/security")"
awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }' || xt_fail "exposure $score > 2.5: $(grep '✗' "$T/security")"
echo "systemd-analyze security: overall exposure $score (goal <= 2.5)"

# 2. The filter as the unit writes it: "@group name..." lines allow, "~..." lines deny.
expand() { # names or @groups -> system calls, one a line
	local g
	for g in "$@"; do
		if [[ $g == @* ]]; then
			# shellcheck disable=SC2046 # the group's members, words
			expand $(systemd-analyze syscall-filter "$g" 2>/dev/null |
				sed -n 's/^    \([-@a-z0-9_]*\)$/\1/p')
		else
			echo "$g"
		fi
	done
}
allow=() deny=()
while IFS= read -r v; do
	# shellcheck disable=SC2206 # the words of the setting
	if [[ $v == "~"* ]]; then deny+=(${v#\~}); else allow+=($v); fi
done < <(sed -n 's/^SystemCallFilter=//p' "$U")
[ ${#allow[@]} -gt 0 ] || xt_fail "the unit has no SystemCallFilter allow list"
comm -23 <(expand "${allow[@]}" | sort -u) <(expand "${deny[@]}" | sort -u) >"$T/allow"
grep -qx bpf "$T/allow" && grep -qx io_uring_enter "$T/allow" && ! grep -qx sched_setaffinity "$T/allow" ||
	xt_fail "the expanded filter: bpf, io_uring_enter allowed, sched_setaffinity not? $(wc -l <"$T/allow") calls"
errno=$(sed -n 's/^SystemCallErrorNumber=//p' "$U")
[ "$errno" = EPERM ] || xt_fail "SystemCallErrorNumber=$errno: the launcher knows EPERM"
families=$(sed -n 's/^RestrictAddressFamilies=//p' "$U" | tr ' ' ,)
grep -qx 'SystemCallArchitectures=native' "$U" && grep -qx 'NoNewPrivileges=yes' "$U" &&
	grep -qx 'ProtectKernelTunables=yes' "$U" && grep -qx 'ProtectProc=invisible' "$U" &&
	grep -qx 'PrivateMounts=yes' "$U" || xt_fail "the unit lost a setting this test applies"
echo "filter: $(wc -l <"$T/allow") system calls allowed, families $families"

# The sandbox: the launcher in a mount namespace of its own.
cat >"$T/sandbox" <<EOF
#!/bin/bash
# CMD in the unit's sandbox, as far as it is built without systemd (see
# tests/net/test_agent_unit.sh).
exec unshare -m --propagation private bash -c '
	set -e
	mount -t proc -o hidepid=invisible proc /proc
	mount --bind /proc/sys /proc/sys
	mount -o remount,bind,ro /proc/sys
	mount -o remount,bind,ro /sys
	exec "\$0" --allow "$T/allow" --errno 1 --families "$families" -- "\$@"
' "$(realpath "$UNITRUN")" "\$@"
EOF
printf '#!/bin/sh\nexec %s %s "$@"\n' "$T/sandbox" "$(realpath "$AGENT")" >"$T/agent"
chmod 755 "$T/sandbox" "$T/agent"
# The device-plugin suite also runs the agent with "xsk_stats": "pidfd", for which the
# unit says to add pidfd_getfd (and CAP_SYS_PTRACE): its sandbox does.
sed "s|$T/allow|$T/allow.pidfd|" "$T/sandbox" >"$T/sandbox.pidfd"
sed "s|$T/sandbox|$T/sandbox.pidfd|" "$T/agent" >"$T/agent.pidfd"
{ cat "$T/allow"; echo pidfd_getfd; } >"$T/allow.pidfd"
chmod 755 "$T/sandbox.pidfd" "$T/agent.pidfd"
# What it refuses: a call outside the list (EPERM), a family outside (EAFNOSUPPORT),
# writes to the kernel's tunables (EROFS); /proc is hidepid=invisible.
out=$("$T/sandbox" /usr/bin/python3 -c '
import errno, os, socket
def t(what, f):
    try:
        f()
        print(what, "allowed")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
t("sched_setaffinity", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))
t("AF_PACKET", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close())
t("AF_UNIX", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
t("/proc/sys", lambda: open("/proc/sys/net/core/somaxconn", "w").close())
t("/sys", lambda: open("/sys/kernel/mm/ksm/run", "w").close())
print("hidepid", "hidepid=invisible" in open("/proc/self/mountinfo").read())' 2>&1)
want=$'sched_setaffinity EPERM\nAF_PACKET EAFNOSUPPORT\nAF_UNIX allowed\n/proc/sys EROFS\n/sys EROFS\nhidepid True'
[ "$out" = "$want" ] || xt_fail "the sandbox: $out ($(cat "$T/sandbox"))"
"$T/agent" --version >/dev/null || xt_fail "the sandboxed agent does not start: $("$T/agent" --version 2>&1)"
echo "sandbox: sched_setaffinity EPERM, AF_PACKET EAFNOSUPPORT, /proc/sys and /sys read-only, hidepid"

# The agent the suites start is the sandboxed one: its status says so.
eng_pair 198.18.53
cat >"$T/agent.json" <<EOF
{"interfaces": [{"name": "b0", "default": "pass"}], "control": {"path": "$T/ctl.sock"},
 "device_plugin": {"dir": "$T/dp"}}
EOF
AGENT=$T/agent ag_start AG "$B" "$T/agent.json" --detach-on-exit
st=$(cat "/proc/$AG/status")
grep -qP '^Seccomp:\t2$' <<<"$st" && grep -qP '^NoNewPrivs:\t1$' <<<"$st" ||
	xt_fail "the sandboxed agent: $(grep -E 'Seccomp|NoNewPrivs' <<<"$st")"
grep -q 'hidepid=invisible' "/proc/$AG/mountinfo" || xt_fail "the sandboxed agent's /proc is not hidepid"
ag_stop "$AG" || xt_fail "the sandboxed agent did not stop cleanly: $(cat "$XT_TMP/AG.log")"
echo "the sandboxed agent: Seccomp 2 (filter), NoNewPrivs 1, /proc hidepid=invisible"

# 3. The suites: the device-plugin protocol with unprivileged engines, link
# notifications and re-attach, sd_notify readiness and reload.
for t in dp reattach notify; do
	echo "== under the unit's settings: test_agent_$t"
	a=$T/agent
	[ $t = dp ] && a=$T/agent.pidfd
	# The device-plugin suite's unprivileged engines under a uid of this run's own:
	# their locked memory is charged to it, not shared with nobody's of other tests.
	XPILE_TEST_UNPRIV_UID=$((61000 + $$ % 4000)) AGENT=$a bash "tests/net/test_agent_$t.sh" \
		>"$T/$t.log" 2>&1 ||
		xt_fail "test_agent_$t under the unit's settings: $(tail -15 "$T/$t.log")"
	tail -1 "$T/$t.log"
done
echo PASS
