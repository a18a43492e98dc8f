#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The benchmark behind `xpile-bench handover` (docs/engine.md, Handover):
#
#   XB_HANDOVERS 100           handovers in a row per rate, each to a new process
#   XB_RATES     0,100000      generator rates (pps); 0: no traffic
#   XB_CORE      0             the engine's core (the generator takes another if any)
#   XB_XPILE     build/xpile   the engine binary
#   XB_KEEP      (unset)       a directory to keep each rate's handover and summary lines in
#
# Topology (names unique to this run, 198.18.0.0/15, removed on exit):
#   [H1] h1 <-veth-> e1 [E: xpile fwd --handover] e2 <-veth-> h2 [H2]
# At a rate R > 0 an xpile txonly on h1 sends R UDP packets per second to h2, whose
# link counts them: lost = sent - received.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
. tools/lib/netns.sh

xpile=${XB_XPILE:-$XT_BUILD/xpile}
n=${XB_HANDOVERS:-100}
rates=${XB_RATES:-0,100000}
core=${XB_CORE:-0}
die() { echo "xpile-bench handover: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP, AF_XDP): run as root"
[ -x "$xpile" ] || die "no engine at $xpile: run make"
[[ $rates =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--rates '$rates': comma-separated packet rates, e.g. 0,100000"
gcore=$(((core + 1) % $(nproc)))

TMP=$(mktemp -d /tmp/xpile-bench-ho.XXXXXX)
xt_on_exit rm -rf "$TMP"
xt_ns_var H1 h1
xt_ns_var H2 h2
xt_ns_var E e
xt_veth "$H1" h1 "$E" e1
xt_veth "$H2" h2 "$E" e2
for p in "$H1 h1 198.18.9.1" "$H2 h2 198.18.9.2"; do
	read -r ns ifn addr <<<"$p"
	set -- "$ns" "$ifn" "$addr"
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip -n "$1" addr add "$3/24" dev "$2"
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1
done
for i in e1 e2; do ip netns exec "$E" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; done
h2mac=$(ip -n "$H2" -o link show h2 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$H1" neigh add 198.18.9.2 lladdr "$h2mac" dev h1
SOCK=$TMP/ho.sock
args=(--iface e1 --iface e2 --mode fwd --cores "$core" --interval 1 --quiet --handover "$SOCK")

wait_line() { # file pattern seconds
	local deadline=$((SECONDS + $3))
	until grep -q "$2" "$1" 2>/dev/null; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.02
	done
}
# The four links' counters as KEY=VALUE words: IF_rx, IF_tx (packets), IF_rx_dropped,
# IF_tx_dropped (a veth counts a full peer backlog as its own tx drop).
links() {
	{
		ip -n "$H1" -s -j link show h1
		ip -n "$E" -s -j link show e1
		ip -n "$E" -s -j link show e2
		ip -n "$H2" -s -j link show h2
	} | python3 -c '
import json, sys
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0; out = []
while i < len(text):
    if text[i].isspace(): i += 1; continue
    o, i = dec.raw_decode(text, i)
    n, s = o[0]["ifname"], o[0]["stats64"]
    for d in ("rx", "tx"):
        out.append("%s_%s=%d %s_%s_dropped=%d" % (n, d, s[d]["packets"], n, d, s[d]["dropped"]))
print(" ".join(out))'
}
# Every counter a lost packet can land in on this path, as KEY=VALUE words: the links'
# drops, the per-CPU backlog drops of /proc/net/softnet_stat, e1's steer verdicts other
# than AF_XDP, and the sockets' XDP_STATISTICS and engine drops from an engine's last
# interval or summary line (cumulative per socket: the sockets are the same ones in
# every generation; up to --interval old).
where() { # summary-json-file
	python3 -c '
import json, sys
out = [w for w in sys.argv[2].split() if "_dropped=" in w]
sn = sum(int(l.split()[1], 16) for l in open("/proc/net/softnet_stat"))
out.append("softnet_dropped=%d" % sn)
out += ["e1_" + w for w in sys.argv[3].split()]
keys = ("rx_dropped", "rx_ring_full", "rx_fill_ring_empty_descs", "tx_dropped", "fill_starved")
last = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") in ("interval", "summary"):
        last[r["port"], r["queue"]] = r
tot = {k: sum(r.get(k, 0) for r in last.values()) for k in keys}
out += ["xsk_%s=%d" % (k, v) for k, v in tot.items()]
print(" ".join(out))' "${1:-/dev/null}" "$(links)" "$(verdicts)"
}
# e1's steer verdict counters (a packet the program passes to the kernel is lost here)
verdicts() {
	ip netns exec "$E" "$XT_BUILD/xpile-loader" stats --json e1 2>/dev/null | python3 -c '
import json, sys
o = json.load(sys.stdin)
steered = ("xsk_packets", "default_packets") # the path itself, not a loss
print(" ".join("%s=%d" % (k, v) for k, v in o.items()
               if (k.endswith("_packets") and k not in steered) or k.startswith("err_")))' 2>/dev/null || true
}
# KEY=VALUE words of two where() readings -> the non-zero differences
where_delta() { python3 -c '
import sys
a = dict(w.split("=") for w in sys.argv[1].split()); b = dict(w.split("=") for w in sys.argv[2].split())
print(" ".join("%s=%d" % (k, int(b[k]) - int(a.get(k, 0))) for k in b if int(b[k]) != int(a.get(k, 0))) or "none")' "$1" "$2"; }

IFS=, read -ra list <<<"$rates"
for rate in "${list[@]}"; do
	ip netns exec "$E" "$xpile" run "${args[@]}" --json >"$TMP/g0.json" 2>"$TMP/g0.err" &
	prev=$!
	XT_PIDS+=("$prev")
	wait_line "$TMP/g0.json" '"type":"ready"' 10 || { cat "$TMP/g0.err"; die "the engine did not start"; }
	: >"$TMP/summaries"
	# Counted from before the generator starts to after the path drained, so nothing is
	# in flight at either reading: sent - received is exactly what was lost.
	p0=$(links) w0=$(where "$TMP/g0.json")
	gen=
	if [ "$rate" -gt 0 ]; then
		# all of the generator on its core, its start-up too: the engine owns the other
		ip netns exec "$H1" taskset -c "$gcore" "$xpile" run --iface h1 --mode txonly --cores "$gcore" --rate "$rate" \
			--dst-mac "$h2mac" --src-ip 198.18.9.1 --dst-ip 198.18.9.2 --quiet --json \
			>"$TMP/gen.json" 2>"$TMP/gen.err" &
		gen=$!
		XT_PIDS+=("$gen")
		wait_line "$TMP/gen.json" '"type":"ready"' 10 || { cat "$TMP/gen.err"; die "the generator did not start"; }
		sleep 1 # a second of traffic through the first engine
	fi
	: >"$TMP/pauses"
	for i in $(seq 1 "$n"); do
		ip netns exec "$E" "$xpile" run "${args[@]}" --take-over "$SOCK" --json >"$TMP/g1.json" 2>"$TMP/g1.err" &
		pid=$!
		XT_PIDS+=("$pid")
		wait_line "$TMP/g1.json" '"role":"new"' 10 || { cat "$TMP/g1.err"; die "handover $i at $rate pps did not happen"; }
		wait "$prev" || die "the old engine exited $? at handover $i"
		grep '"role":"new"' "$TMP/g1.json" >>"$TMP/pauses"
		grep '"type":"summary"' "$TMP/g0.json" >>"$TMP/summaries"
		mv "$TMP/g1.json" "$TMP/g0.json"
		prev=$pid
	done
	if [ -n "$gen" ]; then
		kill -INT "$gen"
		wait "$gen"
	fi
	sleep 0.3
	p1=$(links) w1=$(where "$TMP/g0.json")
	kill -INT "$prev"
	wait "$prev"
	grep '"type":"summary"' "$TMP/g0.json" >>"$TMP/summaries"
	w1="${w1%% xsk_rx_dropped=*} $(where "$TMP/g0.json" | grep -o 'xsk_rx_dropped=.*')"
	[ "$rate" -gt 0 ] && echo "handover rate=$rate drops $(where_delta "$w0" "$w1")"
	if [ -n "${XB_KEEP:-}" ]; then # the raw lines, for a closer look
		mkdir -p "$XB_KEEP" && cp "$TMP/pauses" "$XB_KEEP/pauses.$rate" &&
			cp "$TMP/summaries" "$XB_KEEP/summaries.$rate"
	fi
	python3 - "$TMP/pauses" "$rate" "$n" "$(cut -d' ' -f1 /proc/loadavg)" "$p0" "$p1" \
		"$TMP/summaries" "$TMP/gen.json" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rate, n, load = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
a = dict(w.split("=") for w in sys.argv[5].split()); b = dict(w.split("=") for w in sys.argv[6].split())
d = {k: int(b[k]) - int(a[k]) for k in b}
if rate:
    # Each stage's count: the first one short of the stage before it is where packets went.
    eng = [json.loads(l) for l in open(sys.argv[7])]
    esum = lambda port, k: sum(r[k] for r in eng if r["port"] == port)
    gen = sum(json.loads(l)["tx_packets"] for l in open(sys.argv[8]) if '"summary"' in l)
    print("handover rate=%d path gen=%d h1_tx=%d e1_rx=%d engine_rx=%d engine_tx=%d "
          "engine_tx_dropped=%d e2_tx=%d h2_rx=%d"
          % (rate, gen, d["h1_tx"], d["e1_rx"], esum("e1", "rx_packets"),
             esum("e2", "tx_packets"), esum("e2", "tx_dropped"), d["e2_tx"], d["h2_rx"]))
p = sorted(r['pause_ns'] / 1e3 for r in rows)
g = sorted((r['first_work_ns'] - r['old_last_work_ns']) / 1e3 for r in rows
           if r['first_work_ns'] and r['old_last_work_ns'])
q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))] if v else 0
p = p or [0]
med = q(p, 0.5)
# Where the median handover's pause goes: park -> STATE received -> OK sent -> COMMIT
# received -> the first worker's turn.
ph = lambda a, b: q(sorted((r[b] - r[a]) / 1e3 for r in rows), 0.5) if rows else 0
print("handover rate=%d phases_us state=%.0f check=%.0f commit=%.0f resume=%.0f"
      % (rate, ph('old_park_ns', 'state_ns'), ph('state_ns', 'ok_ns'), ph('ok_ns', 'commit_ns'),
         ph('commit_ns', 'resume_ns')))
print("handover rate=%d handovers=%d pause_us min=%.0f median=%.0f p99=%.0f max=%.0f "
      "gap_us median=%.0f sent=%d lost=%d ring_pps=%.0f load=%s"
      % (rate, n, p[0], med, q(p, 0.99), p[-1], q(g, 0.5), d["h1_tx"] if rate else 0,
         max(0, d["h1_tx"] - d["h2_rx"]) if rate else 0, 2048 / (med / 1e6) if med else 0, load))
PY
done
