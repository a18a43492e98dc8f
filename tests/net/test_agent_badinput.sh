#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bad input to xpile-agent, each case with its exact one-line answer:
#  - 55 broken configs (4 with a key given twice): `run --check` and `run` exit 2 with
#    ONE line naming the file, the field's path (interfaces[1].rules[3]) and what is
#    wrong; nothing attached; a FIFO, a device or a directory as --config is refused
#    at once (a FIFO blocked the read with SIGTERM held), and SIGTERM stops a start;
#  - 26 bad control-socket requests (a field of the wrong type says so): one error
#    reply each, and the agent serves the next request (a valid status) every time; a
#    line over 4096 bytes is refused and its connection closed; a peer whose uid is not
#    allowed is refused;
#  - a second agent beside the live one, on the same sockets or its own: refused in one
#    line naming the live one's pid, and nothing of the live one's touched;
#  - bad `xpile-agent ctl` usage: one line, exit 2.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
command -v setpriv >/dev/null || xt_skip "setpriv missing: apt-get install util-linux"

eng_pair
ag_dir D
AGENT=$(realpath "$AGENT")
cd "$D" || xt_fail "cd $D"

cfg=() want=()
c() { cfg+=("$1") && want+=("$2"); }
c '' 'c.json: empty; a config is one JSON object, e.g. {"interfaces": [...]}'
c '{' "c.json: line 1 column 1: JSON syntax: string or '}' expected near end of file"
c '[]' 'c.json: expected a JSON object at the top, got array'
c '{"interfaces":[{"name":"b0"}]} x' "c.json: line 1 column 32: JSON syntax: end of file expected near 'x'"
c '{"interfaces":[{"name":"b0"}],}' "c.json: line 1 column 31: JSON syntax: string or '}' expected near '}'"
c $'{\n "interfaces": [\n  {"name": "b0",}\n ]\n}' "c.json: line 3 column 17: JSON syntax: string or '}' expected near '}'"
# A key given twice: JSON libraries commonly keep one silently; the agent refuses.
c '{"interfaces":[{"name":"b0"}],"interfaces":[]}' 'c.json: interfaces: key "interfaces" given twice in one object (again at line 1 column 42); keep one'
c '{"interfaces":[{"name":"b0","rules":[],"name":"b0"}]}' 'c.json: interfaces[0].name: key "name" given twice in one object (again at line 1 column 45); keep one'
c $'{"interfaces":[{"name":"b0"},\n {"name":"b0","mode":"skb","m\\u006fde":"native"}]}' 'c.json: interfaces[1].mode: key "mode" given twice in one object (again at line 2 column 38); keep one'
c '{"interfaces":[{"name":"b0"}],"control":{"path":"/a","path":"/b"}}' 'c.json: control.path: key "path" given twice in one object (again at line 1 column 59); keep one'
c '{"interfaces":[{"name":"b0"}], "bogus": 1}' 'c.json: bogus: unknown field; expected one of: interfaces, control, metrics, device_plugin, kubelet'
c '{}' 'c.json: interfaces: missing; list the interfaces the agent manages'
c '{"interfaces":{}}' 'c.json: interfaces: expected an array of interfaces, got object'
c '{"interfaces":[{"name":"b0","queues":0}]}' 'c.json: interfaces[0].queues: 0 out of range: expected 1..256'
c '{"interfaces":[{"name":"b0","queues":"2"}]}' 'c.json: interfaces[0].queues: expected an integer, got string'
c '{"interfaces":[{"name":"b0","queues":-1}]}' 'c.json: interfaces[0].queues: -1 out of range: expected 1..256'
c '{"interfaces":[{"name":"b0","queues":4}]}' 'c.json: interfaces[0].queues: b0 has 1 RX queue(s), 4 asked: add queues (ethtool -L b0 combined 4) before the agent attaches'
c '{"interfaces":[{"name":"b0","hosts":["a,b"]}]}' 'c.json: interfaces[0].hosts[0]: "a,b" is not a host name'
c '{"interfaces":[{"name":"b0","mode":"fast"}]}' 'c.json: interfaces[0].mode: "fast": expected auto, native or skb'
c '{"interfaces":[{"name":"b0","on_replace":"fight"}]}' 'c.json: interfaces[0].on_replace: "fight": expected reattach or report'
# shellcheck disable=SC2016 # the backquotes are the message's
c '{"interfaces":[{"name":"b0"},{"name":"nosuch0"}]}' 'c.json: interfaces[1].name: no interface nosuch0 in this network namespace (see `ip link`)'
c '{"interfaces":[{"name":"b0"},{"name":"b0"}]}' 'c.json: interfaces[1].name: b0 is listed already as interfaces[0]'
c '{"interfaces":[{"nmae":"b0"}]}' 'c.json: interfaces[0].nmae: unknown field; expected one of: name, queues, mode, default, rules, hosts, on_replace, pool, numa_node, pinned_map'
c '{"interfaces":[{"queues":1}]}' 'c.json: interfaces[0].name: missing; every interface needs its name'
c '{"interfaces":[{"name":""}]}' 'c.json: interfaces[0].name: empty string'
c '{"interfaces":[{"name":"a/b"}]}' 'c.json: interfaces[0].name: "a/b" is not an interface name'
c '{"interfaces":[{"name":"b0","rules":["udp dport 99999 action xsk"]}]}' "c.json: interfaces[0].rules[0]: dport: expected PORT or LO-HI with LO <= HI in 0..65535, got '99999'"
c '{"interfaces":[{"name":"b0","rules":["udp dport 53 action pass","tcp action explode"]}]}' "c.json: interfaces[0].rules[1]: unknown action 'explode': expected pass, drop, tx, redirect IFNAME, xsk [slot N], route [via IFNAME]"
c '{"interfaces":[{"name":"b0","rules":[""]}]}' 'c.json: interfaces[0].rules[0]: empty string'
c '{"interfaces":[{"name":"b0","rules":[5]}]}' 'c.json: interfaces[0].rules[0]: expected a string, got int'
c '{"interfaces":[{"name":"b0","rules":"udp"}]}' 'c.json: interfaces[0].rules: expected an array of rule strings, got string'
c '{"interfaces":[{"name":"b0","default":"explode"}]}' "c.json: interfaces[0].default: unknown action 'explode': expected pass, drop, tx, redirect IFNAME, xsk [slot N], route [via IFNAME]"
c '{"interfaces":[{"name":"b0","default":"drop now"}]}' 'c.json: interfaces[0].default: trailing words after the action "drop"'
c '{"interfaces":[{"name":"b0"}],"control":[]}' 'c.json: control: expected an object, got array'
c '{"interfaces":[{"name":"b0"}],"control":{"mode":"0999"}}' 'c.json: control.mode: "0999" is not a file mode: expected octal like "0600"'
c '{"interfaces":[{"name":"b0"}],"control":{"path":"relative.sock"}}' 'c.json: control.path: "relative.sock" is not an absolute path'
c '{"interfaces":[{"name":"b0"}],"control":{"allow_uids":[-1]}}' 'c.json: control.allow_uids[0]: -1 out of range: expected 0..4294967294'
c '{"interfaces":[{"name":"b0"}],"metrics":{"address":"localhost"}}' 'c.json: metrics.address: "localhost": expected HOST:PORT, e.g. 127.0.0.1:9469'
c '{"interfaces":[{"name":"b0"}],"metrics":{"address":"127.0.0.1:0"}}' 'c.json: metrics.address: "127.0.0.1:0": expected HOST:PORT, e.g. 127.0.0.1:9469'
c '{"interfaces":[{"name":"b0"}],"metrics":{"xsk_stats":"ptrace"}}' 'c.json: metrics.xsk_stats: "ptrace": expected diag, pidfd or off'
c '{"interfaces":[{"name":"b0"}],"device_plugin":{"idle_timeout":0}}' 'c.json: device_plugin.idle_timeout: 0 out of range: expected 0.05..3600 seconds'
c "{\"interfaces\":[{\"name\":\"b0\"}],\"device_plugin\":{\"dir\":\"/$(printf 'x%.0s' {1..90})\"}}" "c.json: device_plugin.dir: longer than 75 bytes: DIR/NETDEV/afxdp.sock must fit a Unix socket's 107"
c '{"interfaces":[{"name":"b0"}],"device_plugin":{"max_connections":1e9}}' 'c.json: device_plugin.max_connections: expected an integer, got double'
c '{"interfaces":[{"name":"b0"}],"device_plugin":{"bogus":1}}' 'c.json: device_plugin.bogus: unknown field; expected one of: dir, mode, group, idle_timeout, max_connections'
c '{"interfaces":[{"name":"b0"}],"device_plugin":{"group":-1}}' 'c.json: device_plugin.group: -1 out of range: expected 0..4294967294'
c '{"interfaces":[{"name":"b0"}],"device_plugin":{"group":"no-such-group"}}' 'c.json: device_plugin.group: no group "no-such-group" in this system'"'"'s group database: give its gid'
c '{"interfaces":[{"name":"b0"}],"device_plugin":{"group":true}}' 'c.json: device_plugin.group: expected a gid or a group name, got boolean'
# The kubelet side: its section and each interface's pool.
c '{"interfaces":[{"name":"b0"}],"kubelet":{"bogus":1}}' 'c.json: kubelet.bogus: unknown field; expected one of: dir, resource_prefix, pod_resources'
c '{"interfaces":[{"name":"b0"}],"kubelet":{"resource_prefix":"xpile"}}' 'c.json: kubelet.resource_prefix: "xpile" is not a domain name like "xpile.io" (extended resources need one)'
c '{"interfaces":[{"name":"b0"}],"kubelet":{"dir":"kl"}}' 'c.json: kubelet.dir: "kl" is not an absolute path'
c '{"interfaces":[{"name":"b0","pool":"Fast_Q"}]}' "c.json: interfaces[0].pool: \"Fast_Q\" is not a pool name: lower-case letters, digits and '-' (the resource is PREFIX/POOL)"
c '{"interfaces":[{"name":"b0","numa_node":4096}]}' 'c.json: interfaces[0].numa_node: 4096 out of range: expected 0..1023'
c '{"interfaces":[{"name":"b0","pinned_map":"yes"}]}' 'c.json: interfaces[0].pinned_map: expected true or false, got string'
n=0
for i in "${!cfg[@]}"; do
	printf '%s' "${cfg[$i]}" >c.json
	for mode in --check ""; do
		# shellcheck disable=SC2086 # $mode is one word or none
		ip netns exec "$B" timeout 10 "$AGENT" run --config c.json $mode >out 2>err
		rc=$?
		[ $rc = 2 ] || xt_fail "config $i (${cfg[$i]}) ${mode:-run}: exit $rc, want 2: $(cat err)"
		[ ! -s out ] && [ "$(wc -l <err)" = 1 ] || xt_fail "config $i ${mode:-run}: not one line: $(cat out err)"
		[ "$(cat err)" = "xpile-agent: ${want[$i]}" ] ||
			xt_fail "config $i (${cfg[$i]}): got '$(cat err)', want 'xpile-agent: ${want[$i]}'"
	done
	n=$((n + 1))
