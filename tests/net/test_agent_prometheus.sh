#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xpile-agent's /metrics scraped by a real Prometheus (Debian's prometheus package),
# started here in the agent's namespace with a 1 s scrape interval:
#  - `promtool check metrics` finds nothing in what the agent serves;
#  - after K UDP packets to a drop rule, the verdict counter Prometheus stored is K;
#  - kill -9 and a new agent: Prometheus scrapes on and sees no counter reset
#    (resets() over the window is 0), and the counter is still K;
#  - /healthz is 200, /readyz 200 while attached and 503 with the reason once the
#    interface is detached through the control socket; an unknown path is 404, a POST
#    405, a request over the size bound is refused, and a stuck client does not stop
#    the loop (the control socket answers while it hangs).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/agent.sh # and netns.sh, steer.sh, engine.sh
ag_require
for t in prometheus promtool curl jq; do
	command -v $t >/dev/null || xt_skip "$t missing: apt-get install prometheus curl jq (tools/setup/install-deps.sh)"
done

eng_pair 198.18.41
ag_dir D
cat >"$D/agent.json" <<EOF
{
  "interfaces": [{"name": "b0", "default": "pass", "rules": ["udp dport 6000 action drop"]}],
  "control": {"path": "$D/ctl.sock"},
  "metrics": {"address": "127.0.0.1:9469"},
  "device_plugin": {"dir": "$D/dp"}
}
EOF
ag_start AG "$B" "$D/agent.json"
inb() { ip netns exec "$B" "$@"; }
http() { inb curl -s -m 3 -o /dev/null -w '%{http_code}' "$@"; }

inb curl -s -m 3 http://127.0.0.1:9469/metrics >"$D/metrics.txt" || xt_fail "GET /metrics failed"
out=$(promtool check metrics <"$D/metrics.txt" 2>&1) || xt_fail "promtool check metrics: $out"
[ -z "$out" ] || xt_fail "promtool check metrics found: $out"
echo "promtool check metrics: nothing found in $(grep -vc '^#' "$D/metrics.txt") samples"

cat >"$D/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: xpile
    static_configs:
      - targets: ['127.0.0.1:9469']
EOF
inb prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/tsdb" \
	--web.listen-address=127.0.0.1:19090 --log.level=warn >"$D/prom.log" 2>&1 &
XT_PIDS+=($!)
xt_wait_for 20 inb curl -sf -m 1 http://127.0.0.1:19090/-/ready ||
	xt_fail "prometheus did not start: $(tail -5 "$D/prom.log")"
query() { # PromQL -> the first sample's value ("" when none)
	inb curl -s -m 3 http://127.0.0.1:19090/api/v1/query --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
wait_query() { # seconds PromQL value
	local deadline=$((SECONDS + $1))
	while [ "$(query "$2")" != "$3" ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.5
	done
}
wait_query 15 'up{job="xpile"}' 1 || xt_fail "prometheus does not scrape the agent: $(query 'up')"

K=300
st_udp "$A" 198.18.41.2 6000 $K || xt_fail "sending UDP failed"
DROP='xpile_verdict_packets_total{job="xpile",interface="b0",action="drop"}'
wait_query 15 "$DROP" $K || xt_fail "Prometheus stored drop=$(query "$DROP"), want $K"
echo "Prometheus stored $DROP = $K after $K packets sent"

# kill -9 and a new agent: the counters live in the pinned maps, so no reset.
kill -9 "$AG"
wait "$AG" 2>/dev/null
ag_start AG "$B" "$D/agent.json"
st_udp "$A" 198.18.41.2 6000 $K || xt_fail "sending UDP failed"
wait_query 15 "$DROP" $((2 * K)) || xt_fail "after a restart Prometheus has drop=$(query "$DROP"), want $((2 * K))"
wait_query 5 "resets(${DROP}[2m])" 0 || xt_fail "Prometheus saw a counter reset: $(query "resets(${DROP}[2m])")"
wait_query 5 "changes(xpile_agent_start_time_seconds{job=\"xpile\"}[2m])" 1 ||
	xt_fail "the restart is not visible in xpile_agent_start_time_seconds"
echo "kill -9 + new agent: drop = $((2 * K)), resets() = 0, start time changed once"

# Health, readiness and the HTTP edge cases.
[ "$(http http://127.0.0.1:9469/healthz)" = 200 ] || xt_fail "/healthz not 200"
[ "$(http http://127.0.0.1:9469/readyz)" = 200 ] || xt_fail "/readyz not 200 while attached"
[ "$(http http://127.0.0.1:9469/nope)" = 404 ] || xt_fail "unknown path not 404"
[ "$(http -X POST -d x=1 http://127.0.0.1:9469/metrics)" = 405 ] || xt_fail "POST not 405"
code=$(http -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" http://127.0.0.1:9469/metrics)
case $code in 4*) ;; *) xt_fail "a 20 KB header got $code, want a 4xx refusal" ;; esac
# A client that sends half a request and hangs: the loop still serves the others.
inb bash -c 'exec 3<>/dev/tcp/127.0.0.1/9469; printf "GET /metr" >&3; sleep 8' &
XT_PIDS+=($!)
sleep 0.5
timeout 3 "$AGENT" ctl --socket "$D/ctl.sock" status >/dev/null || xt_fail "a stuck HTTP client stopped the loop"
[ "$(http http://127.0.0.1:9469/healthz)" = 200 ] || xt_fail "a stuck HTTP client stopped /healthz"
"$AGENT" ctl --socket "$D/ctl.sock" detach b0 >/dev/null || xt_fail "detach refused"
[ "$(http http://127.0.0.1:9469/readyz)" = 503 ] || xt_fail "/readyz not 503 once detached"
why=$(inb curl -s -m 3 http://127.0.0.1:9469/readyz)
[ "$why" = "b0: not served (detached)" ] || xt_fail "/readyz reason: $why"
echo "/healthz 200, /readyz 200 then 503 ($why), 404, 405, big header $code, stuck client harmless"
ag_stop "$AG"
st_no_trace "$B" b0 || xt_fail "left behind"
echo PASS
