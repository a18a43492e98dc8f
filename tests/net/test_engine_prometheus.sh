#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Engine metrics through the agent (issue 25, section 3), scraped by a real Prometheus
# (Debian's): an engine (rxdrop on x1, --name) and an agent in one namespace; the agent
# finds the engine by its control socket and serves its series on /metrics, labelled by
# engine, port, queue, worker and umem. `promtool check metrics` finds nothing; after M
# datagrams to x1 Prometheus stores rx packets = M for the queue and the worker, the
# ledger is ok and its places sum to the UMEM's frames. The agent's own verdict series
# count each packet once: after P datagrams to its interface (default pass),
# sum(xpile_verdict_packets_total) = P and the reason "default" = P. Once the engine
# stops its series are gone (absent() is how "engine down" is seen).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
for t in prometheus promtool curl jq; do
	command -v $t >/dev/null || xt_skip "$t missing: apt-get install prometheus curl jq (tools/setup/install-deps.sh)"
done

eng_ns H1 h1
eng_ns E eng
xt_veth "$H1" x1h "$E" x1
xt_veth "$H1" y0h "$E" y0
eng_host "$H1" x1h 198.18.28.1/24
eng_host "$H1" y0h 198.18.29.1/24
eng_host "$E" y0 198.18.29.2/24
eng_quiet "$E" x1
NAME="xph25p$$"
PORT=9473 PPORT=19473

eng_start ENG "$E" --iface x1 --mode rxdrop --cores 0 --name "$NAME"
ag_dir D
cat >"$D/agent.json" <<JSON
{
  "interfaces": [{"name": "y0", "default": "pass"}],
  "control": {"path": "$D/ctl.sock"},
  "metrics": {"address": "127.0.0.1:$PORT"},
  "device_plugin": {"dir": "$D/dp"}
}
JSON
ag_start AG "$E" "$D/agent.json"
inb() { ip netns exec "$E" "$@"; }

inb curl -s -m 3 "http://127.0.0.1:$PORT/metrics" >"$D/metrics.txt" || xt_fail "GET /metrics failed"
out=$(promtool check metrics <"$D/metrics.txt" 2>&1) || xt_fail "promtool check metrics: $out"
[ -z "$out" ] || xt_fail "promtool check metrics found: $out"
grep -qx "xpile_engine_up{engine=\"$NAME\"} 1" "$D/metrics.txt" || xt_fail "no xpile_engine_up for $NAME: $(grep engine_up "$D/metrics.txt")"
# The dashboard and the alert rules that ship name only series this scrape has.
for n in $(jq -r '.. | objects | select(has("expr")) | .expr' tools/deploy/monitoring/grafana-xpile.json |
	cat - <(grep -v '^ *#' tools/deploy/monitoring/xpile-alerts.yml) | grep -o 'xpile_[a-z0-9_]*' | sort -u); do
	grep -q "^# TYPE $n " "$D/metrics.txt" || xt_fail "the dashboard or the alerts name $n, which the agent does not serve"
done
echo "promtool check metrics: nothing found in $(grep -vc '^#' "$D/metrics.txt") samples"

cat >"$D/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: xpile
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
inb prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$D/prom.log" 2>&1 &
XT_PIDS+=($!)
xt_wait_for 20 inb curl -sf -m 1 "http://127.0.0.1:$PPORT/-/ready" ||
	xt_fail "prometheus did not start: $(tail -5 "$D/prom.log")"
query() { # PromQL -> the first sample's value ("" when none)
	inb curl -s -m 3 "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
wait_query() { # seconds PromQL value
	local deadline=$((SECONDS + $1))
	while [ "$(query "$2")" != "$3" ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.5
	done
}
wait_query 15 "xpile_engine_up{engine=\"$NAME\"}" 1 || xt_fail "prometheus has no engine series: $(query 'up')"

X1MAC=$(ip -n "$E" -o link show x1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
Y0MAC=$(ip -n "$E" -o link show y0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$H1" neigh replace 198.18.28.2 lladdr "$X1MAC" dev x1h
ip -n "$H1" neigh replace 198.18.29.2 lladdr "$Y0MAC" dev y0h
# E answers the closed port with ICMP: it knows h1's MAC, so no ARP reply comes in.
Y0HMAC=$(ip -n "$H1" -o link show y0h | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$E" neigh replace 198.18.29.1 lladdr "$Y0HMAC" dev y0
# The counts before the datagrams, once Prometheus holds them and they stand still.
steady() { # PromQL -> its value once two scrapes agree
	local a b=x
	for _ in $(seq 20); do
		a=$(query "$1")
		[ -n "$a" ] && [ "$a" = "$b" ] && { echo "$a"; return; }
		b=$a
		sleep 1.1
	done
	xt_fail "$1 does not settle: $a"
}
base=$(steady 'sum(xpile_verdict_packets_total{interface="y0"})')
base_def=$(steady 'xpile_verdict_reason_packets_total{interface="y0",reason="default"}')
M=250 P=40
st_udp "$H1" 198.18.28.2 9 $M || xt_fail "sending to x1 failed"
st_udp "$H1" 198.18.29.2 9 $P || xt_fail "sending to y0 failed"
RX="xpile_engine_rx_packets_total{engine=\"$NAME\",port=\"x1\",queue=\"0\"}"
wait_query 15 "$RX" $M || xt_fail "Prometheus stored $RX = $(query "$RX"), want $M"
WP="xpile_engine_worker_packets_total{engine=\"$NAME\",worker=\"0\"}"
wait_query 5 "$WP" $M || xt_fail "Prometheus stored $WP = $(query "$WP"), want $M"
wait_query 5 "xpile_engine_ledger_ok{engine=\"$NAME\",umem=\"0\"}" 1 || xt_fail "ledger not ok in Prometheus"
wait_query 5 "sum(xpile_engine_ledger_frames{engine=\"$NAME\"}) == sum(xpile_engine_umem_frames{engine=\"$NAME\"})" \
	"$(query "sum(xpile_engine_umem_frames{engine=\"$NAME\"})")" || xt_fail "ledger places do not sum to the frames"
want=$((${base%.*} + P)) want_def=$((${base_def%.*} + P))
wait_query 10 'sum(xpile_verdict_packets_total{interface="y0"})' $want ||
	xt_fail "sum over verdicts on y0 = $(query 'sum(xpile_verdict_packets_total{interface="y0"})'), want $want (each packet once)"
wait_query 5 'xpile_verdict_reason_packets_total{interface="y0",reason="default"}' $want_def ||
	xt_fail "reason default = $(query 'xpile_verdict_reason_packets_total{interface="y0",reason="default"}'), want $want_def"
echo "Prometheus stored $RX = $M, worker packets = $M, ledger ok; verdicts on y0 +$P once each (sum), reason default +$P"

eng_stop "$ENG" || xt_fail "engine failed"
xt_wait_for 10 bash -c "[ \"\$(ip netns exec $E curl -s -m 3 http://127.0.0.1:$PORT/metrics | grep -c 'engine=\"$NAME\"')\" = 0 ]" ||
	xt_fail "the stopped engine's series are still served"
ag_stop "$AG" || xt_fail "agent failed"
echo ok