done
printf '{"interfaces":[{"name":"b0\0"}]}' >c.json
ip netns exec "$B" "$AGENT" run --check --config c.json 2>err
[ $? = 2 ] && [ "$(cat err)" = "xpile-agent: c.json: holds a NUL byte at offset 26; a config is JSON text" ] ||
	xt_fail "NUL config: $(cat err)"
"$AGENT" run --check --config /nonexistent.json 2>err
[ $? = 2 ] && [ "$(cat err)" = "xpile-agent: /nonexistent.json: cannot open: No such file or directory" ] ||
	xt_fail "missing config: $(cat err)"
# Not a regular file: refused at once (a FIFO would block the read, with the stop
# signals already waiting for the loop), by --check and run alike.
mkfifo c.fifo
for p in c.fifo:a\ FIFO /dev/null:a\ character\ device .:a\ directory; do
	for mode in --check ""; do
		t0=$(date +%s%N)
		# shellcheck disable=SC2086 # $mode is one word or none
		ip netns exec "$B" timeout -k 1 5 "$AGENT" run --config "${p%%:*}" $mode 2>err
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ $rc = 2 ] && [ "$(cat err)" = "xpile-agent: ${p%%:*}: ${p#*:}, not a regular file: --config takes the JSON file itself" ] ||
			xt_fail "--config ${p%%:*} ${mode:-run}: exit $rc after $ms ms: $(cat err)"
		[ $ms -lt 3000 ] || xt_fail "--config ${p%%:*}: refused only after $ms ms"
	done
done
# A stop request during start-up is not held back while the config is read.
ip netns exec "$B" "$AGENT" run --config c.fifo 2>/dev/null &
P=$!
sleep 0.3
kill -TERM "$P" 2>/dev/null
xt_wait_for 3 bash -c "! kill -0 $P 2>/dev/null" || { kill -9 "$P"; wait "$P"; xt_fail "SIGTERM did not stop an agent at start-up"; }
wait "$P"
ip -n "$B" link show b0 | grep -q xdp && xt_fail "a refused config attached something"
echo "$((n + 8)) broken configs: each one line, exit 2, nothing attached; a FIFO, a device and a directory refused at once"

# The control socket.
printf '%s\n' \
	'{"interfaces": [{"name": "b0", "default": "pass", "rules": ["udp dport 5000 action drop"]}],' \
	" \"control\": {\"path\": \"$D/ctl.sock\", \"mode\": \"0666\", \"allow_uids\": [0]}," \
	" \"device_plugin\": {\"dir\": \"$D/dp\"}}" >agent.json
ag_start AG "$B" "$D/agent.json" --detach-on-exit
ctl() { timeout 10 "$AGENT" ctl --socket "$D/ctl.sock" "$@"; }
req=() rep=()
r() { req+=("$1") && rep+=("$2"); }
CMDS='one of status, stats, rules, rule_add, rule_del, rules_replace, detach, attach, reload, audit'
r '{"cmd":' "malformed JSON at column 7: unexpected token near end of file"
r '{"cmd":"status"} trailing' "malformed JSON at column 25: end of file expected near 'trailing'"
r '{"cmd":"status","cmd":"reload"}' "malformed JSON at column 21: duplicate object key near '\\\"cmd\\\"'"
r '' 'empty request: one JSON object per line, e.g. {\"cmd\":\"status\"}'
r '   ' 'empty request: one JSON object per line, e.g. {\"cmd\":\"status\"}'
r '[1]' 'a request is a JSON object like {\"cmd\":\"status\"}'
r '{}' "\\\"cmd\\\" missing: $CMDS"
r '{"cmd":5}' "\\\"cmd\\\": expected a string, got int; $CMDS"
r '{"cmd":null}' "\\\"cmd\\\": expected a string, got null; $CMDS"
r '{"cmd":["status"]}' "\\\"cmd\\\": expected a string, got array; $CMDS"
r '{"cmd":"explode"}' "unknown cmd \\\"explode\\\": $CMDS"
r '{"cmd":"rules"}' 'rules: \"iface\" missing: name an interface of the config'
r '{"cmd":"stats","iface":5}' 'stats: \"iface\": expected a string, got int; name an interface of the config'
r '{"cmd":"detach","iface":{}}' 'detach: \"iface\": expected a string, got object; name an interface of the config'
r '{"cmd":"rules","iface":"nosuch"}' 'rules: no interface nosuch served (see the status command)'
r '{"cmd":"rule_add","iface":"b0"}' 'rule_add: \"rule\" must be a rule string, e.g. \"udp dport 53 action pass\"'
r '{"cmd":"rule_add","iface":"b0","rule":"udp dport 99999 action drop"}' "rule_add: dport: expected PORT or LO-HI with LO <= HI in 0..65535, got '99999'"
r '{"cmd":"rule_add","iface":"b0","rule":""}' 'rule_add: empty rule'
r '{"cmd":"rule_del","iface":"b0","id":0}' 'rule_del: id 0 out of range: expected 1..4294967295'
r '{"cmd":"rule_del","iface":"b0","id":77}' 'b0: no rule with id 77'
r '{"cmd":"rule_del","iface":"b0","id":"1"}' 'rule_del: \"id\" must be a rule id (see the rules command)'
r '{"cmd":"rules_replace","iface":"b0","rules":[1]}' 'rules_replace: rules[0]: expected a string'
r '{"cmd":"rules_replace","iface":"b0","rules":"x"}' 'rules_replace: \"rules\" must be an array of rule strings'
r '{"cmd":"rules_replace","iface":"b0","rules":["tcp action explode"]}' "rules_replace: rules[0]: unknown action 'explode': expected pass, drop, tx, redirect IFNAME, xsk [slot N], route [via IFNAME]"
r '{"cmd":"attach","iface":"b0"}' 'attach: b0 is served already'
r '{"cmd":"attach","iface":"zz"}' "attach: zz is not in the config ($D/agent.json)"
for i in "${!req[@]}"; do
	got=$(ctl --raw "${req[$i]}" 2>err)
	rc=$?
	[ $rc = 1 ] || xt_fail "request '${req[$i]}': exit $rc: $got"
	[ "$got" = "{\"ok\":false,\"error\":\"${rep[$i]}\"}" ] ||
		xt_fail "request '${req[$i]}': got $got, want {\"ok\":false,\"error\":\"${rep[$i]}\"}"
	[ "$(wc -l <err)" = 1 ] || xt_fail "request '${req[$i]}': ctl printed $(cat err)"
	ctl status >/dev/null || xt_fail "agent stopped serving after '${req[$i]}'"
done
[ "$(ctl rules b0 | jq '.rules | length')" = 1 ] || xt_fail "bad requests changed the rules: $(ctl rules b0)"
# A line over 4096 bytes: one error, and the connection is closed.
got=$(ctl --raw "$(printf 'y%.0s' {1..5000})" 2>/dev/null)
[ "$got" = '{"ok":false,"error":"request longer than 4096 bytes: refused, connection closed"}' ] ||
	xt_fail "long line: $got"
ctl status >/dev/null || xt_fail "agent stopped serving after a long line"
# A peer that is not allowed (nobody; the socket's mode lets it connect).
got=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$AGENT" ctl --socket "$D/ctl.sock" status 2>/dev/null)
[ "$got" = '{"ok":false,"error":"peer uid 65534 gid 65534 is not allowed: see control.allow_uids and control.allow_gids"}' ] ||
	xt_fail "peer uid 65534: $got"
grep -q "control: peer uid 65534 gid 65534 pid [0-9]* refused" "$XT_TMP/AG.log" || xt_fail "refusal not logged"
ctl status >/dev/null || xt_fail "agent stopped serving after a refused peer"
echo "$((${#req[@]} + 2)) bad control requests: one error reply each, the agent kept serving; uid 65534 refused"

# A second agent beside the live one, with the same config or with sockets of its own:
# refused before it touches anything, naming the live one, whose sockets stay its own.
ino=$(stat -c %i "$D/dp/b0/afxdp.sock")
sed -e "s|$D/ctl.sock|$D/ctl2.sock|" -e "s|$D/dp|$D/dp2|" agent.json >agent2.json
for cfg in agent.json agent2.json; do
	ip netns exec "$B" timeout 10 "$AGENT" run --config "$cfg" >out 2>err
	rc=$?
	[ $rc = 1 ] && [ ! -s out ] &&
		[ "$(cat err)" = "xpile-agent: b0: another agent (pid $AG) serves this interface: stop it first (one agent per interface and network namespace)" ] ||
		xt_fail "a second agent ($cfg): exit $rc: $(cat out err)"
done
[ "$(stat -c %i "$D/dp/b0/afxdp.sock")" = "$ino" ] && [ ! -e "$D/dp2" ] && [ ! -e "$D/ctl2.sock" ] ||
	xt_fail "the second agent touched the sockets: $(ls -liR "$D")"
ctl status >/dev/null || xt_fail "the live agent stopped serving after a second one tried"
echo "a second agent beside the live one: $(cat err)"
# One on another interface, with sockets of its own, cannot share the live one's HTTP
# port (with SO_REUSEPORT it did, and the two answered the scrapes in turn).
xt_veth "$A" a9 "$B" b9
sed -e 's|"b0"|"b9"|' agent2.json >agent3.json
ip netns exec "$B" timeout 10 "$AGENT" run --config agent3.json --detach-on-exit >out 2>err
rc=$?
[ $rc = 1 ] && grep -qxF "xpile-agent: metrics: cannot serve HTTP on 127.0.0.1:9469 (address in use? metrics.address)" err ||
	xt_fail "a second agent on b9 with the same metrics port: exit $rc: $(cat out err)"
! ip -n "$B" link show b9 | grep -q xdp && [ ! -e "$BPFFS/xpile/ns$(st_ns_ino "$B")/b9" ] ||
	xt_fail "the refused agent left b9 attached or pinned"
ctl status >/dev/null || xt_fail "the live agent stopped serving after a second one tried its port"

# The client's own usage errors: one line, exit 2, nothing sent.
for a in "" "explode" "rules" "rule-del b0" "rule-del b0 x" "status extra" "--raw"; do
	# shellcheck disable=SC2086 # words on purpose
	"$AGENT" ctl --socket "$D/ctl.sock" $a >out 2>err
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] && [ ! -s out ] || xt_fail "ctl $a: exit $rc: $(cat out err)"
done
ag_stop "$AG" || xt_fail "agent exit status $?"
st_no_trace "$B" b0 || xt_fail "left behind"
echo PASS
